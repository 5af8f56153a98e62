"""#40 item 14: English left in Chinese output — the doctor's own evidence labels, plan's model line, diagnose's
counts, fleet's item names. Each is rendered in the run's language; the JSON report keeps English."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.helpers import REPO


def zh(*args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "--lang", "zh", *args], capture_output=True, text=True,
                       timeout=120, cwd=REPO, env={**os.environ, "COLUMNS": "120", "NO_COLOR": "1"})
    assert r.returncode in (0, 1), r.stderr[-1000:]
    return r.stdout + r.stderr


def test_the_doctors_evidence_labels_are_chinese_and_json_stays_english(tmp_path):
    out = zh("check", "--replay", "examples/container-missing-devices.snapshot.json", "--json",
             str(tmp_path / "r.json"))
    assert "所见： 容器迹象 →" in out and "所见： 驱动路径" in out and "所见： 查找过的文件 →" in out
    assert "container signals" not in out and "driver paths" not in out and "files searched" not in out
    sources = {e["source"] for f in json.loads((tmp_path / "r.json").read_text())["findings"] for e in f["evidence"]}
    assert {"container signals", "driver paths", "files searched"} <= sources


def test_plan_model_line_is_chinese():
    out = zh("plan", "--model", "Qwen3-32B", "--chip", "910B3", "--npus", "8")
    line = next(x for x in out.splitlines() if x.startswith("模型："))
    assert "64 层" in line and "8 个 KV 头" in line and "layers" not in line and "heads" not in line


def test_diagnose_counts_are_chinese():
    out = zh("diagnose", "tests/data/signatures/hccl-notify-wait-timeout.log")
    assert out.rstrip().endswith("3 项出错") or "3 项出错" in out.splitlines()[-1]
    assert not out.rstrip().endswith("3 error")


def test_fleet_item_names_are_chinese():
    out = zh("fleet", "--snapshots", "examples/*.snapshot.json")
    assert "上的 NPU 芯片数 为 16" in out and "NPU chips" not in out.split("FLEET103", 2)[-1]


def test_the_doctors_words_inside_evidence_are_chinese_and_json_keeps_them_english(tmp_path):
    """`not found`, `missing`, `none`, `\\`timedatectl\\` not found`: written by the doctor, not by a tool."""
    import re

    english = re.compile(r"\b(not found|missing|none|no container signals|no vllm entry point)\b")
    for snap in sorted((REPO / "examples").glob("*.snapshot.json")):
        out = zh("check", "--replay", str(snap), "-v", "--json", str(tmp_path / "r.json"))
        seen = [line for line in out.splitlines() if english.search(line) and not line.startswith("replay:")]
        assert seen == [], f"{snap.name}: {seen[:5]}"
    excerpts = " ".join(e["excerpt"] for f in json.loads((tmp_path / "r.json").read_text())["findings"]
                        for e in f["evidence"])
    assert "not found" in excerpts or "none" in excerpts  # the last example (warning-chip) in English JSON


def test_fleet_cells_are_chinese():
    out = zh("fleet", "--snapshots", "examples/*.snapshot.json")
    table = out.split("\n\n")[1]
    assert "driver 不存在" in table and "重复 192.168" in table
    assert "not found" not in table and "dup " not in table and "none" not in table
