"""SERVE316: each top-level option's value against the choices the installed vLLM's argparse gives it — the Literal
type of the config field behind the option (`--kv-cache-dtype` is CacheConfig.cache_dtype), read per release by the
one names mechanism (ascend_doctor.knowledge.release_names), less what vllm-ascend's platform widens."""

from __future__ import annotations

import difflib

from ascend_doctor.i18n import T, join
from ascend_doctor.knowledge.release_names import retypes
from ascend_doctor.plugin import check, ev
from ascend_doctor.text.textsafe import clipped
from ascend_doctor.text.versions import parse_version

from ._serve import cmd_or_skip, stack_names


def _choices(names) -> tuple[dict, dict, list]:
    """(option -> (config field, its values), sources, why not known) for the serving vLLM."""
    fields, lits = names.listed("vllm", "engine_arg_field"), names.listed("vllm", "config_literal")
    if fields is None or lits is None:
        return {}, {}, []
    missing = [x.source for x in (fields, lits) if x.names is None]
    if missing:
        return {}, {}, missing
    values: dict = {}
    for n in lits.names:
        key, _, value = n.partition("=")
        values.setdefault(key, []).append(value)
    out = {}
    for n in fields.names:
        option, _, field = n.partition("=")
        if field in values:
            out[option] = (field, sorted(values[field]))
    return out, {x.source: x for x in (fields, lits)}, []


def _widened(names, option: str, field: str):
    """(why vllm-ascend's list is not vLLM's for this option — its platform appends to the choices, or a platform
    patch retypes the field — or None; why what vllm-ascend does is not known, or None; the recorded vllm-ascend
    release that stands in for a build the rows do not record, or None)."""
    out, stand_in = [], None
    for kind, hit in (("option_choice_added", option), ("patched_field", field)):
        listed = names.listed("vllm-ascend", kind)
        if listed is None:
            continue
        if listed.names is None:
            return None, listed.source, None
        if listed.how in ("nearest older", "paired"):
            stand_in = listed
        if hit in listed.names if kind == "option_choice_added" else retypes(listed, field):
            out.append(T("vllm-ascend {version} widens its choices", version=listed.version))
    return (out[0] if out else None), None, stand_in


def _first_widening(names, option: str, field: str):
    """The first recorded vllm-ascend release that widens the option's choices, or None."""
    table = names.tables["vllm-ascend"]
    firsts = [table.first_with("option_choice_added", option), table.first_with("patched_field", field)]
    return min((f for f in firsts if f), key=parse_version, default=None)


@check("SERVE316", "serve-option-choices", severity="error", stage="serve",
       needs=["serve_cmd", "python", "vllm_files"])
def option_choices(ctx):
    """Every option value is one of the choices the installed vLLM gives the option

    What it checks: the value of each `vllm serve` option whose config field is a Literal (`--kv-cache-dtype`,
    `--scheduling-policy`, `--convert`, `--data-parallel-backend`, `--mamba-cache-dtype`, `--max-lora-rank`, …)
    against the choices vLLM's argparse derives from that field's type in the installed release
    (`literal_to_kwargs` in engine/arg_utils.py; a field that also admits any string has no choices). The
    option-to-field map and the Literals are read from the installed files, or for a snapshot or a paste from the
    `serve/names-vllm` rows `matrix sync` reads from each release's sdist. An option whose choices vllm-ascend's
    platform widens (`--quantization ascend`; `--kv-cache-dtype int8` from 0.29.0rc1) is not judged.

    Why it matters: argparse stops `vllm serve` before anything else with `argument --kv-cache-dtype: invalid
    choice: 'int8'`. Deployment commands are copied from tutorials and recipes of other releases: the GLM-5 and
    DeepSeek tutorials of vllm-ascend 0.29.0rc1 on pass `--kv-cache-dtype int8`, a choice no vLLM release offers
    and vllm-ascend adds only from 0.29.0rc1 on.

    How to fix: use one of the choices the finding lists for the installed release, or install the release whose
    tutorial the command comes from.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    names = stack_names(ctx)
    if names.listed("vllm", "config_literal") is None:
        return ctx.skip(T("vLLM is not installed in the serving python: no option choices to judge by"))
    choices, sources, missing = _choices(names)
    if missing:
        return ctx.unknown(T("the choices of the installed vLLM's options are not known: {why}",
                             why="; ".join(missing)))
    given = [(o, v) for o, v in cmd.options.items() if o in choices and isinstance(v, (str, int))
             and not isinstance(v, bool)]
    if not given:
        return ctx.skip(T("no option with a fixed set of choices is given"))
    evidence = [ev(T("command line"), cmd.source(o)) for o, _ in given]
    evidence += [ev(src, f"vLLM {x.version}") for src, x in sources.items()]
    bad, ignored, unseen, good = [], [], [], []
    version = names.listed("vllm", "config_literal")
    for option, value in given:
        field, allowed = choices[option]
        flag, shown = "--" + option.replace("_", "-"), clipped(value)
        widened, why_not, stand_in = _widened(names, option, field)
        if why_not:
            unseen.append(T("{flag} {value}: {why}", flag=flag, value=shown, why=why_not))
            continue
        if widened:
            unseen.append(T("{flag} {value}: {why}", flag=flag, value=shown, why=widened))
            continue
        if str(value) in allowed:
            good.append(f"{flag} {shown}")
            continue
        said = T("{flag} '{value}' is not one of the choices vLLM {version} gives it ({allowed}: the type of {field})",
                 flag=flag, value=shown, version=version.version, allowed=", ".join(allowed), field=field)
        close = difflib.get_close_matches(str(value), allowed, n=2, cutoff=0.6)
        first = _first_widening(names, option, field)
        more = ([T("did you mean {close}?", close=", ".join(close))] if close else []) + (
            [T("vllm-ascend {release} is the first release that widens them", release=first)] if first else [])
        said = join("; ", [said, *more])
        if version.how in ("nearest older", "paired"):
            ignored.append(said + T(" (judged against vLLM {release}, the nearest older recorded release)",
                                    release=version.row_version))
        elif stand_in is not None:  # a development build may widen what its recorded stand-in does not
            ignored.append(said + T(" (vllm-ascend {version}'s patches judged by those of {release})",
                                    version=stand_in.version, release=stand_in.row_version))
        else:
            bad.append(said + T("; vLLM stops with `argument {flag}: invalid choice: '{value}'`", flag=flag,
                                value=shown))
    fix = T("Use one of the choices listed for the installed release, or install the release whose tutorial the "
            "command comes from.")
    if bad:
        return ctx.fail(join("; ", bad + ignored), evidence, remediation=fix, rejected=len(bad))
    if ignored:
        return ctx.warn(join("; ", ignored), evidence, remediation=fix)
    if unseen and not good:
        return ctx.unknown(T("not judged: {parts}", parts=join("; ", unseen)), evidence)
    return ctx.ok(T("every option with fixed choices has one the installed vLLM gives: {good}",
                    good=", ".join(good)) + (T(" (not judged: {parts})", parts=join("; ", unseen)) if unseen else ""),
                  evidence)
