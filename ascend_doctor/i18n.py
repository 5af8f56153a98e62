"""The language of the human-readable outputs (console, markdown): English or Chinese (简体中文).

Catalogues are stdlib `gettext` .mo files inside the package (ascend_doctor/locale/<lang>/LC_MESSAGES/
ascend_doctor.mo), compiled from the .po beside them, which are maintained with Babel (`pybabel compile -d
ascend_doctor/locale -D ascend_doctor`); tests/core/test_i18n.py fails when a .mo is stale or an id lacks its zh
entry. msgids are the English text; a template's named fields (`{failed}`) are filled after translation, so both
languages carry the same values.

Messages are built from parts: a field that is itself a message (a phrase such as "named tool_choice", a `join` of
problems, `msg + "…"`) keeps its own template and fields beside it (`name@msg` in the fields, JSON), so it is rendered
in whatever language the report is shown in — nothing is translated while checks run — and a fixed text from data (a
signature's meaning, a matrix advisory) is `known(text)`, looked up by its whole text. English output is always the text
the check wrote; only other languages are re-filled from templates. The command line's help and click's own strings go
through the same catalogue (cli/i18n_click.py).

Which language: `--lang` > ASCEND_DOCTOR_LANG > `lang` in ascend-doctor.toml > the locale (LC_ALL > LC_MESSAGES >
LANG; `zh_*` → zh) > en. JSON, JUnit and SARIF reports are not translated: codes, statuses and English messages are
the machine contract; the JSON report records the `lang` its human outputs used.
"""

from __future__ import annotations

import gettext
import json
import os
import re
from pathlib import Path
from typing import Annotated, Mapping, Optional

from pydantic import SkipValidation

LANGS = ("en", "zh")
DOMAIN = "ascend_doctor"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"

_state: dict[str, Optional[str]] = {"option": None, "config": None}
_catalogues: dict[str, gettext.NullTranslations] = {}


def locale_lang(env: Mapping[str, str]) -> Optional[str]:
    """zh when the first set of LC_ALL, LC_MESSAGES, LANG names a Chinese locale; en for any other set locale."""
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = (env.get(var) or "").strip()
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return None


def normalize(value: Optional[str]) -> Optional[str]:
    """'zh', 'zh_CN', 'zh-CN.UTF-8', 'cn', 'chinese' → zh; 'en…' → en; anything else → None."""
    if not value:
        return None
    v = value.strip().lower().replace("-", "_")
    if v.startswith(("zh", "cn", "chinese")):
        return "zh"
    if v.startswith(("en", "c", "posix")):
        return "en"
    return None


def set_option(lang: Optional[str]) -> None:
    """`--lang` of this process's command (None: not given)."""
    _state["option"] = normalize(lang)


def set_config(lang: Optional[str]) -> None:
    """`lang` of the config file in use (None: not set)."""
    _state["config"] = normalize(lang)


def current(env: Optional[Mapping[str, str]] = None) -> str:
    """The language the human outputs use now."""
    env = os.environ if env is None else env
    return (_state["option"] or normalize(env.get("ASCEND_DOCTOR_LANG")) or _state["config"] or locale_lang(env)
            or "en")


def catalogue(lang: str) -> gettext.NullTranslations:
    if lang not in _catalogues:
        _catalogues[lang] = (gettext.NullTranslations() if lang == "en" else
                             gettext.translation(DOMAIN, localedir=str(LOCALE_DIR), languages=[lang], fallback=True))
    return _catalogues[lang]


def tr(msgid: str, lang: Optional[str] = None, **fields) -> str:
    """`msgid` in the current (or given) language, its `{named}` fields filled in after translation."""
    if not msgid:  # gettext's "" is the catalogue header, never a message
        return msgid
    text = catalogue(lang or current()).gettext(msgid)
    return text.format(**fields) if fields else text


def trn(singular: str, plural: str, n: int, lang: Optional[str] = None, **fields) -> str:
    text = catalogue(lang or current()).ngettext(singular, plural, n)
    return text.format(n=n, **fields)


class Msg(str):
    """An English text that remembers the template and named fields it was made from, so a renderer can show it in
    another language with the same values (`T(...)` makes one; a plain str is looked up whole)."""

    template: str
    fields: dict

    def __add__(self, other):
        """`msg + " more"` and `msg += …` stay messages (a join), so a sentence built in steps still translates."""
        return join("", [self, other]) if isinstance(other, str) else NotImplemented

    def __radd__(self, other):
        return join("", [other, self]) if isinstance(other, str) else NotImplemented


# A model field holding a message: kept as the `Msg` it was given (its template and fields), so a renderer in the same
# process shows it in the user's language; dumped as its English text (the JSON contract).
Localized = Annotated[str, SkipValidation]


