"""Translations: every message id the code uses has a zh entry with the same named fields, the shipped .mo is the
compiled .po, the language is chosen as documented, and Chinese text keeps the console inside its width."""

from __future__ import annotations

import gettext
import os
import subprocess
import sys
from string import Formatter

import pytest
from babel.messages.pofile import read_po
from rich.cells import cell_len

from ascend_doctor import i18n
from ascend_doctor.core.registry import load_registry
from tests.helpers import REPO

PO = REPO / "ascend_doctor" / "locale" / "zh" / "LC_MESSAGES" / "ascend_doctor.po"
MO = PO.with_suffix(".mo")


def catalog():
    with open(PO, "rb") as fh:
        return read_po(fh)


def fields(text: str) -> set:
    return {name for _, name, _, _ in Formatter().parse(text) if name}


def used_msgids() -> set:
    """Literal msgids of every tr(...)/trn(...)/T(...) call in the package and the checks (read with `ast`, so
    implicitly concatenated literals count as the one string Python makes of them)."""
    import ast

    out = set()
    for path in [*(REPO / "ascend_doctor").rglob("*.py"), *(REPO / "checks").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("tr", "trn", "T") \
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                out.add(node.args[0].value)
    return out


def entries() -> dict:
    return {m.id if isinstance(m.id, str) else m.id[0]: m for m in catalog() if m.id}


def test_every_check_title_has_a_chinese_title():
    have = entries()
    missing = [c.code for c in load_registry(entry_points=False).all() if not (have.get(c.title) and have[c.title].string)]
    assert missing == [], f"no zh title for {missing}: add them to {PO.name} and run pybabel compile"


def test_every_message_id_in_the_code_has_a_zh_entry_with_the_same_fields():
    have = entries()
    ids = used_msgids()
    assert len(ids) >= 25  # the console chrome; titles are looked up by the title test
    problems = []
    for msgid in sorted(ids):
        m = have.get(msgid)
        if m is None or not m.string or (isinstance(m.string, tuple) and not all(m.string)):
            problems.append(f"missing: {msgid!r}")
            continue
        want = fields(msgid) | (fields(m.id[1]) if isinstance(m.id, tuple) else set())
        for s in (m.string if isinstance(m.string, tuple) else (m.string,)):
            if fields(s) != want:
                problems.append(f"fields differ for {msgid!r}: {sorted(fields(s))} vs {sorted(want)}")
    assert problems == []


def test_the_shipped_mo_is_the_compiled_po():
    with open(MO, "rb") as fh:
        mo = gettext.GNUTranslations(fh)
    for msgid, m in entries().items():
        if isinstance(m.id, tuple):
            assert mo.ngettext(m.id[0], m.id[1], 1) == m.string[0], msgid
        else:
            assert mo.gettext(msgid) == m.string, f"{MO.name} is stale for {msgid!r}: run pybabel compile"


@pytest.mark.parametrize("env,option,config,want", [
    ({}, None, None, "en"),
    ({"LANG": "zh_CN.UTF-8"}, None, None, "zh"),
    ({"LANG": "zh_CN.UTF-8", "LC_ALL": "C"}, None, None, "en"),  # LC_ALL wins over LANG
    ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_TW.UTF-8"}, None, None, "zh"),
    ({"LANG": "en_US.UTF-8"}, None, "zh", "zh"),  # the config's lang beats the locale
    ({"LANG": "en_US.UTF-8", "ASCEND_DOCTOR_LANG": "zh"}, None, "en", "zh"),  # the env var beats the config
    ({"ASCEND_DOCTOR_LANG": "zh"}, "en", None, "en"),  # --lang beats everything
])
def test_language_precedence(env, option, config, want):
    try:
        i18n.set_option(option)
        i18n.set_config(config)
        assert i18n.current(env) == want
    finally:
        i18n.set_option(None)
        i18n.set_config(None)


def test_a_fields_template_is_filled_after_translation():
    assert i18n.tr("{counts} in {seconds}s (fail-on: {gate}, exit {code})", lang="zh", counts="1 项失败",
                   seconds="0.50", gate="error", code=1) == "1 项失败，用时 0.50 秒（fail-on：error，退出码 1）"
    assert i18n.trn("{n} failed", "{n} failed", 3, lang="zh") == "3 项失败"
    assert i18n.trn("{n} failed", "{n} failed", 3, lang="en") == "3 failed"


@pytest.mark.parametrize("columns", [80, 100])
def test_the_chinese_console_report_stays_inside_its_width(columns):
    env = {**os.environ, "LANG": "zh_CN.UTF-8", "COLUMNS": str(columns), "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    env.pop("ASCEND_DOCTOR_LANG", None)
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--replay",
                        "examples/broken-host.snapshot.json"], cwd=REPO, capture_output=True, text=True, env=env,
                       timeout=120)
    lines = r.stdout.splitlines()
    assert "未就绪 — 5 项失败" in r.stdout and "✘ 失败    HOST102 SELinux 处于 permissive 或 disabled 模式" in r.stdout
    # What an operator acts on, in Chinese, with the values and the commands verbatim.
    flat = " ".join(ln.strip() for ln in lines)
    for text in ("SELinux 处于 enforcing 模式", "硬限制低于 65535（只有 root 能调高硬限制）", "/dev/shm 为 64 MiB，低于最低要求 1 GiB",
                 "时钟未同步（chrony）", "PCIe 链路宽度降级：0000:81:00.0 x8/x16", "`setenforce 0`", "`ulimit -n 65535`",
                 "`docker run --shm-size=16g …`", "`timedatectl set-ntp true`"):
        assert text in flat, text
    wide = [ln for ln in lines if cell_len(ln) > columns]
    # A single unbreakable token longer than the line (a path, a URL) may overflow, as in English; nothing else.
    assert [ln for ln in wide if " " in ln.strip()] == []
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "list"], cwd=REPO, capture_output=True, text=True,
                       env=env, timeout=120)
    assert all(cell_len(ln) <= columns for ln in r.stdout.splitlines())
    assert "CANN 工具包已按已知目录布局安装" in r.stdout


