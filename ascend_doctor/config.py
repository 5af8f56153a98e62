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

from ascend_doctor.errors import InputError
from ascend_doctor.records import Check, Field, Record, ValidationError
from ascend_doctor.report import Severity
from ascend_doctor.tomlread import error_line, read_toml

CONFIG_NAME = "ascend-doctor.toml"


def _reason_not_blank(v: str) -> str:
    if not v.strip():
        raise ValueError("a waiver needs a reason")
    return v


class WaiverRule(Record, extra="forbid"):
    code: str
    reason: Annotated[str, Check(_reason_not_blank)] = Field(min_length=1)
    expires: Optional[date] = None


class Config(Record, extra="forbid"):
    options: dict[str, Any] = Field(default_factory=dict)
    severity: dict[str, Severity] = Field(default_factory=dict)
    waive: list[WaiverRule] = Field(default_factory=list)
    path: Optional[str] = None

    def waiver_for(self, code: str) -> Optional[WaiverRule]:
        for w in self.waive:
            if w.code.upper() == code:
                return w
        return None


def load_config(path: Optional[str], cwd: Optional[Path] = None) -> Config:
    """The config at `path`, or ./ascend-doctor.toml when present, or an empty config."""
    if path is None:
        candidate = (cwd or Path.cwd()) / CONFIG_NAME
        if not candidate.is_file():
            return Config()
        path = str(candidate)
    data = read_toml(path, "config file")
    try:
        cfg = Config.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"config file {path}: {error_line(exc)}") from None
    cfg.path = path
    cfg.severity = {k.upper(): v for k, v in cfg.severity.items()}
    return cfg


def validate_against(cfg: Config, registry) -> None:
    """Unknown codes and attempts to raise a severity are errors naming the file and key."""
    for code, sev in cfg.severity.items():
        c = registry.get(code)
        if c is None:
            raise InputError(f"config file {cfg.path}: severity.{code}: unknown check code")
        if sev.rank > c.severity.rank:
            raise InputError(f"config file {cfg.path}: severity.{code}: may only lower the severity "
                             f"({c.severity.value} -> {sev.value} would raise it)")
    for i, w in enumerate(cfg.waive):
        if registry.get(w.code) is None:
            raise InputError(f"config file {cfg.path}: waive[{i}].code: unknown check code {w.code!r}")
