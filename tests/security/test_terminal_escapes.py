"""#40 item 7: text from hosts, pastes, servers and model folders is shown, never obeyed by the terminal.

Hostile strings (clear-screen, window title, OSC-8 hyperlink, a one-byte C1 CSI, a bidi override, CR) are planted in
a snapshot's hostname, command output, environment and model id, in a paste and in a model folder; every command is
run as a user runs it (a subprocess, its real stdout/stderr) and every byte it printed or wrote is scanned.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.text import Text

from ascend_doctor.text.textsafe import TerminalStream, dump_json, printable, unprintable

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = ROOT / "examples" / "healthy-a2.snapshot.json"

# One of each kind a terminal obeys.
HOSTILE = ("\x1b]0;owned\x07"  # window title (OSC 0, BEL-terminated)
           "\x1b[2J\x1b[H"  # clear screen, cursor home
           "\x1b]8;;https://evil.invalid/\x1b\\click\x1b]8;;\x1b\\"  # OSC-8 hyperlink
           "\x9b31m"  # C1 CSI (one byte)
           "\u202eevil\u202c"  # right-to-left override
           "\rover")  # carriage return: overwrite the line
# What must not appear in any output: ESC, BEL, C1 controls, bidi overrides, CR (the bytes as UTF-8).
_SGR = re.compile(rb"\x1b\[[0-9;]*m")
FORBIDDEN = [b"\x1b", b"\x07", b"\r", "\x9b".encode(), "\u202e".encode(), "\u202c".encode()]


def _clean(data: bytes, where: str) -> None:
    data = _SGR.sub(b"", data)  # rich's own colour codes (the input holds none: any ESC left came from it)
    seen = [b for b in FORBIDDEN if b in data]
    assert not seen, f"{where} printed {seen!r}: …{data[max(0, data.find(seen[0]) - 80):data.find(seen[0]) + 80]!r}…"


def _run(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASCEND_DOCTOR_", "NO_COLOR"))}
    env.update(COLUMNS="100", FORCE_COLOR="1")  # colour on: rich's own codes must still get through, not the input's
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", *args], cwd=cwd, env=env, input=stdin.encode(),
                       capture_output=True, timeout=120)
    assert r.returncode in (0, 1), (args, r.returncode, r.stderr[-2000:])
    return r


def _hostile_snapshot(path: Path) -> Path:
    snap = json.loads(HEALTHY.read_text())
    snap["system"]["hostname"] = "node" + HOSTILE
    snap["env"]["HOSTILE_VAR"] = HOSTILE
    for cmd in snap["commands"]:
        if cmd["argv"][:2] == ["npu-smi", "info"] and len(cmd["argv"]) == 2:
            cmd["stdout"] = HOSTILE + "\n" + cmd["stdout"]
        if cmd["argv"] == ["getenforce"]:
            cmd["stdout"] = "Enforcing" + HOSTILE + "\n"
    path.write_text(json.dumps(snap))
    return path


def test_printable_escapes_every_kind_and_keeps_text():
    shown = printable("a\tb\nc" + HOSTILE + "\udcff 中文 ✔")
    assert not unprintable(shown)
    assert "\\x1b]0;owned\\x07" in shown and "\\x9b31m" in shown and "\\u202eevil" in shown and "\\x0dover" in shown
    assert "\\xff" in shown  # an undecodable byte, as before
    assert shown.startswith("a\tb\nc") and shown.endswith(" 中文 ✔")


def test_json_documents_escape_what_json_dumps_leaves_raw():
    doc = dump_json({"x": HOSTILE})
    _clean(doc.encode(), "dump_json")
    assert json.loads(doc) == {"x": HOSTILE}  # lossless


def test_terminal_stream_and_rich_console_keep_their_own_colours(monkeypatch):
    from ascend_doctor.render.console import make_console

    monkeypatch.setenv("FORCE_COLOR", "1")  # as on a terminal: rich writes its own SGR codes
    monkeypatch.delenv("NO_COLOR", raising=False)
    raw = io.StringIO()
    term = TerminalStream(raw)
    term.write("seen: " + HOSTILE + "\n")
    con = make_console(term)
    con.print(Text("model " + HOSTILE + "\x1b[8mconcealed", style="red"))
    con.print("[link=https://evil.invalid/]markup link[/link] [bold]bold[/bold]")
    out = raw.getvalue()
    assert "\x1b[31m" in out and "\x1b[1m" in out  # the console's own colours
    assert "\x1b]8" not in out and "\x1b]0" not in out and "\x1b[2J" not in out
    assert "\\x1b]0;owned\\x07" in out and "markup link" in out and "\\x1b[8mconcealed" in out
    rest = out.replace("\x1b[31m", "").replace("\x1b[1m", "").replace("\x1b[0m", "")
    _clean(rest.encode(), "console")


def test_check_and_exec_over_a_hostile_snapshot(tmp_path):
    snap = _hostile_snapshot(tmp_path / "hostile.json")
    outs = {fmt: tmp_path / f"r.{ext}" for fmt, ext in
            (("json", "json"), ("junit", "xml"), ("sarif", "sarif"), ("markdown", "md"), ("console", "txt"),
             ("prometheus", "prom"), ("github", "gh"))}
    for fmt, path in outs.items():
        r = _run("check", "--replay", str(snap), "-v", "--format", fmt, "-o", str(path), cwd=tmp_path)
        _clean(r.stdout + r.stderr, f"check --format {fmt} (stdout/stderr)")
        _clean(path.read_bytes(), f"check --format {fmt} -o {path.name}")
    assert "\\x1b]0;owned" in outs["console"].read_text()  # shown, as text
    r = _run("check", "--replay", str(snap), "-v", "--fix-script", str(tmp_path / "fix.sh"), cwd=tmp_path)
    _clean(r.stdout + r.stderr, "check -v (console)")
    _clean((tmp_path / "fix.sh").read_bytes(), "fix script")
    r = _run("exec", "--replay", str(snap), "--", "vllm", "serve", "Qwen/Qwen3-8B" + HOSTILE,
             "--served-model-name", HOSTILE, cwd=tmp_path)
    _clean(r.stdout + r.stderr, "exec --replay")


def test_diff_of_hostile_snapshots(tmp_path):
    a = _hostile_snapshot(tmp_path / "a.json")
    snap = json.loads(HEALTHY.read_text())
    (tmp_path / "b.json").write_text(json.dumps(snap))
    r = _run("diff", str(a), str(tmp_path / "b.json"), cwd=tmp_path)
    _clean(r.stdout + r.stderr, "diff")
    assert b"\\x1b" in r.stdout + r.stderr  # the difference is shown, escaped


def test_triage_of_a_hostile_paste(tmp_path):
    paste = tmp_path / "paste.txt"
    paste.write_text(f"$ vllm serve /models/{HOSTILE} --tool-call-parser {HOSTILE}\n"
                     f"Traceback (most recent call last):\n  File \"x.py\", line 1\nRuntimeError: {HOSTILE}\n")
    r = _run("triage", str(paste), cwd=tmp_path)
    _clean(r.stdout + r.stderr, "triage")
    r = _run("triage", "-", cwd=tmp_path, stdin=paste.read_text())
    _clean(r.stdout + r.stderr, "triage -")


@pytest.mark.localhost  # plan reads the model folder from this machine
def test_plan_of_a_hostile_model_folder(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({
        "architectures": ["Qwen2ForCausalLM" + HOSTILE], "model_type": "qwen2" + HOSTILE, "hidden_size": 1024,
        "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4, "intermediate_size": 2048,
        "vocab_size": 32000, "max_position_embeddings": 4096, "torch_dtype": "bfloat16", "_name_or_path": HOSTILE}))
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "plan", "--model", str(model)], cwd=tmp_path,
                       capture_output=True, timeout=120, env=dict(os.environ, COLUMNS="100", FORCE_COLOR="1"))
    assert r.returncode in (0, 1, 2), r.stderr[-2000:]
    _clean(r.stdout + r.stderr, "plan")


@pytest.mark.parametrize("argv", [["explain", "HOST1" + HOSTILE], ["check", "--select", "X" + HOSTILE]])
def test_usage_errors_echo_the_argument_inert(tmp_path, argv):
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", *argv], cwd=tmp_path, capture_output=True, timeout=60)
    _clean(r.stdout + r.stderr, " ".join(argv[:1]))
