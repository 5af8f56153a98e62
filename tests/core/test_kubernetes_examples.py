"""examples/kubernetes (#27): the manifests validate against the Kubernetes API schemas (kubernetes-validate bundles
them, offline), and the init container's own command, run against a replayed pod that lacks its device resource,
stops the pod with a one-line termination message naming the root cause."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

yaml = pytest.importorskip("yaml")
kv = pytest.importorskip("kubernetes_validate")

MANIFESTS = sorted((REPO / "examples" / "kubernetes").glob("*.yaml"))


def docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
@pytest.mark.parametrize("version", ["1.28.0", "1.33.0"])
def test_manifests_validate_against_the_kubernetes_schemas(path, version):
    for doc in docs(path):
        kv.validate(doc, version, strict=True)  # raises ValidationError with the path of the bad field


def test_the_init_container_stops_a_pod_without_its_devices_and_says_why(tmp_path):
    deployment = next(d for p in MANIFESTS for d in docs(p) if d["kind"] == "Deployment")
    spec = deployment["spec"]["template"]["spec"]
    init = spec["initContainers"][0]
    assert init["command"][:2] == ["ascend-doctor", "check"]
    assert init["resources"]["limits"] == {"huawei.com/Ascend910": 2}
    shm = next(v for v in spec["volumes"] if v["name"] == "dshm")
    assert shm["emptyDir"]["medium"] == "Memory"
    # The pod as the kubelet would run it, on a node where the device plugin gave it no NPU: a replayed container
    # without /dev/davinci* (examples/container-missing-devices), in a pod (KUBERNETES_SERVICE_HOST).
    log = tmp_path / "termination-log"
    env = {**os.environ, "PYTHONPATH": str(REPO), "KUBERNETES_SERVICE_HOST": "10.96.0.1"}
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", *init["command"][1:], "--replay",
                        "examples/container-missing-devices.snapshot.json", "--termination-log", str(log), "-q"],
                       capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert r.returncode == 1, r.stderr  # the init container fails: the pod does not start
    message = log.read_text()
    assert message.count("\n") == 1 and "NOT READY" in message and "CTR101" in message
    assert "huawei.com/Ascend910" in message  # the fix names the device-plugin resource


def test_the_serve_container_starts_through_the_exec_gate(tmp_path):
    """The container's command is `ascend-doctor exec -- vllm serve …`: on the recorded A2 host its options, parser
    and layout lint clean (the model directory is not in the recording: those checks are unknown, not passed)."""
    import json

    deployment = next(d for p in MANIFESTS for d in docs(p) if d["kind"] == "Deployment")
    command = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[:3] == ["ascend-doctor", "exec", "--"] and command[3:5] == ["vllm", "serve"]
    report = tmp_path / "exec.json"
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "exec", "--replay",
                        "examples/healthy-a2.snapshot.json", "--report", str(report), *command[2:]],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO,
                       timeout=120)
    assert r.returncode == 0, r.stderr  # --replay lints and never executes
    status = {f["code"]: f["status"] for f in json.loads(report.read_text())["findings"]}
    assert {status[c] for c in ("SERVE101", "SERVE104", "SERVE105", "SERVE301", "SERVE304")} == {"pass"}
    assert status["SERVE305"] == "unknown" and not [c for c, s in status.items() if s == "fail"]


def test_the_server_asks_for_the_npus_its_layout_uses():
    """#40 item 15: the Deployment asked for 8 NPUs for a TP 2 server; the init container judges the same count."""
    deployment = next(d for p in MANIFESTS for d in docs(p) if d["kind"] == "Deployment")
    spec = deployment["spec"]["template"]["spec"]
    command = spec["containers"][0]["command"]

    def opt(name, default):
        return int(command[command.index(name) + 1]) if name in command else default

    npus = opt("--tensor-parallel-size", 1) * opt("--pipeline-parallel-size", 1)
    assert spec["containers"][0]["resources"]["limits"] == {"huawei.com/Ascend910": npus}
    assert spec["initContainers"][0]["resources"]["limits"] == {"huawei.com/Ascend910": npus}


def test_the_daemonset_sees_the_npus_without_taking_them():
    """#40 item 15: the DaemonSet requested no NPU and mounted no /dev/davinci*, so every node exported not ready. It
    still requests none (that would take them from the servers) but mounts the host's /dev, privileged, and leaves
    the container-scoped checks (HOST103/HOST104: its own limits and /dev/shm) to the serving pod's init container."""
    ds = next(d for p in MANIFESTS for d in docs(p) if d["kind"] == "DaemonSet")
    spec = ds["spec"]["template"]["spec"]
    c = spec["containers"][0]
    assert not any(k.startswith("huawei.com/") for part in c["resources"].values() for k in part)
    assert c["securityContext"]["privileged"] is True
    dev = next(m for m in c["volumeMounts"] if m["mountPath"] == "/dev")
    assert next(v for v in spec["volumes"] if v["name"] == dev["name"])["hostPath"]["path"] == "/dev"
    assert "--ignore HOST103,HOST104" in " ".join(c["args"])
