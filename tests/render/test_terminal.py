"""The terminal test (#22): every README command that runs without a live machine, and every example host, rendered
at 80 and 100 columns in English and Chinese, must not print a line wider than the terminal, a line cut with "…", a
traceback, or — in Chinese — a sentence the doctor wrote itself left in English.

The README is read, not copied: a command added to it is rendered here the next day. Placeholders in the README
(issue.md, host.snapshot.json …) are mapped to files of the repository; commands that need a live machine, a server,
a Ray cluster or files the repository does not have are left to their own tests.
"""

from __future__ import annotations

import re
import shlex

import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from ascend_doctor.cli import cli
from tests.helpers import REPO

PLACEHOLDERS = {
    "issue.md": "tests/data/triage/set-random-seed-issue.md",
    "host.snapshot.json": "examples/broken-host.snapshot.json",
    "a.snapshot.json": "examples/healthy-a2.snapshot.json",
    "b.snapshot.json": "examples/vllm-ascend-0.14-on-vllm-0.13.snapshot.json",
    "nodes/*.json": "examples/*.snapshot.json",
    "vllm-serve.log": "tests/data/signatures/hccl-notify-wait-timeout.log",
    "captured.txt": "tests/data/npu_smi/info_a2_8x910B3_tp4_procs.txt",
}
LIVE = ("exec", "smoke", "collect", "sync", "validate", "--ray-address", "--smoke-url", "-o", "--json", "--junit",
        "--sarif", "--fix-script")
COMMAND_NAMES = ("check", "list", "explain", "schema", "parse", "matrix", "diagnose", "triage", "fleet", "diff",
                 "plan")
MACHINE_FORMATS = ("json", "junit", "sarif", "github", "markdown")  # not wrapped for a terminal, by design


def readme_commands() -> list[list[str]]:
    """The runnable `ascend-doctor …` lines of the README and the guide (code blocks and `$ ` samples), comments
    stripped."""
    out, seen = [], set()
    text = "\n".join((REPO / doc).read_text(encoding="utf-8") for doc in ("README.md", "docs/guide.md"))
    for line in text.splitlines():
        m = re.match(r"^(?:\$ )?ascend-doctor (.*)$", line)
        if not m or "…" in line:
            continue
        command = re.sub(r"\s*\[[^\]]*\]", "", m.group(1).split("  #")[0].split(" > ")[0])  # optional parts left out
        try:
            words = shlex.split(command)
        except ValueError:  # a line continued with `\`: the commands that do this need a live machine
            continue
        if not words or words[0] not in COMMAND_NAMES or any(w in LIVE for w in words):
            continue
        if "--format" in words and words[words.index("--format") + 1] in MACHINE_FORMATS or words[0] == "schema":
            continue
        if words[:2] == ["matrix", "pins"]:
            continue  # a pip constraints file (`> pins.txt`), not a terminal view
        words = [PLACEHOLDERS.get(w, w) for w in words]
        if any(w.endswith((".toml", ".tar.gz")) for w in words):
            continue
        if words[0] == "check" and "--replay" not in words:
            words += ["--replay", "examples/broken-host.snapshot.json"]  # "this machine": a recorded one here
        key = tuple(words)
        if key not in seen:
            seen.add(key)
            out.append(words)
    return out


def example_commands() -> list[list[str]]:
    return [["check", "--replay", str(p.relative_to(REPO))] for p in sorted((REPO / "examples").glob("*.snapshot.json"))]


COMMANDS = readme_commands() + example_commands()
_CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef]")
# A sentence of the doctor's own in English: five or more plain English words in a row, outside quotes, backticks,
# paths and the evidence the tools printed (quoted as they said it).
_WORDS = re.compile(r"(?:\b[A-Za-z][a-z]+\b[,;]? ){4,}\b[A-Za-z][a-z]+\b")


# What a tool or a library said, quoted inside a translated sentence (and its wrapped tail): not the doctor's words.
_QUOTED_ERROR = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b.*$|^.*(?:No such file or directory|shared object "
                           r"file|cannot open)\b.*$")


def _own_text(line: str) -> str:
    """The part of a line the doctor wrote: quoted spans, code spans, URLs, paths and quoted errors removed."""
    line = re.sub(r"`[^`]*`|'[^']*'|\"[^\"]*\"|https?://\S+|\S*/\S*", " ", line)
    return _QUOTED_ERROR.sub(" ", line)


def render(words: list[str], columns: int, lang: str) -> tuple[int, str]:
    import os

    from ascend_doctor import i18n

    i18n.set_option(None)  # a previous `--lang zh` must not carry over into this run
    i18n.set_config(None)
    old = os.getcwd()
    os.chdir(REPO)
    try:
        r = CliRunner().invoke(cli, words, env={"COLUMNS": str(columns), "ASCEND_DOCTOR_LANG": lang,
                                                "NO_COLOR": "1", "LANG": "C.UTF-8"})
    finally:
        os.chdir(old)
    return r.exit_code, r.output


def _open_quote(text: str) -> str:
    """The quote character left open at the end of `text` ('' when every quote is closed)."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", " ", text)
    m = re.search(r"(?<![A-Za-z])['\"`]", text)  # an apostrophe inside a word (doesn't) opens nothing
    return m.group(0) if m else ""


def _one_long_word(line: str) -> bool:
    """A line that is one word too long for any line (a mount, a path, a URL) after its indent and at most a label:
    #40 item 13 lets it overflow whole rather than break it, so a copied command runs."""
    words = line.split()
    if not words or len(words) > 3:
        return False
    longest = max(words, key=cell_len)
    return cell_len(line) - cell_len(longest) <= 24


