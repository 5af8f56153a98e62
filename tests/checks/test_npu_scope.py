"""#37: the per-NPU checks judge the NPUs the server will use, by one rule (ascend_doctor.facts.scope): another
replica's NPUs are information, not a failure of this server."""

from __future__ import annotations

import json

from click.testing import CliRunner

from ascend_doctor.cli import cli
from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.probes.compute import plan_run
from ascend_doctor.seam.host import Distribution, PythonEnv
from ascend_doctor.seam.snapshot import ReplayHost, load_snapshot
from tests.helpers import REPO

A3_BUSY = str(REPO / "examples" / "a3-busy.snapshot.json")  # NPU 0 and 1 (chips 0-3) held by another job


def _exec(tmp_path, *command: str) -> dict:
    out = tmp_path / "r.json"
    r = CliRunner().invoke(cli, ["exec", "--replay", A3_BUSY, "--format", "json", "-o", str(out), "--", *command])
    assert r.exit_code in (0, 1), r.output
    return {f["code"]: f for f in json.loads(out.read_text())["findings"]}


def test_busy_npus_outside_the_servers_set_are_information(tmp_path):
    f = _exec(tmp_path, "env", "ASCEND_RT_VISIBLE_DEVICES=8,9,10,11", "vllm", "serve", "Qwen/Qwen3-8B")
    npu103 = f["NPU103"]
    assert npu103["status"] == "pass", npu103["message"]
    assert "outside this server's NPUs (ASCEND_RT_VISIBLE_DEVICES=8,9,10,11)" in npu103["message"]
    assert "NPU 0 chip 0: 61250 / 65536 MB (93%)" in npu103["message"] and "PID 2811907" in npu103["message"]


def test_the_same_npus_in_the_servers_set_fail(tmp_path):
    f = _exec(tmp_path, "env", "ASCEND_RT_VISIBLE_DEVICES=0,1", "vllm", "serve", "Qwen/Qwen3-8B")
    assert f["NPU103"]["status"] == "fail" and "NPU 0 chip 0: 61250 / 65536 MB" in f["NPU103"]["message"]
    plain = CliRunner().invoke(cli, ["check", "--replay", A3_BUSY, "--select", "NPU103", "--format", "json"])
    assert json.loads(plain.output)["findings"][0]["status"] == "fail"  # no set named: every NPU is the server's


def test_the_compute_smoke_runs_on_the_servers_npus_and_is_not_blocked_by_anothers(tmp_path):
    snap = load_snapshot(A3_BUSY)

    def orders(env: dict):
        store = FactStore(ReplayHost(snap), RunOptions(), preset={
            "env": env, "python": PythonEnv(executable="/opt/vllm/bin/python3", distributions=[
                Distribution(name="torch", version="2.8.0"), Distribution(name="torch_npu", version="2.8.0")])})
        return plan_run(store, "/opt/vllm/bin/python3")

    assert orders({}) == (None, "npus-busy")
    cfg, why = orders({"ASCEND_RT_VISIBLE_DEVICES": "8,9,10,11"})
    assert why == "" and cfg["world"] == 4 and cfg["env"] == {"ASCEND_RT_VISIBLE_DEVICES": "8,9,10,11"}


def test_the_command_plan_prints_on_a_busy_host_uses_the_free_npus_and_passes_there(tmp_path):
    """#41's reproduction: on the A3 whose chips 0-3 another job holds, plan places the server on free chips — the
    container by their device nodes, the command on the host by ASCEND_RT_VISIBLE_DEVICES — and `exec` on the same
    snapshot passes that command: NPU103 finds the busy chips outside the server's set, no serve check fails."""
    r = CliRunner().invoke(cli, ["plan", "--model", "Qwen3-32B", "--replay", A3_BUSY, "--format", "json"])
    assert r.exit_code == 0, r.output
    serve = json.loads(r.output)["serve"]
    assert serve["env"]["ASCEND_RT_VISIBLE_DEVICES"] == "4,5"
    assert "/dev/davinci4" in serve["docker"] and "/dev/davinci0" not in serve["docker"]
    assert not any("ASCEND_RT_VISIBLE_DEVICES" in a for a in serve["docker"])  # the container sees only its own
    env = [f"{k}={v}" for k, v in serve["env"].items()]
    f = _exec(tmp_path, "env", *env, *serve["argv"])
    assert f["NPU103"]["status"] == "pass", f["NPU103"]["message"]
    bad = {c: x["message"] for c, x in f.items() if c.startswith(("SERVE", "HW1")) and x["status"] in ("fail", "error")}
    assert bad == {}
