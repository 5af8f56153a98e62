"""Which vllm-ascend release to install for a plan: the newest final release of the matrix for the chip's hardware
family whose vLLM lists the model's architecture and, with `--keep-driver`, whose CANN the installed driver runs.
Every newer release passed over is named with the reason, so "why not the latest?" has an answer."""

from __future__ import annotations

from typing import Callable, Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.i18n import Localized, T, join
from ascend_doctor.text.versions import try_parse_version

# the matrix's hardware-rules.toml HW-310P-011; the -a3 images per tutorial
IMAGE_SUFFIX = {"A3": "-a3", "310P": "-310p"}


class ReleaseChoice(Model):
    vllm_ascend: str
    vllm: str
    cann: str
    torch_npu: Optional[str] = None
    python: str
    image: str
    pins: str
    passed_over: list[Localized] = Field(default_factory=list, description="newer releases not chosen, and why")
    driver_note: Optional[Localized] = Field(None, description="--keep-driver: what the matrix says of the pair")


def _cann(row, family: str) -> str:
    return row.cann_per_hardware.get(family) or row.cann[0]


def _why_not(matrix, row, family: str, architecture: Optional[str], driver: Optional[str],
             parsers: dict[str, str], checkpoint: Optional[Callable[[str], Optional[Localized]]] = None
             ) -> Optional[Localized]:
    if checkpoint is not None:  # a checkpoint the release refuses on this chip (SERVE311's rows: FP8 before 0.27)
        why = checkpoint(row.version)
        if why is not None:
            return why
    for kind, name in parsers.items():  # the serve command's parsers must exist in the release's vLLM
        if matrix.has_parser(row.vllm[0], kind, name) is False:
            return T("vLLM {vllm} has no {option} {name}", vllm=row.vllm[0], option="--" + kind.replace("_", "-"),
                     name=name)
    if architecture:
        archs = matrix.vllm_architectures(row.vllm[0])
        if archs is not None and architecture not in archs:
            return T("vLLM {vllm} does not list {arch}", vllm=row.vllm[0], arch=architecture)
    if driver:
        verdict = matrix.cann_driver_compatible(_cann(row, family), driver)
        if verdict.compatible is False:
            return T("its CANN {cann} does not run on driver {driver}", cann=_cann(row, family), driver=driver)
    return None


def choose_release(matrix, family: str, architecture: Optional[str] = None, version: Optional[str] = None,
                   driver: Optional[str] = None, parsers: Optional[dict[str, str]] = None,
                   checkpoint: Optional[Callable[[str], Optional[Localized]]] = None) -> Optional[ReleaseChoice]:
    """The release row to install (None when the matrix has none for this family); `version` forces one.
    `parsers`: {"tool_parser": name, "reasoning_parser": name} the serve command uses; `checkpoint(version)`: why
    that release cannot serve the checkpoint, or None."""
    if version:
        rows = [r for r in [matrix.vllm_ascend_release(version)] if r is not None]
    else:
        # The one release policy (Matrix.by_preference, as VLLM105's fix): the newest final release that fits, an rc
        # only when no final one does.
        rows = matrix.by_preference(r for r in matrix.releases if family in r.hardware)
    passed: list = []
    for row in rows:
        why = None if version else _why_not(matrix, row, family, architecture, driver, parsers or {}, checkpoint)
        if why is None:
            suffix = IMAGE_SUFFIX.get(family, "")
            note = None
            if driver:
                verdict = matrix.cann_driver_compatible(_cann(row, family), driver)
                note = (T("CANN {cann} runs on driver {driver} (matrix: {why})", cann=_cann(row, family),
                          driver=driver, why=verdict.why) if verdict.compatible else
                        T("no source establishes that CANN {cann} runs on driver {driver}: {why}",
                          cann=_cann(row, family), driver=driver, why=verdict.why))
            return ReleaseChoice(driver_note=note, vllm_ascend=row.version, vllm=row.vllm[0], cann=_cann(row, family),
                                 torch_npu=row.first("torch_npu"), python=row.python,
                                 image=f"quay.io/ascend/vllm-ascend:v{row.version}{suffix}",
                                 pins=f"ascend-doctor matrix pins --vllm-ascend {row.version} > constraints.txt",
                                 passed_over=passed)
        passed.append(T("vllm-ascend {version}: {why}", version=row.version, why=why))
    return None


def why_none(matrix, family: str, architecture: Optional[str] = None, driver: Optional[str] = None,
             parsers: Optional[dict[str, str]] = None,
             checkpoint: Optional[Callable[[str], Optional[Localized]]] = None) -> Localized:
    """Why `choose_release` named none: the family has no release, or each was passed over (the newest reasons)."""
    rows = sorted((r for r in matrix.releases if family in r.hardware), key=lambda r: try_parse_version(r.version),
                  reverse=True)
    if not rows:
        return T("the matrix has no vllm-ascend release for {family}", family=family)
    reasons = [T("vllm-ascend {version}: {why}", version=r.version,
                 why=_why_not(matrix, r, family, architecture, driver, parsers or {}, checkpoint)) for r in rows[:3]]
    return T("no vllm-ascend release of the matrix fits: {reasons}", reasons=join("; ", reasons))