def shown(text: Optional[str], lang: Optional[str] = None) -> str:
    """A message or a fixed text in the current language (`localize` of a `Msg`, else the whole text looked up)."""
    if text is None:
        return ""
    return localize(*split(text), lang=lang) or ""


def T(template: str, **fields) -> Msg:
    """A message template with named fields: `T("/dev/shm is {size}, below the {minimum} minimum", size=…, …)`.
    The values are formatted by the caller (units, lists) and are never translated — except a value that is itself
    a `Msg` (a phrase such as "named tool_choice", or a `join` of messages): its template and fields are kept beside
    it as `name@msg` (JSON), so the whole sentence reads in one language in any rendering."""
    values = {k: str(v) for k, v in fields.items()}
    text = template.format(**values)
    if not text.isascii():
        # A value quoting an undecodable byte (a lone surrogate, e.g. 0xff in an interpreter path) is written `\xff`
        # in the sentence: pydantic-core refuses a lone surrogate in a str subclass (`string_unicode`), so a
        # message holding one crashed the probe that made it. The fields keep the value as read.
        from ascend_doctor.text.textsafe import escape_text

        text = template.format(**{k: escape_text(v) for k, v in values.items()})
    m = Msg(text)
    for k, v in fields.items():
        if isinstance(v, Msg):
            values[f"{k}@msg"] = json.dumps([v.template, v.fields], ensure_ascii=False)
    m.template, m.fields = template, values
    return m


def field_text(fields: dict, key: str, lang: str) -> str:
    """Field `key` in `lang`: a field that is itself a message (`key@msg`) rendered in it, else its value."""
    value = fields[key]
    nested = fields.get(f"{key}@msg")
    if nested is None:
        return value
    from ascend_doctor.text.jsonread import loads

    try:
        template, sub = loads(nested)
    except (ValueError, TypeError):  # damaged (e.g. by an edited report): the English value is still right
        return value
    return localize(value, template, sub if isinstance(sub, dict) else {}, lang=lang)


def known(text: str) -> Msg:
    """A fixed text from data (a signature's meaning or fix) as a message: translated by its whole text, so a
    sentence that quotes it reads in one language."""
    m = Msg(text)
    m.template, m.fields = None, {}  # type: ignore[assignment]
    return m


def join(sep: str, items) -> str:
    """`sep.join(items)` that keeps the items' translations when some of them are messages (`T(...)`)."""
    items = list(items)
    if not any(isinstance(i, Msg) for i in items):
        return sep.join(map(str, items))
    escaped = sep.replace("{", "{{").replace("}", "}}")
    return T(escaped.join("{p%d}" % i for i in range(len(items))), **{f"p{i}": it for i, it in enumerate(items)})


def capitalized(text: str) -> str:
    """`text` with its first letter upper-cased, still the same message (the English text of a sentence that
    starts with a joined item; other languages render the template as they write it)."""
    out = text[:1].upper() + text[1:]
    if isinstance(text, Msg):
        m = Msg(out)
        m.template, m.fields = text.template, dict(text.fields)
        return m
    return out


_JOIN = re.compile(r"^(?:\{p\d+\}(?:; or |; then |; |, |\n)?)+$")
_JOIN_SEPARATORS = {"zh": (("; or ", "；或"), ("; then ", "；然后"), ("; ", "；"), (", ", "，"))}


def split(text) -> tuple:
    """(English text, template or None, fields) of a message given as Msg or str."""
    if isinstance(text, Msg):
        return str(text), text.template, dict(text.fields)
    return text, None, {}


def localize(text: Optional[str], template: Optional[str] = None, fields: Optional[dict] = None,
             lang: Optional[str] = None) -> Optional[str]:
    """`text` in the current language: its template translated and filled with its fields, else the whole text
    looked up (doc sections and fixed texts are msgids), else the English text as it is."""
    if text is None:
        return None
    lang = lang or current()
    if lang == "en":  # the English text as the check wrote it (case, post-processing), not re-filled
        return text
    if template:
        fields = fields or {}
        if _JOIN.match(template):  # a join of messages: the separators of the language
            for en_sep, sep in _JOIN_SEPARATORS.get(lang, ()):
                template = template.replace(en_sep, sep)
        values = {k: field_text(fields, k, lang) for k in fields if "@" not in k}
        try:  # always formatted, even with no fields: a template's literal braces are written {{ }}
            return catalogue(lang).gettext(template).format(**values)
        except (KeyError, IndexError, ValueError):  # a catalogue entry with other fields: never lose the message
            return text
    return tr(text, lang=lang)
