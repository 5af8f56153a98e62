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
    assert "the paste has no `npu-smi info` table" in first  # CANN108 compares the kernels with npu-smi's chips


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


# A worker's traceback as vLLM logs it: every line behind the process tag and the log prefix (the shape of the
# development set's vllm-ascend#2890 and #1170, written here).
LOGGED = """\
(EngineCore_DP0 pid=71) (Worker_TP1 pid=75) INFO 09-12 17:00:40 [model_runner.py:99] Loading weights
(EngineCore_DP0 pid=71) (Worker_TP1 pid=75) ERROR 09-12 17:00:45 [multiproc_executor.py:585] Traceback (most recent call last):
(EngineCore_DP0 pid=71) (Worker_TP1 pid=75) ERROR 09-12 17:00:45 [multiproc_executor.py:585]   File "/usr/local/lib/python3.11/site-packages/vllm/v1/executor/multiproc_executor.py", line 559, in worker_main
(EngineCore_DP0 pid=71) (Worker_TP1 pid=75) ERROR 09-12 17:00:45 [multiproc_executor.py:585]     worker = WorkerProc(*args, **kwargs)
(EngineCore_DP0 pid=71) (Worker_TP1 pid=75) ERROR 09-12 17:00:45 [multiproc_executor.py:585]   File "/vllm-workspace/vllm-ascend/vllm_ascend/attention/mla_v1.py", line 612, in process_weights_after_loading
(EngineCore_DP0 pid=71) (Worker_TP1 pid=75) ERROR 09-12 17:00:45 [multiproc_executor.py:585]     assert kv_b_proj_weight.shape == (a, b)
(EngineCore_DP0 pid=71) (Worker_TP1 pid=75) ERROR 09-12 17:00:45 [multiproc_executor.py:585] AssertionError: kv_b_proj_weight.shape=torch.Size([8192, 512])
(EngineCore_DP0 pid=71) INFO 09-12 17:00:46 [core.py:90] shutting down
"""


def test_a_traceback_inside_a_log_is_read_with_its_exception_and_innermost_frame():
    from ascend_doctor.triage.paste import read_paste

    tb = read_paste(LOGGED).tracebacks[0]
    assert tb.lines == "2-7" and tb.label.startswith("AssertionError: kv_b_proj_weight.shape")
    assert tb.frame == "/vllm-workspace/vllm-ascend/vllm_ascend/attention/mla_v1.py:612 in process_weights_after_loading"


def test_an_error_nothing_explains_is_answered_with_where_it_was_raised():
    report = triage_text(LOGGED, "p.md", REG)
    t = report.triage
    assert t.root_cause == "TRIAGE102"
    assert "raised inside vllm-ascend" in t.root_cause_why and "mla_v1.py:612" in t.root_cause_why
    # no version in the paste, so no stack check passed: the answer does not say they did (h38s judges, generically)
    assert "the paste shows no versions the stack checks could judge" in t.root_cause_why
    assert "with the stack checks passing" not in t.root_cause_why
    # the paste has its error: TRIAGE103 does not ask for a traceback
    assert not any("the error itself" in m for m in t.missing)


def test_a_wrapper_line_is_not_the_answer_when_the_traceback_names_the_error():
    """torch_npu tags every Python exception ERR99999 ("not the cause"): it was the answer on vllm-ascend#291, #415
    and #625 (development and held-out sets). With a traceback beside it, the traceback's error is."""
    paste = ("[ERROR] 2025-04-23-02:03:54 (PID:99, Device:0, RankID:-1) ERR99999 UNKNOWN applicaiton exception\n"
             "Traceback (most recent call last):\n"
             '  File "/vllm-workspace/vllm-ascend/vllm_ascend/worker/model_runner.py", line 321, in build\n'
             "    positions = list(chain(*self.input_positions))\n"
             "TypeError: 'NoneType' object is not iterable\n")
    t = triage_text(paste, "p.md", REG).triage
    assert t.root_cause == "TRIAGE102" and "'NoneType' object is not iterable" in t.root_cause_why
    assert "raised inside vllm-ascend" in t.root_cause_why


