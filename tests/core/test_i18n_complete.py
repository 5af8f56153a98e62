"""Translation completeness beyond the msgid scan (tests/core/test_i18n.py): the help pages and usage errors of the
command line, messages built from parts (phrases, joins, `+`), and — the test a Chinese-speaking operator cares
about — that no finding of the examples, the recorded real vLLM and the smoke fault servers renders an English
sentence in zh, apart from the quoted output of the tools themselves."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from rich.cells import cell_len

from ascend_doctor import i18n
from ascend_doctor.i18n import T, join, localize
from tests.core.test_i18n import entries
from tests.helpers import REPO

# Fields whose values are other programs' words (a server's error text, an exception, a parser's message): quoted
# verbatim in every language, so they are blanked before looking for English.
VERBATIM = {"msg", "message", "error", "errors", "exc", "err", "strerror", "why_not", "error_message", "json_error",
            "client_error", "worker_error", "label", "markup", "text", "content", "problems_raw", "traceback",
            "config_error", "parse_error", "unreachable_reason", "reasoning_field"}
ENGLISH_RUN = re.compile(r"(?:\b[A-Za-z][a-z]+ ){3,}[A-Za-z][a-z]+\b")
# Other programs' words inside our sentences, each from the recorded output named beside it: quoted, not ours.
QUOTED = (
    "is a required property", "Additional properties are not allowed",  # jsonschema (TOOL105 on vLLM 0.32.0)
    "cannot open shared object file: No such file or directory",  # the dynamic loader (TORCH104, VLLM105)
    "NPU function error", "error code is",  # torch_npu's aclInit error (TORCH104)
    "sensor type=Memory, event state=single bit ECC error count exceeds threshold",  # npu-smi -t health (NPU101)
)


def _english_left(zh: str) -> list[str]:
    for quoted in QUOTED:
        zh = zh.replace(quoted, " ")
    t = re.sub(r"`[^`]*`", " ", zh)
    t = re.sub(r"'[^']*'|\"[^\"]*\"", " ", t)
    t = re.sub(r"\S*[/=_.:<>]\S*", " ", t)
    return ENGLISH_RUN.findall(t)


def _zh(text, template, fields):
    fields = {k: ("X" if k in VERBATIM else v) for k, v in (fields or {}).items()
              if not (k.endswith("@msg") and k[:-4] in VERBATIM)}
    return localize(text, template, fields, lang="zh")


def test_every_help_text_of_the_command_line_has_a_zh_entry():
    from ascend_doctor.cli import cli
    from ascend_doctor.cli.i18n_click import help_msgids

    have = entries()
    ids = help_msgids(cli)
    assert len(ids) > 80
    assert [f"{where}: {msgid[:60]!r}" for msgid, where in ids.items() if not (have.get(msgid) and have[msgid].string)] \
        == []


@pytest.mark.parametrize("columns", [80, 100])
def test_chinese_help_pages_fit_the_terminal(columns):
    env = {**os.environ, "COLUMNS": str(columns), "PYTHONPATH": str(REPO)}
    for argv in ([], ["check"], ["exec"], ["smoke"], ["triage"], ["matrix"], ["matrix", "show"], ["fleet"]):
        r = subprocess.run([sys.executable, "-m", "ascend_doctor", *argv, "--help", "--lang", "zh"], cwd=REPO,
                           capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, (argv, r.stderr)
        assert "用法：" in r.stdout and "选项：" in r.stdout and "显示此帮助信息并退出。" in r.stdout, argv
        wide = [ln for ln in r.stdout.splitlines() if cell_len(ln) > columns and " " in ln.strip()]
        assert wide == [], (argv, wide)
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "--help"], cwd=REPO, capture_output=True, text=True,
                       env={**env, "LANG": "zh_CN.UTF-8", "ASCEND_DOCTOR_LANG": ""}, timeout=120)
    assert "命令：" in r.stdout and "对运行中的 vLLM" in r.stdout  # the locale alone chooses Chinese


def test_usage_errors_speak_chinese_with_the_exit_code_kept():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cases = [(["check", "--bogus", "--lang", "zh"], ["没有选项 '--bogus'", "是否想用 '--verbose'", "（见 `ascend-doctor check --help`）"]),
             (["check", "--format", "xx", "--lang", "zh"], ["'--format' 的值无效：'xx' 不是以下之一："]),
             (["check", "--replay", "/nonexistent", "--lang", "zh"], ["'--replay' 的值无效", "不存在"]),
             (["explain", "NOPE", "--lang", "zh"], ["未知的检查 'NOPE'（见 `ascend-doctor list`）"]),
             (["smoke", "--base-url", "ftp://x", "--lang", "zh"], ["不是带主机名的 http(s) URL"])]
    for argv, texts in cases:
        r = subprocess.run([sys.executable, "-m", "ascend_doctor", *argv], cwd=REPO, capture_output=True, text=True,
                           env=env, timeout=120)
        assert r.returncode == 2, (argv, r.stderr)
        assert r.stderr.startswith("ascend-doctor: 错误: ") and r.stderr.count("\n") == 1, r.stderr
        for text in texts:
            assert text in r.stderr, (argv, r.stderr)
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--bogus"], cwd=REPO, capture_output=True,
                       text=True, env={**env, "ASCEND_DOCTOR_LANG": "en"}, timeout=120)
    assert r.stderr.startswith("ascend-doctor: error: No such option '--bogus'.")


def test_a_message_built_from_parts_reads_in_one_language():
    phrase = T("named tool_choice")
    m = T("{what}: HTTP 200 with an empty `choices` list", what=phrase)
    assert str(m) == "named tool_choice: HTTP 200 with an empty `choices` list"
    assert localize(m, m.template, m.fields, lang="zh") == "指定工具的 tool_choice：HTTP 200，但 `choices` 列表为空"
    joined = join("; ", [T("NPU count unknown"), T("{count} NPU(s) in use", count=2)])
    assert str(joined) == "NPU count unknown; 2 NPU(s) in use"
    assert localize(joined, joined.template, joined.fields, lang="zh") == "NPU 数量未知；使用 2 个 NPU"
    grown = T("NPU count unknown") + "; " + T("{count} NPU(s) in use", count=2)
    assert str(grown) == str(joined) and "使用 2 个 NPU" in localize(grown, grown.template, grown.fields, lang="zh")
    # English is the text the check wrote, whatever the template says.
    assert localize(i18n.capitalized(joined), joined.template, joined.fields, lang="en").startswith("NPU count")


def _findings():
    """(source, finding) for the examples, the recorded real vLLM and every smoke fault server."""
    import json

    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.report import Finding
    from ascend_doctor.smoke.stage import evaluate_smoke, gather
    from tests.smoke.fault_server import FAULTS, RECORDED, ScriptedServer

    for p in sorted((REPO / "examples").glob("*.snapshot.json")):
        r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--replay", str(p), "--format", "json"],
                           cwd=REPO, capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
        for fd in json.loads(r.stdout)["findings"]:
            yield p.name, Finding(**fd)
    reg = load_registry(entry_points=False)
    servers = [("fault", d.name) for d in sorted(FAULTS.iterdir())] + [("recorded", d.name)
                                                                       for d in sorted(RECORDED.iterdir())]
    for kind, name in servers:
        with (ScriptedServer(fault=name) if kind == "fault" else ScriptedServer(recorded=name)) as srv:
            facts = gather(srv.base_url, timeout=10.0)
        for f in evaluate_smoke(reg, facts, RunOptions()):
            yield f"{kind}:{name}", f


def test_no_finding_of_the_examples_and_smoke_servers_reads_english_in_chinese():
    left = {}
    n = 0
    for src, f in _findings():
        n += 1
        for kind, text, template, fields in (("message", f.message, f.message_template, f.message_fields),
                                             ("fix", f.remediation, f.remediation_template, f.remediation_fields)):
            if text:
                zh = _zh(text, template, fields)
                bad = _english_left(zh)
                if bad:
                    left.setdefault(f"{f.code} {kind} ({src})", bad[0])
                if ("{{" in zh or "}}" in zh) and not ("{{" in text or "}}" in text):  # a template's escaped brace
                    left.setdefault(f"{f.code} {kind} ({src}) braces", zh[:120])
    assert n > 300
    assert left == {}


def test_every_signature_and_matrix_text_shown_to_users_has_a_zh_entry():
    """The error-signature catalogue's meanings and fixes (diagnose, TRIAGE102, TORCH104), the matrix's advisory
    titles/fixes and hardware-rule fixes (VLLM103, HW*) and what each parser expects (`parse --list`) are data,
    translated by their whole text: a new or edited entry without its translation fails here."""
    from tests.helpers import shipped

    have = entries()
    texts = {}
    for s in shipped().signatures.signature:
        texts[s.meaning] = f"signature {s.id} meaning"
        texts[s.fix] = f"signature {s.id} fix"
    m = shipped().matrix
    for a in m.advisories:
        texts[a.title], texts[a.fix] = f"advisory {a.id} title", f"advisory {a.id} fix"
    for r in m.serve_rules:
        texts[r.fix] = f"serve_rule {r.id} fix"
    for r in shipped().release_rules:
        texts[r.fix] = f"release_rule {r.id} fix"
    for r in shipped().parser_issues:
        texts[r.says] = f"tool-parser issue {r.id} says"
    from ascend_doctor.parsers import parser_kinds

    for kind, (_, expects) in parser_kinds().items():
        texts[expects] = f"parse --list {kind}"
    assert len(texts) > 300
    assert [where for text, where in texts.items() if not (have.get(text) and have[text].string)] == []


def test_diagnose_explains_a_log_in_chinese():
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "100"}
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "diagnose", "tests/data/signatures/hccl-notify-wait-timeout.log",
                        "--lang", "zh"], cwd=REPO, capture_output=True, text=True, env=env, timeout=120)
    assert "含义：" in r.stdout and "集合通信中 notify 等待超时" in r.stdout
    assert "`hccn_tool -i <dev> -link -g`" in r.stdout  # commands verbatim
    # The translated meaning and fix wrap by cells (the quoted log line and the source paths are printed whole).
    from ascend_doctor.render.wrap import has_wide

    ours = [ln for ln in r.stdout.splitlines() if has_wide(ln) and "行：" not in ln and "来源：" not in ln]
    assert ours and all(cell_len(ln) <= 100 for ln in ours)


def test_a_chinese_smoke_report_of_the_real_vllm_bytes_is_actionable():
    """The bytes vLLM 0.32.0 sent at its default strict level, judged and rendered in Chinese: the operator reads
    what failed and the serve option to add, verbatim."""
    import io

    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.render.console import render_console
    from ascend_doctor.report import HostSummary, Severity, build_report
    from ascend_doctor.smoke.stage import evaluate_smoke, gather
    from tests.smoke.fault_server import ScriptedServer

    with ScriptedServer(recorded="vllm-0.32.0-default") as srv:
        facts = gather(srv.base_url, timeout=10.0)
    findings = evaluate_smoke(load_registry(entry_points=False), facts, RunOptions())
    from datetime import datetime, timezone

    report = build_report(tool_version="t", host=HostSummary(hostname="h"), started_at=datetime.now(timezone.utc),
                          duration_s=1.0, fail_on=Severity.ERROR, findings=findings, command="smoke")
    out = io.StringIO()
    i18n.set_option("zh")
    try:
        render_console(report, file=out)
    finally:
        i18n.set_option(None)
    text = " ".join(ln.strip() for ln in out.getvalue().splitlines())
    assert "未就绪" in text and "TOOL105" in text and "工具调用参数中有" in text
    assert "`--tool-strict-level parameter`" in text and "服务端只约束了工具调用的外层结构" in text


def test_a_chinese_triage_reply_reads_chinese_around_the_quoted_paste():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "triage", "tests/data/triage/set-random-seed-issue.md",
                        "--format", "markdown", "--lang", "zh"], cwd=REPO, capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 1, r.stderr
    out = r.stdout
    assert "**ascend-doctor 分诊**" in out and "### 最可能的原因" in out and "**修复：**" in out
    assert "VLLM101" in out and "matrix pins --vllm-ascend 0.13.0 > pins.txt" in out
    assert "_为什么是它：_ 解释了" in out
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "triage", "tests/data/triage/set-random-seed-issue.md",
                        "--lang", "zh"], cwd=REPO, capture_output=True, text=True, env={**env, "COLUMNS": "100"},
                       timeout=120)
    assert "最可能的原因：VLLM101" in r.stdout and "理由：解释了第 78 行处的错误" in r.stdout