def test_json_records_the_language_and_stays_english():
    import json

    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--replay",
                        "examples/broken-host.snapshot.json", "--lang", "zh", "--format", "json"], cwd=REPO,
                       capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    data = json.loads(r.stdout)
    assert data["lang"] == "zh"
    f = next(x for x in data["findings"] if x["code"] == "HOST102")
    assert f["title"] == "SELinux is permissive or disabled" and f["message"] == "SELinux is enforcing"


def test_every_check_has_its_explain_doc_in_chinese():
    """The doc sections are the msgids (re-flowed, see registry.doc_section): editing a doc without its translation
    fails here, not in a user's `explain --lang zh`."""
    have = entries()
    missing = []
    for c in load_registry(entry_points=False).all():
        for name in ("What it checks", "Why it matters", "How to fix"):
            en = c.section(name)
            if en and not (have.get(en) and have[en].string):
                missing.append(f"{c.code}: {name}")
    assert missing == []


def test_explain_prints_the_chinese_doc():
    from click.testing import CliRunner

    from ascend_doctor.cli import cli

    r = CliRunner().invoke(cli, ["explain", "HOST102", "--lang", "zh"])
    assert r.exit_code == 0
    assert "SELinux 处于 permissive 或 disabled 模式" in r.output and "检查内容：" in r.output and "如何修复：" in r.output
    assert "`setenforce 0`" in r.output  # commands stay verbatim
    assert "not translated" not in r.output and "尚未翻译" not in r.output
    for code in ("TOOL101", "SRV105", "TRIAGE101", "FLEET106"):
        r = CliRunner().invoke(cli, ["explain", code, "--lang", "zh"])
        assert r.exit_code == 0 and "尚未翻译" not in r.output and "为什么重要：" in r.output, code