def test_the_traceback_error_comes_before_an_earlier_known_line():
    """vllm-ascend#1760 (development set): a missing audio extra logged at start-up came first in line order, but the
    traceback ended in the ACL-graph config error the thread was about."""
    paste = ("WARNING 07-11 10:00:00 [registry.py:1] Please install vllm[audio] for audio support\n"
             "Traceback (most recent call last):\n"
             '  File "/vllm-workspace/vllm-ascend/vllm_ascend/utils.py", line 290, in update_aclgraph_sizes\n'
             "    num_hidden_layers = vllm_config.model_config.hf_config.num_hidden_layers\n"
             "AttributeError: 'Qwen2_5OmniConfig' object has no attribute 'num_hidden_layers'\n")
    report = triage_text(paste, "p.md", REG)
    t = report.triage
    ids = [m["id"] for m in next(f for f in report.findings if f.code == "TRIAGE102").details["matches"]]
    assert {"vllm-ascend-audio-extra", "mm-config-no-num-hidden-layers-aclgraph"} <= set(ids)
    assert t.root_cause == "TRIAGE102" and "mm-config-no-num-hidden-layers-aclgraph" in t.root_cause_why
    assert "lines 2-5" in t.root_cause_why


def test_the_console_answer_shows_what_proves_the_cause():
    """#39 item 4: the answer leads with the cause and the lines that prove it (the finding's evidence), before the
    why and the fix."""
    import subprocess
    import sys

    from tests.helpers import DATA, REPO

    out = subprocess.run([sys.executable, "-m", "ascend_doctor", "triage",
                          str(DATA / "triage" / "set-random-seed-issue.md")], capture_output=True, text=True,
                         cwd=REPO, timeout=120).stdout
    answer = out[out.index("most likely cause: VLLM101"):out.index("also:")]
    assert "seen: distribution: vllm-ascend → 0.14.0rc1" in answer
    assert "seen: distribution: vllm → 0.13.0+empty" in answer
    assert answer.index("seen:") < answer.index("why:") < answer.index("fix:")


def test_an_unexplained_vllm_ascend_error_names_the_release_to_try():
    """The paste states an older vllm-ascend than the newest the matrix knows: the answer names that release and the
    command that prints its stack (the bugs of a release are fixed in later ones: docs/research/triage-2026-12)."""
    from ascend_doctor.knowledge.door import Knowledge

    newest = Knowledge().matrix.newest_known("vllm-ascend")
    t = triage_text("vLLM Ascend Version: 0.9.1\n" + LOGGED, "p.md", REG).triage
    assert "the paste runs vllm-ascend 0.9.1" in t.root_cause_why
    assert f"`ascend-doctor matrix pins --vllm-ascend {newest}`" in t.root_cause_why
    t = triage_text(LOGGED, "p.md", REG).triage  # no version in the paste: no release named
    assert "the paste runs" not in t.root_cause_why


def test_a_pasted_refusal_of_an_option_value_is_answered_by_the_check_that_lists_the_choices():
    """vLLM's own refusal at start — argparse's `invalid choice` for an option whose choices come from a Literal
    field, pydantic's `validation error for KVTransferConfig` for a JSON option — is explained by SERVE316 /
    SERVE313 failing on the same command and versions (the signatures name those checks)."""
    head = "```\n$ pip list | grep vllm\nvllm                  0.13.0\nvllm-ascend           0.13.0\n"
    argparse = (head + "$ vllm serve /models/GLM-5-w8a8 --kv-cache-dtype int8 --quantization ascend\n"
                "vllm serve: error: argument --kv-cache-dtype: invalid choice: 'int8' (choose from 'auto', "
                "'bfloat16', 'fp8', 'fp8_ds_mla', 'fp8_e4m3', 'fp8_e5m2', 'fp8_inc')\n```\n")
    pydantic = (head + "$ vllm serve /models/Qwen3-8B --kv-transfer-config "
                "'{\"kv_connector\":\"MooncakeConnectorV1\",\"kv_role\":\"kv_both_\"}'\n"
                "vllm serve: error: argument --kv-transfer-config: 1 validation error for KVTransferConfig\n"
                "kv_role\n  Input should be 'kv_producer', 'kv_both' or 'kv_consumer' [type=literal_error]\n```\n")
    reg = load_registry(entry_points=False)
    for text, code, words in ((argparse, "SERVE316", "--kv-cache-dtype 'int8'"),
                              (pydantic, "SERVE313", "kv_role 'kv_both_'")):
        t = triage_text(text, "p.md", reg).triage
        assert t.root_cause == code and "explains the error at line" in t.root_cause_why, (code, t.root_cause_why)
        f = next(x for x in triage_text(text, "p.md", reg).findings if x.code == code)
        assert f.status.value == "fail" and words in f.message
