"""One answer: the root cause a signature's `check` link points to, and what to run on the machine when the paste
cannot feed that check."""

from __future__ import annotations

from ascend_doctor.core.registry import load_registry
from ascend_doctor.triage.run import triage_text

REG = load_registry(entry_points=False)

# vllm-ascend#4859's error line (its signature names CANN108) with the versions, no npu-smi table.
KERNEL_PASTE = """\
### Your current environment
```text
PyTorch version: 2.5.1
Python version: 3.10.15 (main, Nov 27 2024, 06:51:55) [GCC 11.4.0] (64-bit runtime)
vLLM Version: 0.9.1
vLLM Ascend Version: 0.9.1
CANN:
package_name=Ascend-cann-toolkit
version=8.1.RC1
```
### Describe the bug
```
Traceback (most recent call last):
  File "/vllm-workspace/vllm-ascend/vllm_ascend/worker/model_runner_v1.py", line 120, in _dummy_run
    hidden_states.zero_()
RuntimeError: call aclnnInplaceZero failed, detail:AclNN_Inner_Error(EZ9999): Parse dynamic kernel config fail.
```
"""


def test_a_signature_whose_check_cannot_run_on_the_paste_says_what_to_run_on_the_machine():
    report = triage_text(KERNEL_PASTE, "p.md", REG)
    t = report.triage
    assert t.root_cause == "TRIAGE102"
    kernels = next(f for f in report.findings if f.code == "CANN108")
    assert kernels.status.value == "skip" and "not in the paste" in kernels.message
    first = t.missing[0]
    assert "aclnn-parse-dynamic-kernel-config" in first and "`ascend-doctor check --select CANN108`" in first
    assert "npu_smi" in first  # CANN108 compares the kernels with the chips npu-smi lists


def test_a_signature_whose_check_fails_on_the_paste_makes_that_check_the_cause():
    """The link beats the order of findings: with the kernels error in the paste and CANN106 failing (the driver is
    older than this CANN's), CANN106 is not the cause unless the signature names it — it names CANN108, which cannot
    run here, so the answer stays with the signature; a signature naming a check that fails is that check."""
    from ascend_doctor.triage.answer import rank

    class F:  # the shape rank() reads
        def __init__(self, code, status="fail", severity="error"):
            self.code, self.root_cause = code, False
            self.status = type("S", (), {"value": status})()
            self.severity = type("V", (), {"value": severity})()

    match = {"id": "sig-x", "kind": "error", "also_seen": False, "check": "VLLM102", "line": 7,
             "excerpt": "ModuleNotFoundError: No module named 'triton'", "code": None}
    root, why, _ = rank([F("CANN106", severity="critical"), F("VLLM102")], _NoPaste(), [match])
    assert root == "VLLM102" and "signature sig-x" in why and "line 7" in why
    root, _, _ = rank([F("CANN106", severity="critical")], _NoPaste(), [match])
    assert root == "TRIAGE102"  # the named check did not fail: the known error line is the answer


class _NoPaste:
    tracebacks: list = []
