"""SERVE315: the known issues of the installed release's notes (serve/known-issues) against a deployment, each with
its control; and triage taking a matching known issue as its answer."""

from __future__ import annotations

import json

from ascend_doctor.report import Status
from tests.checks.test_serve_checks import facts, on_release, run_check

_on = on_release


def _glm(tmp_path) -> str:
    d = tmp_path / "GLM-5.1-w8a8"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"model_type": "glm_moe_dsa", "architectures": ["GlmMoeDsaForCausalLM"]}))
    return str(d)


def test_a_known_issue_whose_conditions_hold_warns_with_the_notes_words(tmp_path):
    m = _glm(tmp_path)
    cc = '--compilation-config {"cudagraph_mode":"FULL_DECODE_ONLY"}'
    out = run_check("SERVE315", _on(facts(f"vllm serve {m} --enable-expert-parallel {cc}"), "0.21.0rc1"))
    assert out.status == Status.WARN and "KI-0.21.0rc1-f2907e" in out.message
    assert "--enable-expert-parallel" in out.message and "FULL_DECODE_ONLY" in out.message
    assert any("9503" in str(e.excerpt) for e in out.evidence)
    # the notes' workaround: no Expert Parallel with FULL graph mode, or PIECEWISE/eager
    ok = run_check("SERVE315", _on(facts(f"vllm serve {m} --enable-expert-parallel --enforce-eager"), "0.21.0rc1"))
    assert ok.status == Status.PASS
    other = run_check("SERVE315", _on(facts(f"vllm serve {m} --enable-expert-parallel {cc}"), "0.22.1rc1"))
    assert "KI-0.21.0rc1-f2907e" not in other.message  # another release's notes say nothing of it


def test_without_a_command_only_the_stack_rows_are_judged():
    f = _on(facts("vllm serve /nowhere"), "0.18.0")
    del f["serve_cmd"]
    f["python"].machine = "x86_64"
    out = run_check("SERVE315", f)
    assert out.status in (Status.PASS, Status.WARN)
    assert "not judged without" in out.message or "KI-0.18.0-b32088" in out.message


def test_triage_names_the_known_issue_a_paste_shows():
    """A paste written here: collect_env with vllm-ascend 0.11.0, the serve command of Qwen3-Next with EP and an
    NPU OOM. The 0.11.0 notes say Qwen3-Next supports no EP or MTP in that release and OOMs on long input: that is
    the answer, not the OOM signature's generic advice."""
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.triage.run import triage_text
    from tests.helpers import REPO

    text = (REPO / "tests" / "data" / "triage" / "known-issue-qwen3-next.md").read_text()
    report = triage_text(text, "p.md", load_registry(entry_points=False))
    assert report.triage.root_cause == "SERVE315"
    f = next(x for x in report.findings if x.code == "SERVE315")
    assert "KI-0.11.0-ead9cf" in f.message and "Qwen3-Next" in f.message
    newer = triage_text(text.replace("vLLM Ascend Version: 0.11.0", "vLLM Ascend Version: 0.13.0"), "p.md",
                        load_registry(entry_points=False))
    assert newer.triage.root_cause != "SERVE315"


def test_a_version_the_matrix_does_not_record_is_judged_by_the_notes_that_stand_for_it(tmp_path):
    """"The release notes list no known issue for vllm-ascend 0.21.0rc2.dev3" was a pass for a build nobody's notes
    cover. A version the matrix does not record is judged by the nearest older release's notes, a development build
    named after a stale tag by those of the release pairing its vLLM — and the finding says which."""
    from tests.checks.test_serve_support import _dev

    m = _glm(tmp_path)
    cc = '--compilation-config {"cudagraph_mode":"FULL_DECODE_ONLY"}'
    near = run_check("SERVE315", _on(facts(f"vllm serve {m} --enable-expert-parallel {cc}"), "0.21.0rc2.dev3"))
    assert near.status == Status.WARN and "KI-0.21.0rc1-f2907e" in near.message
    assert "0.21.0rc2.dev3 is not a recorded release: judged by the notes of 0.21.0rc1" in near.message
    stale = run_check("SERVE315", _dev(facts(f"vllm serve {m} --enable-expert-parallel {cc}"), "0.19.1rc2.dev9",
                                       "0.21.0"))
    assert stale.status == Status.WARN and "KI-0.21.0rc1-f2907e" in stale.message
    assert "development build: judged by the notes of 0.21.0rc1" in stale.message
    old = run_check("SERVE315", _on(facts(f"vllm serve {m}"), "0.6.0"))
    assert old.status == Status.UNKNOWN and "no older one is recorded" in old.message


def test_triage_takes_a_known_issue_as_the_cause_only_of_a_reported_failure_of_that_release():
    """A known issue is the answer to a failure the paste reports on the release whose notes list it — not to a
    paste without an error (vllm-ascend#1563, a slow 310P, got a crash issue), nor when the notes are another
    release's standing in for a build none covers (0.11.1.dev3 judged by 0.11.0's notes)."""
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.triage.run import triage_text
    from tests.helpers import REPO

    text = (REPO / "tests" / "data" / "triage" / "known-issue-qwen3-next.md").read_text()
    reg = load_registry(entry_points=False)
    assert triage_text(text, "p.md", reg).triage.root_cause == "SERVE315"
    lines = text.splitlines()
    quiet = "\n".join(ln for i, ln in enumerate(lines, 1) if not 26 <= i <= 29)
    report = triage_text(quiet, "p.md", reg)
    assert next(f for f in report.findings if f.code == "SERVE315").status == Status.WARN
    assert report.triage.root_cause != "SERVE315"
    dev = triage_text(text.replace("vLLM Ascend Version: 0.11.0", "vLLM Ascend Version: 0.11.1.dev3"), "p.md", reg)
    f = next(f for f in dev.findings if f.code == "SERVE315")
    assert f.status == Status.WARN and "judged by the notes of 0.11.0" in f.message
    assert dev.triage.root_cause != "SERVE315"


