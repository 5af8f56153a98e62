"""`ascend-doctor plan` end to end on model directories written here (config.json + safetensors headers)."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

from tests.deploy import configs as C
from tests.helpers import REPO


def model_dir(tmp_path: Path, cfg: dict, tensor_bytes: int) -> Path:
    d = tmp_path / "model"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(cfg))
    header = json.dumps({"w": {"dtype": "BF16", "shape": [tensor_bytes // 2], "data_offsets": [0, tensor_bytes]}})
    (d / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header.encode())  # header only: sized, not read
    return d


def plan(*args: str, env: dict = None):
    import os

    e = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "100", **(env or {})}
    return subprocess.run([sys.executable, "-m", "ascend_doctor", "plan", *args], capture_output=True, text=True,
                          env=e, cwd=REPO, timeout=120)


def test_a_model_that_fits_gets_a_layout_a_memory_table_and_a_serve_command(tmp_path):
    d = model_dir(tmp_path, C.QWEN3_32B, 65_524_000_000)
    r = plan("--model", str(d), "--chip", "910B3", "--npus", "8", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    chosen = doc["plan"]["chosen"]
    assert chosen["layout"]["tp"] == 2 and chosen["max_len"] == 40960
    assert doc["model"]["weights"]["source"] == "safetensors headers of 1 file(s)"
    argv = doc["serve"]["argv"]
    assert argv[:5] == ["vllm", "serve", str(d), "--tensor-parallel-size", "2"]
    assert argv[argv.index("--tool-call-parser") + 1] == "hermes"
    assert doc["release"]["image"].startswith("quay.io/ascend/vllm-ascend:v")
    weights = next(t for t in chosen["budget"]["terms"] if t["name"] == "weights")
    assert weights["bytes"] == 65_524_000_000 // 2 and "65524000000 B" in weights["inputs"]


def test_nothing_fits_exits_1_and_says_how_much_is_short(tmp_path):
    d = model_dir(tmp_path, C.QWEN3_32B, 65_524_000_000)
    r = plan("--model", str(d), "--chip", "910B4", "--npus", "1")
    assert r.returncode == 1, r.stderr
    assert "no layout fits on 1 rank(s)" in r.stdout and "more per rank" in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) <= 100


def test_usage_errors_are_one_line_exit_2(tmp_path):
    r = plan("--model", str(tmp_path / "absent"), "--chip", "910B3", "--npus", "1")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a directory" in r.stderr
    d = model_dir(tmp_path, C.QWEN3_8B, 16_000_000_000)
    r = plan("--model", str(d), "--chip", "H100", "--npus", "1")
    assert r.returncode == 2 and "910B3" in r.stderr
    (d / "config.json").write_text("{not json")
    r = plan("--model", str(d), "--chip", "910B3", "--npus", "1")
    assert r.returncode == 2 and "config.json is not valid JSON" in r.stderr


def test_chinese_plan_reads_chinese(tmp_path):
    d = model_dir(tmp_path, C.QWEN3_8B, 16_381_000_000)
    r = plan("--model", str(d), "--chip", "910B3", "--npus", "1", "--lang", "zh")
    assert r.returncode == 0, r.stderr
    assert "结论" in r.stdout and "每个 rank 的内存" in r.stdout
