"""SERVE315 on the release checklists' open bugs (serve/open-bugs): a bug the release manager tracked unsolved when
the release shipped warns where its thread's conditions hold, each with its control; the rows hold to their
sources."""

from __future__ import annotations

import json
import re

from ascend_doctor.report import Status
from ascend_doctor.text.versions import try_parse_version, version_in
from tests.checks.test_serve_checks import facts, on_release, run_check
from tests.helpers import shipped


def _model(tmp_path, folder: str, model_type: str, arch: str) -> str:
    d = tmp_path / folder
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"model_type": model_type, "architectures": [arch]}))
    return str(d)


def test_the_tutorial_command_of_a_tracked_bug_warns_and_its_controls_pass(tmp_path):
    """vllm-ascend#7595: Qwen3.5-27B with MTP, FULL_DECODE_ONLY and async scheduling repeats itself on 0.17.0rc1,
    still unticked in the v0.18.0rc1 checklist (#7634)."""
    m = _model(tmp_path, "Qwen3.5-27B-w8a8-mtp", "qwen3_5", "Qwen3_5ForConditionalGeneration")
    spec = '--speculative-config {"method":"qwen3_5_mtp","num_speculative_tokens":3}'
    cc = '--compilation-config {"cudagraph_mode":"FULL_DECODE_ONLY"}'
    cmd = f"vllm serve {m} -tp 2 --quantization ascend --async-scheduling {spec} {cc}"
    out = run_check("SERVE315", on_release(facts(cmd), "0.17.0rc1"))
    assert out.status == Status.WARN and "vllm-ascend#7595" in out.message
    assert "--async-scheduling" in out.message and "FULL_DECODE_ONLY" in out.message
    assert out.details["open_bugs"] == ["OB-7595"] and out.details["known_issues"] == []
    assert any("issues/7634" in str(e.excerpt) for e in out.evidence)  # the checklist that lists it
    assert run_check("SERVE315", on_release(facts(cmd), "0.18.0rc1")).details.get("open_bugs") == ["OB-7595"]
    # controls: a release after the checklist's, the command without MTP
    later = run_check("SERVE315", on_release(facts(cmd), "0.19.1rc1"))
    assert "7595" not in later.message
    plain = run_check("SERVE315", on_release(facts(f"vllm serve {m} -tp 2 --async-scheduling {cc}"), "0.17.0rc1"))
    assert "7595" not in plain.message


def test_a_bug_seen_on_one_chip_warns_there_only(tmp_path):
    """vllm-ascend#8370 (Gemma 4, FULL_DECODE_ONLY, 910B, 0.18.0rc1) and #17041 (the same on 0.23.0)."""
    m = _model(tmp_path, "gemma-4-31B-it", "gemma4", "Gemma4ForConditionalGeneration")
    cc = '--compilation-config {"cudagraph_mode":"FULL_DECODE_ONLY"}'
    out = run_check("SERVE315", on_release(facts(f"vllm serve {m} -tp 4 {cc}"), "0.23.0"))
    assert out.status == Status.WARN and "vllm-ascend#8370" in out.message and "--enforce-eager" in out.remediation
    eager = run_check("SERVE315", on_release(facts(f"vllm serve {m} -tp 4 --enforce-eager"), "0.23.0"))
    assert "8370" not in eager.message
    fixed = run_check("SERVE315", on_release(facts(f"vllm serve {m} -tp 4 {cc}"), "0.24.0rc1"))
    assert "8370" not in fixed.message


def test_tool_calling_is_a_feature_the_command_names():
    from ascend_doctor.knowledge.serve_features import used
    from tests.helpers import parse_serve

    on = parse_serve("vllm serve m --enable-auto-tool-choice --tool-call-parser hermes".split())
    assert used("Tool Calling", on, {}, None) == (True, "--enable-auto-tool-choice")
    assert used("Tool Calling", parse_serve("vllm serve m --tool-call-parser hermes".split()), {}, None) == (True, None)


def test_every_row_spans_the_releases_its_sources_show_it_on_and_no_more():
    """A checklist says a bug was open, not which release fixed it: each range is the releases `seen` names (first
    to last), each of them a release the matrix records — and its issue is the row's id."""
    k = shipped()
    recorded = {r.version for r in k.matrix.releases}
    rows = k.open_bugs.open_bug
    assert rows
    for row in rows:
        assert row.issue.endswith("/" + row.number), row.id
        seen = [re.match(r"[0-9][0-9a-z.]*", s).group(0) for s in row.seen]
        assert all(v in recorded for v in seen), (row.id, seen)
        assert all(version_in(try_parse_version(v), row.vllm_ascend) for v in seen), (row.id, seen)
        between = sorted((r for r in recorded if version_in(try_parse_version(r), row.vllm_ascend)),
                         key=try_parse_version)
        assert between[0] == min(seen, key=try_parse_version) and between[-1] == max(seen, key=try_parse_version)
        assert row.conditioned and all(c.split()[0].startswith("v") for c in row.checklists)


def test_triage_names_an_open_bug_as_the_answer_to_a_failure_of_its_release():
    """A paste with the tutorial's command on 0.17.0rc1 and a traceback: the open bug is the answer, worded as the
    checklist's (not as a note of the release)."""
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.triage.run import triage_text

    text = ("vLLM Ascend Version: 0.17.0rc1\nvLLM Version: 0.17.0\n"
            "vllm serve /models/Qwen3.5-27B-w8a8-mtp -tp 2 --quantization ascend --async-scheduling "
            "--speculative-config '{\"method\":\"qwen3_5_mtp\",\"num_speculative_tokens\":3}' "
            "--compilation-config '{\"cudagraph_mode\":\"FULL_DECODE_ONLY\"}'\n"
            "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nRuntimeError: boom\n")
    report = triage_text(text, "p.md", load_registry(entry_points=False))
    f = next(x for x in report.findings if x.code == "SERVE315")
    assert f.status.value == "warn" and "vllm-ascend#7595" in f.message
    assert report.triage.root_cause == "SERVE315" and "checklist" in report.triage.root_cause_why
