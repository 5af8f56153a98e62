"""An error raised inside vllm-ascend that no signature explains: the fixes of the raising function the pasted
release lacks, from the project's history (signatures/release-fixes, ascend_doctor/triage/fixes.py).

The paste is written here in the shape of vllm-ascend#1369's (a worker-prefixed traceback from the DeepSeek model
into the MLA attention's `forward`, on 0.9.1rc1, torchair on), with an exception text no signature holds."""

from __future__ import annotations

from ascend_doctor.core.registry import load_registry
from ascend_doctor.triage.fixes import ascend_frames
from ascend_doctor.triage.paste import read_paste
from ascend_doctor.triage.run import triage_text

REG = load_registry(entry_points=False)
P = "(VllmWorker rank=1 pid=114447) ERROR 06-23 16:27:28 [multiproc_executor.py:527] "


def paste(version: str, error: str = "RuntimeError: tensor shape mismatch in the decode branch") -> str:
    return f"""### Your current environment
vllm                              0.9.1
vllm_ascend                       {version}

vllm serve /models/DeepSeek-V2-Lite --enable-chunked-prefill --additional-config '{{"torchair_graph_config":{{"enabled":true}}}}'

```
{P}Traceback (most recent call last):
{P}  File "/vllm-workspace/vllm-ascend/vllm_ascend/models/deepseek_v2.py", line 753, in forward
{P}    hidden_states = self.model(input_ids, positions, kv_caches,
{P}  File "/vllm-workspace/vllm-ascend/vllm_ascend/attention/mla_v1.py", line 1044, in forward
{P}    decode_hs_or_q_c,
{P}{error}
```
"""


def test_the_frames_inside_vllm_ascend_innermost_first():
    tb = read_paste(paste("0.9.1rc1")).tracebacks[0]
    assert ascend_frames(tb) == [("vllm_ascend/attention/mla_v1.py", "forward"),
                                 ("vllm_ascend/models/deepseek_v2.py", "forward")]


def test_the_raising_functions_later_fixes_are_leads_with_their_release():
    t = triage_text(paste("0.9.1rc1"), "p.md", REG).triage
    assert "changed after" not in t.root_cause_why  # a lead, never the answer (0 of 38 as answers)
    why = " ".join(t.leads)
    assert "forward (vllm_ascend/attention/mla_v1.py), where the error was raised, was changed after vllm-ascend " \
           "0.9.1rc1 by 2 fix(es) — read them against the error, they may be unrelated" in why
    # the fix of the thread, ranked up by the words it shares with the command (chunked prefill, torchair); #1378 is
    # its PR on the v0.9.1-dev branch, which 0.9.1rc2 carries (#1844 brought it to main)
    assert '"[BugFix] Fix a bug of running chunked-prefill with torchair. (#1378) (#1844)" (in vllm-ascend ' \
           '0.9.1rc2)' in why
    assert "`ascend-doctor matrix pins --vllm-ascend" in why


def test_a_release_with_every_fix_or_beyond_the_history_gets_no_fix_named():
    assert triage_text(paste("0.30.0rc2"), "p.md", REG).triage.leads == []
    no_version = paste("0.9.1rc1").replace("vllm_ascend                       0.9.1rc1\n", "")
    assert triage_text(no_version, "p.md", REG).triage.leads == []


def test_a_known_issue_about_another_error_is_not_the_answer():
    """0.9.1rc1's notes list a GatherV3 crash with ACL graphs (KI-0.9.1rc1-a07b8f, SERVE315 warns on this command
    without torchair, whose graph mode turns ACL graphs off); the paste's error is another one: the answer stays
    with the traceback."""
    acl = paste("0.9.1rc1").replace(""" --additional-config '{"torchair_graph_config":{"enabled":true}}'""", "")
    t = triage_text(acl, "p.md", REG).triage
    assert t.root_cause == "TRIAGE102"
    gather = acl.replace("RuntimeError: tensor shape mismatch in the decode branch",
                         "RuntimeError: GatherV3 failed with error code 507015")
    assert triage_text(gather, "p.md", REG).triage.root_cause == "SERVE315"
    torchair = paste("0.9.1rc1", "RuntimeError: GatherV3 failed with error code 507015")
    assert triage_text(torchair, "p.md", REG).triage.root_cause != "SERVE315"
