"""SERVE310: the LoRA flags and the static adapters of a vllm serve command, by vLLM 0.32's own rules; the
--lora-modules parser and the serve_lora probe on real adapter directories."""

from __future__ import annotations

import json

import pytest

from ascend_doctor.parsers.lora_modules import parse_lora_modules
from ascend_doctor.probes.lora import lora_probe
from ascend_doctor.report import Status
from tests.checks.test_serve_checks import QWEN, _Store, facts, run_check
from tests.hook.dirhost import DirHost


def adapter(tmp_path, name: str = "sql", **config) -> str:
    d = tmp_path / name
    d.mkdir()
    if config is not None:
        base = {"r": 8, "lora_alpha": 16, "target_modules": ["q_proj", "v_proj"], "bias": "none", "peft_type": "LORA"}
        (d / "adapter_config.json").write_text(json.dumps({**base, **config}))
    return str(d)


def judge(extra: str):
    out = facts(f"vllm serve {QWEN} {extra}")
    out["serve_lora"] = lora_probe(DirHost(), _Store({"serve_cmd": out["serve_cmd"]}))
    return run_check("SERVE310", out)


def test_rank_above_the_default_max_fails_with_vllms_words(tmp_path):  # vllm#2847, ms-swift#4221
    path = adapter(tmp_path, r=64)
    f = judge(f"--enable-lora --lora-modules sql={path}")
    assert f.status == Status.FAIL
    assert "adapter sql: LoRA rank 64 is greater than max_lora_rank 16." in f.message
    assert "--max-lora-rank" in f.remediation
    f = judge(f"--enable-lora --lora-modules sql={path} --max-lora-rank 64")
    assert f.status == Status.PASS and "1 adapter(s) within --max-lora-rank 64: sql r=64" in f.message


def test_rank_pattern_counts(tmp_path):
    path = adapter(tmp_path, r=8, rank_pattern={"q_proj": 32})
    f = judge(f'--enable-lora --max-lora-rank 16 --lora-modules {{"name":"a","path":"{path}"}}')
    assert f.status == Status.FAIL and "LoRA rank 32 is greater than max_lora_rank 16." in f.message


def test_modules_without_enable_lora(tmp_path):
    f = judge(f"--lora-modules sql={adapter(tmp_path)}")
    assert f.status == Status.FAIL and "LoRA is not enabled. Use --enable-lora to enable LoRA." in f.message


def test_a_rank_vllm_does_not_accept_and_cpu_loras_below_max_loras():
    f = judge("--enable-lora --max-lora-rank 24")
    assert f.status == Status.FAIL and "--max-lora-rank 24 is not one vLLM accepts" in f.message
    f = judge("--enable-lora --max-loras 4 --max-cpu-loras 2")
    assert f.status == Status.FAIL and "max_cpu_loras (2) must be >= max_loras (4)." in f.message


def test_missing_directory_and_missing_config(tmp_path):
    f = judge(f"--enable-lora --lora-modules gone={tmp_path}/nope")
    assert f.status == Status.FAIL and f"Loading lora gone failed: No adapter found for {tmp_path}/nope" in f.message
    empty = tmp_path / "empty"
    empty.mkdir()
    f = judge(f"--enable-lora --lora-modules e={empty}")
    assert f.status == Status.FAIL and "no adapter_config.json" in f.message


def test_dora_and_bias_are_refused(tmp_path):
    f = judge(f"--enable-lora --lora-modules d={adapter(tmp_path, 'd', use_dora=True)} "
              f"b={adapter(tmp_path, 'b', bias='all')}")
    assert f.status == Status.FAIL
    assert "adapter d: vLLM does not yet support DoRA." in f.message and "adapter b: Adapter bias is not supported." \
        in f.message


def test_a_hub_id_is_not_judged():
    f = judge("--enable-lora --lora-modules sql=someorg/sql-lora")
    assert f.status == Status.UNKNOWN and "someorg/sql-lora" not in f.message and "sql" in f.message


def test_enable_lora_alone_passes_and_no_lora_skips():
    assert judge("--enable-lora").status == Status.PASS
    assert judge("").status == Status.SKIP


@pytest.mark.parametrize("value, want", [
    # as users wrote them: vllm-ascend#6143, vllm#2847
    ("komodo-lora=/data/models/Komodo-LoRA", [("komodo-lora", "/data/models/Komodo-LoRA", None)]),
    ("lora-name=lora_path", [("lora-name", "lora_path", None)]),
    ("a=/x", [("a", "/x", None)]),
    ('{"name": "a", "path": "/x", "base_model_name": "m"}', [("a", "/x", None)]),
    ("a=/x,b=/y", [(None, None, "Invalid JSON format for --lora-modules: a=/x,b=/y")]),
    ('{"name": "a"}', [(None, None, "Invalid fields for --lora-modules: {\"name\": \"a\"} - missing 'path'")]),
])
def test_lora_modules_parse_as_vllm_reads_them(value, want):
    got = [(m.name, m.path, m.error) for m in parse_lora_modules([value])]
    assert got == want