def problems(output: str, columns: int, lang: str) -> list[str]:
    out = []
    quote = ""  # a quotation (what a server or tool said) wrapped onto the next lines
    in_evidence = in_matrix = in_excerpt = False
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if cell_len(line) > columns and not _one_long_word(line):
            out.append(f"{cell_len(line)} cells > {columns}: {line!r}")
        if re.match(r"^(node|节点)\s+\S", line):
            in_matrix = True  # fleet's node x check matrix: its cells abbreviate the findings listed in full below
        elif not line.strip():
            in_matrix = False
        if re.match(r"^\s*(line \d+:|第 \d+ 行：)", line):
            in_excerpt = True  # diagnose quotes the log line (clipped, as the log said it) until its "meaning:"
        elif re.match(r"^\s*(meaning|含义)[:：]", line):
            in_excerpt = False
        indent = len(line) - len(line.lstrip())
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        nxt_indent = len(nxt) - len(nxt.lstrip())
        continued = bool(nxt.strip()) and nxt_indent > 0 and nxt_indent >= indent  # the sentence goes on, wrapped
        if line.rstrip().endswith("…") and not (in_matrix or in_excerpt or continued):
            out.append(f"cut: {line!r}")
        if re.match(r"^\s{0,2}Traceback \(most recent call last\)", line):  # ours; a quoted one is indented
            out.append(f"traceback: {line!r}")
        stripped = line.strip()
        if re.match(r"^(seen|所见)[:：]", stripped):
            in_evidence = True  # the tools' own words follow, indented deeper
            continue
        if in_evidence and (line.startswith(" " * 14) or not stripped) or in_excerpt:
            continue
        in_evidence = False
        text = line
        if quote:  # the wrapped tail of a quotation: the quote's words are not the doctor's
            end = text.find(quote)
            text, quote = ("", quote) if end < 0 else (text[end + 1:], "")
        if not quote:
            quote = _open_quote(text)
            if quote:
                text = text[:text.rfind(quote)]
        if lang == "zh" and _WORDS.search(_own_text(text)) and not stripped.startswith(("$", "#", "-")):
            out.append(f"English in zh: {line!r}")
    return out


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("words", COMMANDS, ids=[" ".join(w)[:60] for w in COMMANDS])
def test_every_readme_command_and_example_fits_the_terminal(words, columns, lang):
    code, output = render(words, columns, lang)
    assert code in (0, 1), output[-2000:]
    assert output.strip(), "printed nothing"
    assert problems(output, columns, lang) == []


def test_the_readme_is_read_and_the_detectors_fire():
    flat = [" ".join(w) for w in COMMANDS]
    assert any(w.startswith("list") for w in flat) and any(w.startswith("triage") for w in flat)
    assert any(w.startswith("matrix show") for w in flat) and len(COMMANDS) >= 15
    assert problems("x" * 81, 80, "en") is not None and problems("a title cut short…", 80, "en")
    assert problems("a sentence of many words " * 4, 80, "en")  # plain text over the width
    assert not problems("            fix:  " + "/usr/local/Ascend/driver/lib64" * 3, 80, "en")  # one long token
    assert problems("Traceback (most recent call last):", 80, "en")
    assert problems("  ✘ 失败 HOST102 npu-smi gave no device table for this host", 80, "zh")
    assert not problems("  ✘ 失败 HOST102 SELinux 处于 enforcing 模式", 80, "zh")
    quoted = "  文本回答（'I cannot look it up right\n  now, but Paris in spring is usual'）"
    assert not problems(quoted, 80, "zh")
    assert problems(quoted + "\n  and then the doctor wrote this sentence", 80, "zh")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("fault", ["dsml_leak", "nul_args", "malformed_sse", "http_500"])
def test_smoke_findings_fit_the_terminal(fault, lang, monkeypatch):
    """A smoke report quotes what the server said — fullwidth DSML markers (`｜`) included — and still fits 80
    columns with every line shown (-v)."""
    import io

    from rich.cells import cell_len as cells

    from ascend_doctor import i18n
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.render.console import render_console
    from ascend_doctor.report import HostSummary, Severity, build_report
    from ascend_doctor.smoke.stage import evaluate_smoke, gather
    from tests.smoke.fault_server import ScriptedServer

    with ScriptedServer(fault) as srv:
        facts = gather(srv.base_url, timeout=10.0)
    findings = evaluate_smoke(load_registry(entry_points=False), facts, RunOptions())
    from datetime import datetime, timezone

    report = build_report(tool_version="t", host=HostSummary(hostname="h"), started_at=datetime.now(timezone.utc),
                          duration_s=1.0, fail_on=Severity.ERROR, findings=findings, command="smoke")
    out = io.StringIO()
    i18n.set_option(lang)
    monkeypatch.setenv("COLUMNS", "80")
    try:
        render_console(report, file=out, verbose=True)
    finally:
        i18n.set_option(None)
    text = out.getvalue()
    assert any(f.status.value == "fail" for f in findings)
    assert [ln for ln in text.splitlines() if cells(ln) > 80] == []
    assert problems(text, 80, lang) == []