def test_torchair_graph_mode_is_not_acl_graph(tmp_path):
    """vllm-ascend sets ACL graph off when torchair's graph mode is on (platform.py check_and_update_config, 0.9.x
    "Setting level to NO_COMPILATION"): 0.9.1's "aclgraph only works with tensor parallel" does not concern a
    torchair DP/EP command (a false warning found by the h38c holdout), and still concerns the same command eagerless
    without torchair."""
    m = _glm(tmp_path)
    torchair = '--additional-config {"torchair_graph_config":{"enabled":true}}'
    out = run_check("SERVE315", _on(facts(f"vllm serve {m} -dp 4 --enable-expert-parallel {torchair}"), "0.9.1"))
    assert "KI-0.9.1-4855a2" not in out.message
    acl = run_check("SERVE315", _on(facts(f"vllm serve {m} -dp 4 --enable-expert-parallel"), "0.9.1"))
    assert "KI-0.9.1-4855a2" in acl.message


def test_the_release_notes_combinations_of_executor_parallelism_and_decoding():
    """Known issues whose conditions are a combination the command shows, each with its control: Ray + EP on
    0.11.0rc2 (#4123), PP on ray on 0.9.2rc1 (#1751), PP + PCP on 0.23.0, suffix decoding on 0.12.0rc1 (#5010),
    chunked prefill + prefix caching under the Ascend scheduler on 0.10.2rc1 (#2943)."""
    cases = [
        ("--distributed-executor-backend ray --enable-expert-parallel", "--enable-expert-parallel", "0.11.0rc2",
         "KI-0.11.0rc2-12942d"),
        ("--distributed-executor-backend ray --pipeline-parallel-size 2", "--pipeline-parallel-size 2", "0.9.2rc1",
         "KI-0.9.2rc1-2671c6"),
        ("--pipeline-parallel-size 2 --prefill-context-parallel-size 2", "--pipeline-parallel-size 2", "0.23.0",
         "KI-0.23.0-862fc1"),
        ('--speculative-config {"method":"suffix"}', '--speculative-config {"method":"ngram"}', "0.12.0rc1",
         "KI-0.12.0rc1-27568c"),
        ('--enable-chunked-prefill --enable-prefix-caching '
         '--additional-config {"ascend_scheduler_config":{"enabled":true}}',
         '--enable-chunked-prefill --enable-prefix-caching', "0.10.2rc1", "KI-0.10.2rc1-03c984"),
    ]
    for bad, good, release, kid in cases:
        out = run_check("SERVE315", _on(facts(f"vllm serve /models/Qwen3-8B {bad}"), release))
        assert out.status == Status.WARN and kid in out.message, (kid, out.message)
        ok = run_check("SERVE315", _on(facts(f"vllm serve /models/Qwen3-8B {good}"), release))
        assert kid not in ok.message, (kid, ok.message)


def test_fused_mc2_on_a3_prefill_with_dp_and_glm52_dcp_with_sfa_c8(tmp_path):
    """0.18.0's notes: VLLM_ASCEND_ENABLE_FUSED_MC2 with multi-DP on a kv_producer/kv_both node (#8320), a path the
    release takes only on A3; 0.23.0's: GLM-5.2 with DCP and enable_sparse_sfa_c8 (#14011). Each with its
    controls: the decode node, DP 1, an A2 host; no sfa_c8."""
    from ascend_doctor.parsers.npu_smi import NpuChip
    from tests.checks.test_serve_checks import npu

    a3 = npu(8)
    a3.info.chips = [NpuChip(npu_id=i, chip_id=0, name="Ascend910_9391", health="OK", hbm_used_mb=3000,
                             hbm_total_mb=65536) for i in range(8)]
    kv = '--kv-transfer-config {"kv_connector":"MooncakeConnectorV1","kv_role":"%s"}'
    env = {"VLLM_ASCEND_ENABLE_FUSED_MC2": "1"}

    def run(cmd, *, env=env, npus=a3, release="0.18.0"):
        return run_check("SERVE315", _on(facts(f"vllm serve /models/DeepSeek-V3.1 {cmd}", env=env, npus=npus),
                                         release)).message

    assert "KI-0.18.0-1447ed" in run("-dp 2 " + kv % "kv_producer")
    assert "KI-0.18.0-1447ed" in run("-dp 2 " + kv % "kv_both")
    assert "KI-0.18.0-1447ed" not in run("-dp 2 " + kv % "kv_consumer")
    assert "KI-0.18.0-1447ed" not in run(kv % "kv_producer")
    assert "KI-0.18.0-1447ed" not in run("-dp 2 " + kv % "kv_producer", npus=npu(8))  # 910B3: A2
    assert "KI-0.18.0-1447ed" not in run("-dp 2 " + kv % "kv_producer", env={"VLLM_ASCEND_ENABLE_FUSED_MC2": "0"})

    d = tmp_path / "GLM-5.2-W8A8"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"model_type": "glm_moe_dsa", "architectures": ["GlmMoeDsaForCausalLM"]}))
    c8 = '--additional-config {"enable_sparse_sfa_c8":true}'
    out = run_check("SERVE315", _on(facts(f"vllm serve {d} -dcp 2 {c8}"), "0.23.0"))
    assert "KI-0.23.0-7ad20a" in out.message and "enable_sparse_sfa_c8" in out.message
    assert "KI-0.23.0-7ad20a" not in run_check("SERVE315", _on(facts(f"vllm serve {d} -dcp 2"), "0.23.0")).message
