"""`collect -- vllm serve …`: the snapshot carries what `exec` reads for that command, so `exec --replay` judges the
model-level checks (SERVE2xx) the way the node itself would, instead of reporting them unknown."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ascend_doctor.core.engine import run_static
from ascend_doctor.core.errors import InputError
from ascend_doctor.core.options import RunOptions
from ascend_doctor.core.registry import load_registry
from ascend_doctor.seam.collect import collect_snapshot
from ascend_doctor.seam.host import Distribution, PythonEnv
from ascend_doctor.seam.snapshot import ReplayHost, Snapshot
from tests.helpers import DATA, REPO
from tests.helpers import parse_serve as parse_serve_command
from tests.hook.dirhost import DirHost

SERVE = DATA / "serve"
QWEN = str(SERVE / "models" / "Qwen3-8B")
V32 = str(SERVE / "models" / "DeepSeek-V3.2")
MODEL_CODES = ("SERVE201", "SERVE202", "SERVE203", "SERVE205", "SERVE302")
OPTIONS = RunOptions(import_probe=False)


def _host() -> DirHost:
    py = PythonEnv(purelib=str(SERVE / "site-vllm0130"),
                   distributions=[Distribution(name="vllm", version="0.13.0"),
                                  Distribution(name="vllm-ascend", version="0.13.0rc3"),
                                  Distribution(name="transformers", version="4.57.1")])
    return DirHost(python=py)


def _serve_verdicts(host, argv) -> dict:
    cmd = parse_serve_command(argv)
    rep = run_static(host, load_registry(entry_points=False), OPTIONS, command="exec", linted_command=cmd.argv,
                     preset_facts={"serve_cmd": cmd}, stages=("serve",))
    return {f.code: (f.status.value, f.message) for f in rep.findings}


@pytest.mark.parametrize("argv", [
    ["vllm", "serve", QWEN, "--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--tensor-parallel-size", "4"],
    ["vllm", "serve", V32, "--enable-auto-tool-choice", "--tool-call-parser", "deepseek_v31"],  # the wrong parser
])
def test_replayed_snapshot_judges_the_model_like_the_node(argv):
    live = _serve_verdicts(_host(), argv)
    snap = Snapshot.model_validate_json(collect_snapshot(_host(), OPTIONS, serve_argv=argv).dump())
    assert any(p.endswith("/config.json") for p in snap.files)
    replayed = _serve_verdicts(ReplayHost(snap), argv)
    assert replayed == live
    assert all(replayed[c][0] != "unknown" for c in MODEL_CODES if c in replayed), replayed


def test_without_the_command_the_model_checks_stay_unknown():
    argv = ["vllm", "serve", QWEN, "--enable-auto-tool-choice", "--tool-call-parser", "hermes"]
    snap = collect_snapshot(_host(), OPTIONS)
    assert not any(p.startswith(QWEN) for p in snap.files)
    replayed = _serve_verdicts(ReplayHost(snap), argv)
    assert replayed["SERVE201"][0] == "unknown"


def test_a_command_that_is_not_vllm_serve_is_an_input_error():
    with pytest.raises(InputError, match="is not a `vllm serve"):
        collect_snapshot(_host(), OPTIONS, serve_argv=["python", "app.py", "--port", "8000"])


@pytest.mark.localhost
def test_cli_records_the_model_directory(tmp_path):
    out = tmp_path / "node.snapshot.json"
    argv = [sys.executable, "-m", "ascend_doctor", "collect", "-o", str(out), "--no-import-probe", "--probe-timeout",
            "5", "--", "vllm", "serve", QWEN, "--enable-auto-tool-choice", "--tool-call-parser", "hermes"]
    r = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr
    files = json.loads(out.read_text())["files"]
    assert f"{QWEN}/config.json" in files and files[f"{QWEN}/config.json"]["content"]
    bad = subprocess.run(argv[:7] + ["--", "sleep", "1"], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "is not a `vllm serve" in bad.stderr


def test_the_serving_python_is_inferred_before_any_probe_asks_for_it(tmp_path):
    """The `python` fact is computed once per run: the serving interpreter (the `vllm` script's shebang) must be
    known before the serve_cmd probe asks for it (it reads that interpreter's vLLM for the option syntax), or the
    doctor's own interpreter gets judged and recorded instead."""
    script = tmp_path / "bin" / "vllm"
    script.parent.mkdir()
    script.write_text(f"#!{tmp_path}/venv/bin/python3.11\nfrom vllm.entrypoints.cli.main import main\n")

    class Recording(DirHost):
        def __init__(self):
            super().__init__(python=_host()._python)
            self.asked: list = []

        def python_env(self, python=None, timeout: float = 20.0):
            self.asked.append(python)
            return super().python_env(python, timeout)

    host = Recording()
    collect_snapshot(host, OPTIONS, serve_argv=[str(script), "serve", QWEN, "--port", "8000"])
    assert host.asked and set(host.asked) == {f"{tmp_path}/venv/bin/python3.11"}
