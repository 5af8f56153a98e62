"""The stack the doctor found, derived once from the facts: the `stack` fact (driver, firmware, CANN, Python, torch,
torch_npu, vLLM … and where the driver version came from).

The report header (`host.stack` in the JSON), the checks that need the driver version (CANN106, VLLM103) and triage
all read this one fact, so "driver version from version.info, else npu-smi" is decided here and nowhere else. It is
a derived fact: it reads other facts, never the host, so a host-less store (triage's paste) derives it too.
"""

from __future__ import annotations

from typing import Any, Optional

from ascend_doctor.core.model import Model
from ascend_doctor.report import Stack
from ascend_doctor.seam.host import VLLM_DISTS

# Started for every run, whatever --select says: the header needs them (each is bounded by --probe-timeout).
STACK_FACTS = ("python", "serving_python", "container", "driver", "cann", "npu_smi", "stack")
# What the `stack` fact itself reads.
STACK_READS = ("python", "serving_python", "container", "driver", "cann", "npu_smi")

_DISTS = {"torch": ("torch",), "torch_npu": ("torch-npu",), "vllm": VLLM_DISTS,
          "vllm_ascend": ("vllm-ascend",), "transformers": ("transformers",), "triton_ascend": ("triton-ascend",)}


def npu_models(smi: Any, always_count: bool = True) -> Optional[str]:
    """'8x 910B3' (or '4x 910B3 + 4x 910B4'); '910B3' for a single model without `always_count`; None when npu-smi
    gave no table."""
    if smi is None or not getattr(smi, "usable", False):
        return None
    counts: dict[str, int] = {}
    for c in smi.info.chips:
        counts[c.name] = counts.get(c.name, 0) + 1
    if len(counts) == 1 and not always_count:
        return next(iter(counts))
    return " + ".join(f"{n}x {name}" for name, n in sorted(counts.items()))


def _fact(facts, name: str) -> Any:
    from ascend_doctor.core.errors import FactUnavailable

    try:
        return facts.try_fact(name)
    except FactUnavailable:  # a crashed probe: its checks report it; the header just does not know
        return None


class StackFact(Model):
    """The `stack` fact: the Stack of the report header, and the evidence for its driver version."""

    stack: Stack
    driver_source: Optional[str] = None  # "file: <driver dir>/version.info" | "cmd: npu-smi info"
    driver_excerpt: Optional[str] = None  # the line read there


def derive_stack(facts) -> StackFact:
    """The stack from whatever facts the run established; None where it did not (or where a paste does not show
    it: ascend_doctor.facts.partial)."""
    from ascend_doctor.facts.partial import if_shown

    s = Stack()
    source = excerpt = None
    py = _fact(facts, "python")
    if py is not None:
        s.python = if_shown(lambda: py.version) or None
        for field, names in _DISTS.items():
            for name in names:
                d = py.listed(name)
                if d is not None:
                    setattr(s, field, d.version)
                    break
    drv = _fact(facts, "driver")
    smi = _fact(facts, "npu_smi")
    if drv is not None and drv.found:
        s.driver = drv.version
        s.firmware = if_shown(lambda: drv.firmware_version)
        where = if_shown(lambda: drv.driver_dir)
        if drv.version and where:
            source, excerpt = f"file: {where}/version.info", f"Version={drv.version}"
    if s.driver is None and smi is not None and smi.info is not None:
        s.driver = smi.info.driver_version or smi.info.tool_version
        if s.driver:
            source, excerpt = f"cmd: {smi.tool} info", f"Version: {s.driver}"
    cann = _fact(facts, "cann")
    if cann is not None and cann.found:
        s.cann = cann.version
        s.cann_path = cann.active.root if cann.active else None
    if smi is not None and smi.usable:
        s.npu_model = npu_models(smi, always_count=False)
        s.npu_count = len(smi.info.chips)
    return StackFact(stack=s, driver_source=source, driver_excerpt=excerpt)


def stack_of(facts) -> Stack:
    """The header's Stack: the run's `stack` fact (derived here when the store cannot give it)."""
    fact = _fact(facts, "stack")
    return fact.stack if fact is not None else derive_stack(facts).stack


def python_of(facts) -> tuple[Optional[str], Optional[str], Optional[str]]:
    """(interpreter judged, how it was chosen, where exactly) for the header: the `python` fact's executable (the
    path the search chose when the interpreter did not answer), and the `serving_python` fact's reason."""
    chosen = _fact(facts, "serving_python")
    py = _fact(facts, "python")
    path = (py.executable if py is not None and py.executable else None) or (chosen.path if chosen else None)
    if chosen is None:
        return path, None, None
    return path, chosen.how, chosen.detail or None


def where_of(facts) -> tuple[Optional[str], Optional[str], Optional[str]]:
    """(where, runtime, image): 'host' or 'container' (None when the container probe could not tell)."""
    ctr = _fact(facts, "container")
    if ctr is None:
        return None, None, None
    if not ctr.in_container:
        return "host", None, None
    return "container", ctr.runtime, ctr.image
