"""SERVE210: the command's tool parser against the vLLM releases known to break streamed tool calls
(matrices/serve/tool-parser-issues.toml)."""

from __future__ import annotations

from ascend_doctor.knowledge.parser_issues import issues_for as _issues_for
from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.checks.test_serve_checks import QWEN, facts, run_check
from tests.helpers import shipped


def issues_for(*args):
    return _issues_for(shipped().parser_issues, *args)


def judge(extra: str, vllm: str = "0.10.1"):
    out = facts(f"vllm serve {QWEN} {extra}".strip(), files=False, model=False)
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm", version=vllm)] if vllm else [])
    return run_check("SERVE210", out)


def test_every_row_is_sourced_and_its_fix_is_outside_its_range():
    from ascend_doctor.text.versions import SpecifierSet

    rows = shipped().parser_issues
    assert len(rows) >= 6 and len({r.id for r in rows}) == len(rows)
    for r in rows:
        assert any(s.startswith("https://github.com/") for s in r.source), r.id
        assert not SpecifierSet(r.vllm).contains(r.fixed_in), r.id


def test_hermes_before_0_19_drops_the_closing_brace_and_names_the_release_with_the_fix():
    f = judge("--enable-auto-tool-choice --tool-call-parser hermes")
    assert f.status == Status.WARN
    assert "vLLM 0.10.1 with --tool-call-parser hermes breaks streamed tool calls" in f.message
    assert "the last `}`" in f.message and "TPI-001" in f.message and "fixed in vLLM 0.19.0" in f.message
    assert "pins vLLM 0.19" in f.remediation or "vLLM 0.19.0 or later" in f.remediation
    assert "without streaming" in f.remediation and "drop" not in f.remediation
    assert any("issues/22885" in e.excerpt for e in f.evidence)


def test_a_fault_that_needs_multi_token_deltas_speaks_only_when_the_command_makes_them():
    quiet = judge("--enable-auto-tool-choice --tool-call-parser qwen3_coder", vllm="0.18.0")
    assert quiet.status == Status.PASS and "TPI-005" in quiet.message and "sets neither" in quiet.message
    f = judge("--enable-auto-tool-choice --tool-call-parser qwen3_coder --stream-interval 4", vllm="0.18.0")
    assert f.status == Status.WARN and "TPI-005, --stream-interval 4" in f.message
    assert "drop --stream-interval 4" in f.remediation
    mtp = judge('--enable-auto-tool-choice --tool-call-parser glm45 --speculative-config {"method":"mtp",'
                '"num_speculative_tokens":1}', vllm="0.17.0")
    assert mtp.status == Status.WARN and "TPI-004, --speculative-config mtp" in mtp.message  # vllm-ascend#7580


def test_a_pair_row_needs_both_parsers():
    assert judge("--enable-auto-tool-choice --tool-call-parser hermes", vllm="0.24.0").status == Status.PASS
    f = judge("--enable-auto-tool-choice --tool-call-parser hermes --reasoning-parser qwen3", vllm="0.24.0")
    assert f.status == Status.WARN and "hermes with --reasoning-parser qwen3" in f.message and "TPI-006" in f.message


def test_what_passes_skips_and_cannot_be_told():
    f = judge("--enable-auto-tool-choice --tool-call-parser hermes", vllm="0.19.0")
    assert f.status == Status.PASS and "no known streaming fault" in f.message
    assert judge("--enable-auto-tool-choice --tool-call-parser mistral", vllm="0.12.0").status == Status.PASS
    assert judge("--max-model-len 4096").status == Status.SKIP
    assert judge("--enable-auto-tool-choice --tool-call-parser hermes", vllm=None).status == Status.UNKNOWN


def test_the_ranges_at_their_bounds():
    assert [r.id for r in issues_for("0.18.1", "hermes", None)] == ["TPI-001"]
    assert issues_for("0.19.0", "hermes", None) == []
    assert [r.id for r in issues_for("0.11.1", "kimi_k2", None)] == ["TPI-002"]
    assert issues_for("0.11.0", "kimi_k2", None) == [] and issues_for("0.20.0", "kimi_k2", None) == []
    assert issues_for("not-a-version", "hermes", None) == []
