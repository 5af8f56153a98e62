"""docs/recipes: each recipe's command lines actually run (against example snapshots with --replay).

A replayed `exec` lints and never starts the command (#22 item 2): these prove each recipe's `exec` line is accepted
and judged as on the recorded node, with the verdict as exit code; that a passing `exec` then becomes the command is
proven live in tests/hook/test_exec.py."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.hook.shared import _env

RECIPES = REPO / "docs" / "recipes"
HEALTHY = str(REPO / "examples" / "healthy-a2.snapshot.json")
BROKEN = str(REPO / "examples" / "broken-host.snapshot.json")
DOCTOR = [sys.executable, "-m", "ascend_doctor"]






def runnable(argv: list[str], *, replay: str, tmp_path: Path, fake_vllm: Path = None) -> list[str]:
    """A recipe's argv made runnable here: our interpreter for ascend-doctor, --replay SNAPSHOT after the
    subcommand, --python dropped (the snapshot has the python), /var/log paths under tmp_path, vllm -> fake."""
    assert Path(argv[0]).name == "ascend-doctor", argv
    out = DOCTOR + [argv[1], "--replay", replay]
    rest = argv[2:]
    i = 0
    after_dashes = False
    while i < len(rest):
        a = rest[i]
        if not after_dashes and a == "--python":
            i += 2
            continue
        if a == "--":
            after_dashes = True
        elif a.startswith("/var/log/"):
            a = str(tmp_path / Path(a).name)
        elif after_dashes and Path(a).name == "vllm" and fake_vllm is not None:
            a = str(fake_vllm)
        out.append(a)
        i += 1
    return out


def test_recipes_md_embeds_every_file_verbatim():
    md = (REPO / "docs" / "recipes.md").read_text(encoding="utf-8")
    for f in ("Dockerfile", "vllm-ascend-pod.yaml", "vllm-ascend.service", "ascend-doctor-gate.yml"):
        assert (RECIPES / f).read_text(encoding="utf-8") in md, f"{f} drifted from docs/recipes.md"


# Docker --------------------------------------------------------------------------------------------------------
def _dockerfile_argv() -> list[str]:
    entry = cmd = None
    for line in (RECIPES / "Dockerfile").read_text().splitlines():
        if line.startswith("ENTRYPOINT "):
            entry = json.loads(line[len("ENTRYPOINT "):])
        elif line.startswith("CMD "):
            cmd = json.loads(line[len("CMD "):])
    assert entry and cmd, "Dockerfile needs exec-form ENTRYPOINT and CMD"
    return entry + cmd


def test_dockerfile_entrypoint_and_cmd_lint_then_exec(tmp_path, fake_vllm):
    argv = _dockerfile_argv()
    assert argv[:2] == ["ascend-doctor", "exec"] and "--" in argv and argv[argv.index("--") + 1] == "vllm"
    marker = tmp_path / "started"
    r = subprocess.run(runnable(argv, replay=HEALTHY, tmp_path=tmp_path, fake_vllm=fake_vllm), cwd=tmp_path,
                       env=_env(FAKE_VLLM_MARKER=marker), capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    assert not marker.exists() and "linted, not started" in r.stderr  # replayed: judged, never started here
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["linted_command"][-2:] == ["--port", "8000"]  # the CMD's arguments reached the lint
    assert report["command"] == "exec" and report["linted_command"][-1] == "8000"
    assert {f["code"]: f["status"] for f in report["findings"]}["SERVE101"] == "pass"


def test_dockerfile_refuses_the_seed_command_on_its_image(tmp_path, fake_vllm):
    entry = _dockerfile_argv()
    entry = entry[:entry.index("--") + 1]
    seed = ["vllm", "serve", "/models/DeepSeek-V4-Flash-w8a8-mtp", "--tensor-parallel-size", "8",
            "--enable-auto-tool-choice", "--tool-call-parser", "deepseek_v4", "--reasoning-parser", "deepseek_v4",
            "--quantization", "ascend"]
    marker = tmp_path / "started"
    r = subprocess.run(runnable(entry + seed, replay=HEALTHY, tmp_path=tmp_path, fake_vllm=fake_vllm), cwd=tmp_path,
                       env=_env(FAKE_VLLM_MARKER=marker), capture_output=True, text=True, timeout=180)
    assert r.returncode == 1 and not marker.exists()
    report = json.loads((tmp_path / "report.json").read_text())
    failed = {f["code"] for f in report["findings"] if f["status"] == "fail"}
    assert {"SERVE101", "SERVE102"} <= failed


# Kubernetes ------------------------------------------------------------------------------------------------------
def _pod() -> dict:
    yaml = pytest.importorskip("yaml")  # PyYAML is not a dependency of ascend-doctor; only this test reads YAML
    return yaml.safe_load((RECIPES / "vllm-ascend-pod.yaml").read_text())


def test_k8s_pod_has_the_fields():
    pod = _pod()
    assert pod["apiVersion"] == "v1" and pod["kind"] == "Pod"
    init = pod["spec"]["initContainers"][0]
    main = pod["spec"]["containers"][0]
    assert init["command"][:2] == ["ascend-doctor", "check"]
    assert main["command"][:2] == ["ascend-doctor", "exec"] and main["command"][-1] == "--"
    assert main["args"][:2] == ["vllm", "serve"]
    for c in (init, main):
        assert c["resources"]["limits"]["huawei.com/Ascend910"] >= 1
    assert main["readinessProbe"]["httpGet"]["path"] == "/health"
    vols = {v["name"]: v for v in pod["spec"]["volumes"]}
    assert vols["dshm"]["emptyDir"]["medium"] == "Memory"
    assert any(m["mountPath"] == "/dev/shm" for m in main["volumeMounts"])
    port = main["args"][main["args"].index("--port") + 1]
    assert int(port) == main["ports"][0]["containerPort"] == main["readinessProbe"]["httpGet"]["port"]


def test_k8s_init_container_and_hook_run(tmp_path, fake_vllm):
    pod = _pod()
    init = pod["spec"]["initContainers"][0]["command"]
    r = subprocess.run(runnable(init, replay=HEALTHY, tmp_path=tmp_path), cwd=tmp_path, env=_env(),
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout[-3000:]
    assert json.loads((tmp_path / "check.json").read_text())["command"] == "check"
    r = subprocess.run(runnable(init, replay=BROKEN, tmp_path=tmp_path), cwd=tmp_path, env=_env(),
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 1  # a broken node stops the pod in Init
    main = pod["spec"]["containers"][0]
    marker = tmp_path / "started"
    r = subprocess.run(runnable(main["command"] + main["args"], replay=HEALTHY, tmp_path=tmp_path,
                                fake_vllm=fake_vllm), cwd=tmp_path, env=_env(FAKE_VLLM_MARKER=marker),
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0 and not marker.exists() and "linted, not started" in r.stderr, r.stderr[-3000:]


# systemd ---------------------------------------------------------------------------------------------------------
def _unit() -> dict:
    keys: dict = {}
    for line in (RECIPES / "vllm-ascend.service").read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            k, _, v = line.partition("=")
            keys.setdefault(k, []).append(v)
    return keys


def test_systemd_exec_start_pre_runs(tmp_path):
    unit = _unit()
    pre = shlex.split(unit["ExecStartPre"][0])
    assert pre[0].endswith("/ascend-doctor") and pre[1] == "check"
    r = subprocess.run(runnable(pre, replay=HEALTHY, tmp_path=tmp_path), cwd=tmp_path, env=_env(),
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout[-3000:]
    assert json.loads((tmp_path / "check.json").read_text())["exit_code"] == 0
    r = subprocess.run(runnable(pre, replay=BROKEN, tmp_path=tmp_path), cwd=tmp_path, env=_env(),
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 1  # the unit does not start


def test_systemd_exec_start_hook_runs(tmp_path, fake_vllm):
    unit = _unit()
    assert unit["LimitNOFILE"] == ["65535"] and "Restart" in unit
    start = shlex.split(unit["ExecStart"][0])
    assert start[1] == "exec" and start[start.index("--") + 1].endswith("/vllm")
    marker = tmp_path / "started"
    r = subprocess.run(runnable(start, replay=HEALTHY, tmp_path=tmp_path, fake_vllm=fake_vllm), cwd=tmp_path,
                       env=_env(FAKE_VLLM_MARKER=marker), capture_output=True, text=True, timeout=180)
    assert r.returncode == 0 and not marker.exists() and "linted, not started" in r.stderr, r.stderr[-3000:]


# CI --------------------------------------------------------------------------------------------------------------
def _workflow_runs() -> list[str]:
    yaml = pytest.importorskip("yaml")
    wf = yaml.safe_load((RECIPES / "ascend-doctor-gate.yml").read_text())
    steps = wf["jobs"]["preflight"]["steps"]
    return [s["run"].strip() for s in steps if "run" in s and "ascend-doctor check" in s["run"]]


def test_ci_gate_json_and_github_annotations(tmp_path):
    runs = _workflow_runs()
    gate = next(r for r in runs if "--format json" in r)
    annotate = next(r for r in runs if "--format github" in r)
    assert "--fail-on warning" in gate and "|| true" in annotate

    def argv(line: str, snapshot: str) -> list[str]:
        words = shlex.split(line.replace("|| true", ""))
        words[words.index("--replay") + 1] = snapshot
        return DOCTOR + words[1:]

    r = subprocess.run(argv(gate, BROKEN), cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=180)
    assert r.returncode == 1
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["exit_code"] == 1 and report["fail_on"] == "warning"
    r = subprocess.run(argv(annotate, BROKEN), cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=180)
    lines = r.stdout.splitlines()
    assert any(line.startswith("::error title=") for line in lines)
    assert lines[-1].startswith("ascend-doctor:") and "(exit 1)" in lines[-1]
