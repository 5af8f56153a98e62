"""Secret redaction for snapshots, reports, evidence and every other output. One place knows what a secret looks like.

Three layers, all applied by `redact_text`:
- values this run knows to be secrets (`register_secret`: the smoke's API key, the values of secret-named environment
  variables), masked wherever they appear, whatever their shape — a server that echoes the key back leaks nothing;
- well-known token shapes (`sk-…`, `hf_…`, `ghp_…`) and URL credentials (`scheme://user:pass@host`, the password may
  hold `/` and `@`);
- `name: value` / `name=value` forms in free text: Authorization headers, api keys, passwords, secrets, tokens (not
  applied to Python source, where they are type annotations).
The output writers run every string of what they write through it (`redact_tree`), so a new output path cannot forget.

Token shapes come from a maintained detector, gitleaks' rule set (`secretshapes`), not from a list kept here: the
few shapes below predate it and are broader than gitleaks' (`sk-` keys of any length, as vLLM's --api-key takes).
"""

from __future__ import annotations

import re
import threading
from typing import Any, Iterable, Optional

REDACTED = "<redacted>"

# Env var names whose values are secrets (issue #2: *KEY*, *TOKEN*, *SECRET*, *PASSWORD*, *CREDENTIAL*).
# `PASS` only as a whole word of the name (MY_PASS, DB_PASS_2): inside a word it is PASSTHROUGH or BYPASS.
# `PWD` only after an underscore (MYSQL_PWD, DB_PWD): alone, and in OLDPWD, it is the working directory.
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|(?:^|_)PASS(?:PHRASE)?(?:$|_|\d)|"
                          r"_PWD(?:$|_)", re.IGNORECASE)
# ...but not these, which carry no secret and which checks need to see.
_NOT_SECRET = {"KEYTIMEOUT", "HCCL_CONNECT_TIMEOUT", "SSH_AUTH_SOCK_DIR", "TOKENIZERS_PARALLELISM"}

# A value shorter than this is not masked by value: masking every "1" or "yes" would destroy the report, and a
# secret that short is not a secret anyway.
MIN_SECRET_LEN = 6

