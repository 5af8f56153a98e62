"""The served model of a paste, read from the shipped catalogue when the paste's command names one it holds.

A paste shows the `vllm serve` line but never the model's files, so every check that reads the model (its
architecture, experts, attention, dtype, quantization) was `skip` on a paste — and those are the checks that name
most pre-launch failures of a model on a release or chip (a MoE model on a 300I Duo release without its gating op,
an FP8 checkpoint on a release that cannot load it). When the command names a model the catalogue holds, by its id
(`Qwen/Qwen3-30B-A3B`) or by a directory of exactly that name (`/models/Qwen3-30B-A3B`), the published config.json is
the best evidence there is of what the user serves — but it is not the user's file: a directory of that name may
hold a converted or quantized copy. So:

- the fact shows the config and nothing else (`Shown`): the files, the quantization description, the checkpoint
  size and the chat templates stay "not in the paste";
- its path says where the config came from, so every finding quoting `{path}/config.json` names the catalogue;
- each check that reads the model is judged again without it (`soften`); a finding that comes out the same did not
  rest on the config and is left alone; one that does not says so in its evidence, and a failure becomes a warning:
  the check's reasoning holds for the published checkpoint, and the paste cannot show that the user's is that one.
"""

from __future__ import annotations

import posixpath
from typing import Any, Optional

from ascend_doctor.deploy.catalogue import published_name
from ascend_doctor.facts.partial import Shown
from ascend_doctor.i18n import T
from ascend_doctor.text.textsafe import clipped

# What the catalogue's copy shows of ServeModelFact: the config and where it came from.
SHOWN = ("model", "path", "resolved_from", "why_not", "unrecorded", "config", "config_error")
PREFIX = "(catalogue) "


def _reference(cmd: Any, named: Optional[str]) -> tuple[str, bool]:
    """(the model reference to look up, whether it is the command's own). The command's, unless it shows none —
    no model given (a paste that lost it, not vLLM's default) or a shell variable the paste never sets
    (`"$MODEL_PATH"`) — where the model a labelled line of the paste names (`named`) stands in."""
    from ascend_doctor.parsers.serve_cmdline import is_expansion

    own = (getattr(cmd, "model", None) or "").strip()
    if own and not getattr(cmd, "model_defaulted", False) and not is_expansion(own):
        return own, True
    return (named or "").strip(), False


def catalogue_model(cmd: Any, models: list, named: Optional[str] = None) -> Optional[Any]:
    """The catalogue entry the model reference names (_reference): its id, a path whose last part is a catalogue
    name, or that name followed only by a converted copy's words."""
    from ascend_doctor.deploy.catalogue import find_model

    ref, _ = _reference(cmd, named)
    if not ref:
        return None
    hit = find_model(ref, models)
    if hit is None and "/" in ref:
        hit = find_model(posixpath.basename(ref.rstrip("/")), models)
    if hit is None:
        base = published_name(posixpath.basename(ref.rstrip("/")))
        hit = find_model(base, models) if base != posixpath.basename(ref.rstrip("/")) else None
    return hit


def model_fact(cmd: Any, models: list, named: Optional[str] = None) -> Optional[tuple[Any, Shown]]:
    """(ServeModelFact from the catalogue's config, what it shows), or None when the catalogue lacks the model or its
    copy cannot be read."""
    from ascend_doctor.core.errors import InputError
    from ascend_doctor.deploy.catalogue import catalogue_files
    from ascend_doctor.probes.serve import ServeModelFact

    m = catalogue_model(cmd, models, named)
    if m is None:
        return None
    try:
        files = catalogue_files(m)
    except InputError:
        return None
    ref, from_cmd = _reference(cmd, named)
    base = posixpath.basename(ref.rstrip("/"))
    if base.lower() in (m.id.lower(), m.id.split("/")[-1].lower()):
        came = T("the catalogue's copy of {id}'s config.json", id=m.id)
    else:
        came = T("the catalogue's copy of {id}'s config.json, for {name} (named as a converted copy of it)", id=m.id,
                 name=clipped(base, 120))
    if not from_cmd:
        came += T(" (the command's model is not shown; the paste names {name} on a line of its own)",
                  name=clipped(ref, 120))
    fact = ServeModelFact(model=cmd.model, path=PREFIX + m.id, resolved_from=came,
                          files=["config.json"], config=files.config)
    why = T("the paste shows none of the model's files; only the published config.json of {id} (the catalogue's copy) "
            "stands in for it", id=m.id)
    return fact, Shown(SHOWN, why)


def soften(findings: list, checks: dict, model_id: str, without: list) -> None:
    """Say which findings the catalogue's config made (in place): `without` holds the same checks judged with no
    model at all. A finding that comes out the same without it did not rest on the config and is left as it is; one
    that does not says what it was judged on, and a failure becomes a warning (the user's directory of that name may
    hold another checkpoint)."""
    from ascend_doctor.report import Evidence, Status, finding_level

    bare = {f.code: (f.status, f.message) for f in without}
    for f in findings:
        c = checks.get(f.code)
        if c is None or "serve_model" not in c.needs or f.status not in (Status.PASS, Status.WARN, Status.FAIL):
            continue
        if bare.get(f.code) == (f.status, f.message):
            continue
        f.details = {**f.details, "model_config_from": f"catalogue:{model_id}"}
        if f.status == Status.FAIL:
            f.status = Status.WARN
            f.level = finding_level(f.status, f.severity)
            said = T("judged on the published config.json of {id} (the catalogue's copy): a failure if the paste's "
                     "model is that checkpoint, which the paste cannot show", id=model_id)
        else:
            said = T("the model was read from the published config.json of {id} (the catalogue's copy); the paste "
                     "shows none of its files", id=model_id)
        f.evidence.insert(0, Evidence(source="triage", excerpt=said))


def model_findings(findings: list, checks: dict) -> list:
    """The checks that read the served model and gave a verdict: the ones `soften` asks about."""
    from ascend_doctor.report import Status

    return [checks[f.code] for f in findings if f.code in checks and "serve_model" in checks[f.code].needs
            and f.status in (Status.PASS, Status.WARN, Status.FAIL)]
