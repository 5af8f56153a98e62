"""`ascend-doctor.toml`: options, severity lowering, and waivers (reason required, expiry optional).

    [options]
    fail_on = "warning"
    ignore = ["HOST108"]

    [severity]          # may only lower a check's severity
    HOST103 = "warning"

    [[waive]]
    code = "HOST101"
    reason = "SELinux enforced by corporate policy; vllm runs confined with its own module"
    expires = 2027-03-31
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated, Any, Optional

from pydantic import AfterValidator, Field

from ascend_doctor.core.errors import InputError
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T
from ascend_doctor.knowledge.tomlread import read_toml_with_stat, validate
from ascend_doctor.report import Severity
from ascend_doctor.seam.trust import path_untrusted_reason

CONFIG_NAME = "ascend-doctor.toml"


def _reason_not_blank(v: str) -> str:
    if not v.strip():
        raise ValueError("a waiver needs a reason")
    return v


class WaiverRule(Model, extra="forbid"):
    code: str
    reason: Annotated[str, AfterValidator(_reason_not_blank)] = Field(min_length=1)
    expires: Optional[date] = None


class Config(Model, extra="forbid"):
    options: dict[str, Any] = Field(default_factory=dict)
    severity: dict[str, Severity] = Field(default_factory=dict)
    waive: list[WaiverRule] = Field(default_factory=list)
    path: Optional[str] = None

    def waiver_for(self, code: str) -> Optional[WaiverRule]:
        for w in self.waive:
            if w.code.upper() == code:
                return w
        return None


# Options that make the doctor load or run code, and those that weaken the gate (decide fewer checks, or let more
# pass): honoured from an implicitly found config only when it is trusted. An untrusted one may still tighten it.
CODE_OPTIONS = ("checks_dirs", "python")
GATE_OPTIONS = ("ignore", "select", "matrix", "policy", "import_probe")
_GATE_ORDER = ("info", "warning", "error", "critical")


def gate_weakening(data: dict) -> list[str]:
    """The keys of a config's TOML `data` that load code or could let a failing stack pass."""
    opts = data.get("options") or {}
    named = [f"options.{k}" for k in CODE_OPTIONS + GATE_OPTIONS if k in opts]
    fail_on = opts.get("fail_on")
    if isinstance(fail_on, str) and fail_on in _GATE_ORDER and _GATE_ORDER.index(fail_on) > _GATE_ORDER.index("error"):
        named.append("options.fail_on")
    named += [k for k in ("severity", "waive") if data.get(k)]
    return named


def load_config(path: Optional[str], cwd: Optional[Path] = None) -> Config:
    """The config at `path`, or ./ascend-doctor.toml when present, or an empty config.

    A config found in the working directory (not named with --config) may set options that load or run code
    (`checks_dirs`, `python`) or weaken the gate (`ignore`, `select`, a laxer `fail_on`, matrix or policy layers,
    severities, waivers) only when it is trusted (`trust.path_untrusted_reason`, link and target); otherwise the run
    stops with one line saying why and how to trust it. Running the doctor as root in a cloned or shared directory
    must neither run someone else's code nor let them pass a broken stack.
    """
    implicit = path is None
    if implicit:
        candidate = (cwd or Path.cwd()) / CONFIG_NAME
        if not candidate.is_file():
            return Config()
        path = str(candidate)
    data, st = read_toml_with_stat(path, T("config file"))
    if implicit and st is not None:
        named = gate_weakening(data)
        why = path_untrusted_reason(path) if named else None
        if why:
            raise InputError(
                T("config file {path} sets {named}, which load code or weaken the gate, but {why}: pass it "
                  "explicitly with `--config {path}` if you trust it, or fix its owner/mode (`chown $(id -un) {path}; "
                  "chmod go-w {path}`)", path=path, named=', '.join(named), why=why))
    cfg = validate(Config, data, T("config file"), path)
    cfg.path = path
    cfg.severity = {k.upper(): v for k, v in cfg.severity.items()}
    return cfg


def validate_against(cfg: Config, registry) -> None:
    """Unknown codes and attempts to raise a severity are errors naming the file and key."""
    for code, sev in cfg.severity.items():
        c = registry.get(code)
        if c is None:
            note = registry.retired_note(code)
            raise InputError(T("config file {path}: severity.{code}: {why}", path=cfg.path, code=code, why=note)
                             if note else T("config file {path}: severity.{code}: unknown check code", path=cfg.path,
                                            code=code))
        if sev.rank > c.severity.rank:
            raise InputError(T("config file {path}: severity.{code}: may only lower the severity ({value} -> {value2} "
                               "would raise it)", path=cfg.path, code=code,
                               value=c.severity.value, value2=sev.value))
    for i, w in enumerate(cfg.waive):
        if registry.get(w.code) is None and registry.retired_note(w.code):
            raise InputError(T("config file {path}: waive[{i}].code: {why}", path=cfg.path, i=i,
                               why=registry.retired_note(w.code)))
        if registry.get(w.code) is None:
            raise InputError(T("config file {path}: waive[{i}].code: unknown check code {code}", path=cfg.path, i=i,
                               code=repr(w.code)))
