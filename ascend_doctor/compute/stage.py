"""The compute stage on its own (`ascend-doctor smoke --compute`): the stage="compute" checks against this machine,
without the static checks `check --compute` and `exec --compute` run beside them."""

from __future__ import annotations

from ascend_doctor.core.evaluator import evaluate
from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.i18n import T
from ascend_doctor.report import Finding


def compute_findings(registry, host, options: RunOptions) -> tuple[list[Finding], list]:
    """(findings of the selected compute checks, notes: what the children left behind and was killed)."""
    checks = registry.select(options.select, options.ignore, stage="compute")
    facts = FactStore(host, options)
    facts.start_all(sorted({n for c in checks for n in c.needs}))
    findings = evaluate(checks, facts, options)
    reap = getattr(host, "reap_strays", None)
    notes = list(reap() if reap is not None else [])
    ran = facts.try_fact("npu_compute") if "npu_compute" in {n for c in checks for n in c.needs} else None
    if ran is not None and getattr(ran, "ran", False) and ran.cpu_path:
        # Said beside the verdict, not only under -v: an OK here is about the CPU rehearsal, not an NPU (#40 item 6).
        notes.insert(0, T("the compute smoke ran on the CPU path ({backend}): no NPU was tested", backend=ran.backend))
    return findings, notes