# A value runs to a space, quote or separator; a backslash belongs to it unless it escapes the closing quote.
_VALUE = r"(?:[^\s'\",;<>\\]|\\(?![\\\"']))+"
# A secret's value may hold `,` and `;` (`password=a,b`): it runs to a space or a quote...
_SECRET_VALUE = r"(?:[^\s'\"<>\\]|\\(?![\\\"'nrt]))+"  # ...or an escaped newline ends it, as `\b` starts one
# Where a token starts: a word boundary, or right after an escaped newline or tab inside a dumped string
# (`"…\\ntoken=…"` in a recorded config.json, where `\b` sees the `n` run into the word).
_B = r"(?:\b|(?<=\\[nrt]))"
# The quote around a name or value, as written or escaped once or twice (a JSON dump quoted inside another string).
_QUOTE = r"(?:\\{0,3}[\"'])?"
_PATTERNS_FREE_TEXT = [
    # Authorization / API-key headers in any text (curl -H, logged requests).
    (re.compile(r"(?i)(authorization\s*[:=]\s*)(bearer\s+|basic\s+|token\s+)?([^\s'\",]+)"), r"\1\2" + REDACTED),
    # `api_key=X`, `x-api-key: X`, `"api_key": "X"` (a JSON or dict dump inside a traceback line, escaped or not).
    (re.compile(r"(?i)((?:x-)?api[-_]?keys?" + _QUOTE + r"\s*[:=]\s*" + _QUOTE + ")(" + _VALUE + ")"),
     r"\1" + REDACTED),
    # A bare `Basic <base64>` credential (a logged request line without its header name).
    (re.compile(_B + r"(Basic\s+)([A-Za-z0-9+/]{12,}={0,2})"), r"\1" + REDACTED),
    # password=…, passwd: …, secret=…, token=…, client_secret: "…" in logs, stderr and config text — but not a type
    # annotation or default (`hf_token: Optional[str] = None`): those name no secret, and readers of vLLM's source
    # need them intact.
    # The name may carry a prefix (`client_secret`, `db-password`): the keyword starts the match after `_`/`-` or at a
    # word boundary — no repeated prefix group, which made the search quadratic in the line length (#23).
    # A path component is not a name (`--python /etc/passwd: not executable` keeps its words, #22).
    (re.compile(r"(?i)(?<![/\\.])(?:(?<=[_-])|" + _B + r")"
                r"((?:password|passwd|pwd|pass|secret|token|passphrase|access[_-]?key)" + _QUOTE + r"\s*[:=]\s*"
                + _QUOTE + r")(?!(?:Optional|Union|str|bool|int|float|list|dict|tuple|set|"
                r"None|Literal|Any|Callable|Annotated|field)\b)(" + _SECRET_VALUE + ")"), r"\1" + REDACTED),
]
_PATTERNS_ANY_TEXT = [
    # Well-known token shapes.
    (re.compile(_B + r"sk-[A-Za-z0-9_\-]{8,}"), REDACTED),
    (re.compile(_B + r"hf_[A-Za-z0-9]{16,}"), REDACTED),
    (re.compile(_B + r"gh[pousr]_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(_B + r"github_pat_[A-Za-z0-9_]{20,}"), REDACTED),
    (re.compile(_B + r"glpat-[A-Za-z0-9_\-]{20,}"), REDACTED),
    (re.compile(_B + r"xox[abprs]-[A-Za-z0-9\-]{10,}"), REDACTED),
    (re.compile(_B + r"(?:AKIA|ASIA)[0-9A-Z]{16}\b"), REDACTED),
    # A JSON Web Token: three base64url parts, the first two JSON objects (`{"` is `eyJ`), whatever name holds it.
    (re.compile(_B + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), REDACTED),
    # `Bearer X` without a header name (a paste of a curl line, a proxy log): any token of 8 or more characters.
    (re.compile(_B + r"([Bb]earer\s+)([A-Za-z0-9._~+/\-]{8,}=*)"), r"\1" + REDACTED),
    # URL credentials: scheme://user:password@host — the password runs to the first `@` that is followed by a whole
    # host (up to `/`, `?`, `#`, a space or the end), so one holding `/` or `@` (redis://cache:Re/dis@Pass9@host:6379)
    # is masked whole while an `@` later in the path (…@registry.npmjs.org/@scope) is not taken for it.
    # Each part is bounded (scheme 32, user 256, password 512 characters): unbounded parts made every `x://u:`
    # start scan to the end of the line, quadratic in its length (#23).
    (re.compile(r"(?i)" + _B + r"([a-z][a-z0-9+.\-]{0,31}://[^\s:/@'\"<>]{0,256}:)([^\s'\"<>]{1,512}?)(@[^\s@/?#'\"<>]+)"
                r"(?=[/?#\s'\"<>]|$)"),
     r"\1" + REDACTED + r"\3"),
]
_PATTERNS = _PATTERNS_FREE_TEXT + _PATTERNS_ANY_TEXT
# Every pattern above needs one of these words in the text: one search decides whether the patterns run at all (most
# text — versions, paths, device tables, check messages — has none of them, and a report holds thousands of strings).
_TRIGGER = re.compile(r"(?i)auth|api|sk-|hf_|gh[pousr]_|github_pat_|glpat-|xox|akia|asia|eyj|bearer|basic|://|pass|pwd|"
                      r"secret|token|access|cred")

def _shapes():
    from ascend_doctor.text.secretshapes import shapes

    return shapes()


_known_lock = threading.Lock()
_known: set[str] = set()
_known_re: "re.Pattern[str] | None" = None


def register_secret(value: object) -> None:
    """Remember `value` as a secret of this run: every later `redact_text` masks it wherever it appears."""
    global _known_re
    if not isinstance(value, str):
        return
    value = value.strip()
    if len(value) < MIN_SECRET_LEN or value == REDACTED:
        return
    with _known_lock:
        if value in _known:
            return
        _known.add(value)
        # Longest first, so a secret that contains another is masked whole.
        _known_re = re.compile("|".join(re.escape(v) for v in sorted(_known, key=len, reverse=True)))


def register_env_secrets(env: dict[str, str]) -> None:
    """Register the values of secret-named variables of `env` (HF_TOKEN, OPENAI_API_KEY, DB_PASSWORD …)."""
    for k, v in env.items():
        if is_secret_name(k):
            register_secret(v)


# Command-line options whose value is a secret (`--api-key X`, `--hf-token=X`), as whole words of the option's dest:
# `--tokenizer-mode` is not one.
# Plural and run-together spellings count (`--api-keys`, `--apikey`, `--hf_tokens`: an argparse prefix or a typo
# still carries the secret), but a bare `tokens` is a count (`--max-tokens`) and `token_ids` a format.
_SECRET_DEST = re.compile(r"(^|_)(api_?keys?|(?:hf|auth|access|api|bearer|refresh|id|session)_?tokens?|"
                          r"token(?!_ids?(?:$|_))|secrets?|passwords?|passwd|pass|credentials?)($|_)")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


# An option that names where a secret is (`--api-key-env NAME`, `--hf-token-path FILE`) holds no secret itself.
_NAMES_A_PLACE = re.compile(r"_(env|file|path|var|name|dir)$")


def is_secret_option(flag: str) -> bool:
    """True for `--api-key`, `--hf-token`, `--openai_api_key`; False for `--tokenizer-mode`, `--api-key-env`."""
    dest = flag.lstrip("-").replace("-", "_").lower()
    return bool(_SECRET_DEST.search(dest)) and not _NAMES_A_PLACE.search(dest)


def is_secret_name(name: str) -> bool:
    """True for an env var (or config key) name that holds a secret."""
    return name.upper() not in _NOT_SECRET and bool(_SECRET_NAME.search(name))


def redact_values(text: str) -> str:
    """Mask known secret values, token shapes and URL credentials, but not `name: value` forms: safe on structured
    text (a JSON body, Python source) whose syntax must survive — and needed before such text is ever cut short, since
    a secret cut in two no longer matches what masks it."""
    return redact_text(text, code=True)


# `--api-key X` / `--hf-token=X` inside free text (a `ps` listing, a logged command line): the option decides, by the
# same rule as argv (`is_secret_option`), so `--max-tokens 512` stays.
# A quoted value is taken whole (`--api-key 'a b'`, and `\'a b\'` as a repr() escapes it).
_OPTION_VALUE = re.compile(r"(?<![\w-])(--[A-Za-z][\w-]{0,63})([= ]+)"
                           r"(\\{0,3}'[^'\n]{0,4096}'|\\{0,3}\"[^\"\n]{0,4096}\"|[^\s'\"]+)")


def _quotes(value: str) -> Optional[tuple[str, str]]:
    """(opening, closing) quote of a quoted value, each with the backslashes that escape it (`\\'a b\\'` as repr()
    writes it), or None. String scans, linear: the regex it replaces backtracked quadratically on a value of
    thousands of backslashes (tests/security/test_regex_timing.py)."""
    i = 0
    while i < len(value) and value[i] == "\\":
        i += 1
    if i >= len(value) or value[i] not in "'\"" or len(value) < i + 2 or value[-1] not in "'\"":
        return None
    k = len(value) - 1
    while k > i + 1 and value[k - 1] == "\\":
        k -= 1
    return value[:i + 1], value[k:]


def _mask_options(text: str) -> str:
    """`text` with the values of secret options masked. After any other option the scan goes on right after the
    option's name, so an option inside another's quoted value (`--served-model-name '… --api-key K'`) is still seen."""
    out, pos = [], 0
    while True:
        m = _OPTION_VALUE.search(text, pos)
        if m is None:
            break
        value = m.group(3)
        if is_secret_option(m.group(1)) and not value.startswith("-"):
            q = _quotes(value)
            out.append(text[pos:m.start(3)] + (q[0] + REDACTED + q[1] if q else REDACTED))
            pos = m.end(3)
        else:
            out.append(text[pos:m.end(1)])
            pos = m.end(1)
    out.append(text[pos:])
    return "".join(out)


def redact_text(text: str, code: bool = False) -> str:
    """Mask secrets that appear inline in free text.

    `code=True` (Python source read from installed packages) masks only known values, token shapes (gitleaks' too,
    but its generic assignment rule) and URL credentials: the `name: value` patterns would rewrite type annotations
    such as `VLLM_API_KEY: str | None` and break parsing.
    """
    if not text or not isinstance(text, str):
        return text
    known = _known_re
    if known is not None:
        text = known.sub(REDACTED, text)
    if _TRIGGER.search(text):
        for pat, repl in (_PATTERNS_ANY_TEXT if code else _PATTERNS):
            text = pat.sub(repl, text)
        if not code:
            text = _mask_options(text)
    # gitleaks' rules (secretshapes): providers' keys, private keys, webhooks — and, but in source code, its generic
    # `name = high-entropy value` rule.
    return _shapes().mask(text, REDACTED, generic=not code)


def redact_tree(data: Any) -> Any:
    """A copy of a JSON-like tree (dicts, lists, strings) with every string redacted; a string under a secret-named
    key (`HF_TOKEN`, `api_key`, `password`) is masked whole."""
    if isinstance(data, str):
        return redact_text(data)
    if isinstance(data, dict):  # keys too: a path can hold a token (/models/hf_…/config.json)
        return {(redact_text(k) if isinstance(k, str) else k):
                (REDACTED if isinstance(v, str) and v and is_secret_key(k) else redact_tree(v))
                for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [redact_tree(v) for v in data]
    return data


def is_secret_key(key: object) -> bool:
    """A mapping key whose value is a secret: an environment-style name (`HF_TOKEN`) or an option-style one
    (`api_key`, `password`); field names such as `tokenizer_mode` or `max_tokens` are not."""
    if not isinstance(key, str):
        return False
    if key.isupper():
        return is_secret_name(key)
    return bool(_SECRET_DEST.search(key.replace("-", "_").lower()))


def redact_env(env: dict[str, str]) -> dict[str, str]:
    """Copy of `env` with secret-named values masked (and inline secrets in the others)."""
    return {k: (REDACTED if is_secret_name(k) and v else redact_text(v)) for k, v in env.items()}


def redact_argv(argv: Iterable[str]) -> list[str]:
    """Mask values of secret options (`--api-key X Y`, `--api-key=X`) and secret `NAME=value` env prefixes.

    A secret option's values run up to the next option: vLLM's `--api-key` accepts several keys.
    """
    out: list[str] = []
    mask = False
    for arg in argv:
        if mask:
            if not arg.startswith("-"):
                out.append(REDACTED)
                continue
            mask = False
        if arg.startswith("-") and "=" in arg:
            flag = arg.split("=", 1)[0]
            out.append(f"{flag}={REDACTED}" if is_secret_option(flag) else redact_text(arg))
        elif arg.startswith("-") and is_secret_option(arg):
            out.append(arg)
            mask = True
        elif _ENV_ASSIGN.match(arg) and is_secret_name(arg.split("=", 1)[0]):
            out.append(arg.split("=", 1)[0] + "=" + REDACTED)
        else:
            out.append(redact_text(arg))
    return out
