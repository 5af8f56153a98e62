"""The compute smoke's NPU path, replayed: `check --replay SNAPSHOT --compute` on the healthy-a2 example host (8 x
910B3, torch_npu 2.8.0.post2), with the launcher's record of each scenario (npu_records.py) answered from the
snapshot — the same probe, parser and checks as on a real NPU host, only the command's output is recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_doctor.cli import cli
from ascend_doctor.compute.launcher import MARKER, launcher_argv
from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.probes.compute import plan_run
from ascend_doctor.seam.snapshot import CommandEntry, ReplayHost, canonical_argv, load_snapshot
from tests.compute import npu_records as R

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "healthy-a2.snapshot.json"


def _orders(snap) -> tuple[str, dict]:
    store = FactStore(ReplayHost(snap), RunOptions())
    exe = store.fact("python").executable
    cfg, why = plan_run(store, exe)
    assert cfg is not None, why
    return exe, cfg


def snapshot_with(tmp_path: Path, name: str) -> str:
    """healthy-a2 with the launcher's record of scenario `name` as the answer to the command the probe will run."""
    snap = load_snapshot(EXAMPLE)
    exe, cfg = _orders(snap)
    snap.commands.append(CommandEntry(argv=canonical_argv(launcher_argv(exe, cfg)), duration_s=21.0,
                                      stdout=f"{MARKER} {json.dumps(R.scenario(name, cfg))}\n"))
    path = tmp_path / f"{name}.snapshot.json"
    path.write_text(snap.dump())
    return str(path)


def replay(tmp_path: Path, name: str, *extra: str) -> dict:
    """The JSON report of `check --replay <healthy-a2 + scenario> --compute --select NPU2`."""
    path = snapshot_with(tmp_path, name)
    res = CliRunner().invoke(cli, ["check", "--replay", path, "--compute", "--select", "NPU2", "--format", "json",
                                   *extra])
    assert res.exit_code in (0, 1), res.output
    return json.loads(res.output)


def by_code(report: dict) -> dict:
    return {f["code"]: f for f in report["findings"]}


def test_orders_follow_the_chip():
    """910B3: bf16 and fp16, the aclnn and the ATB operator, hccl, one rank per NPU npu-smi lists."""
    _, cfg = _orders(load_snapshot(EXAMPLE))
    assert cfg["device"] == "npu" and cfg["backend"] == "hccl" and cfg["world"] == 8 and cfg["chip"] == "910B3"
    assert cfg["dtypes"] == ["bfloat16", "float16"]
    assert [(o["name"], o["library"]) for o in cfg["ops"]] == [("rms_norm", "aclnn"), ("reshape_and_cache", "atb")]
    assert cfg["ops"][0]["call"].startswith("torch_npu.npu_rms_norm(")


def test_healthy_host_passes_with_its_figures(tmp_path):
    f = by_code(replay(tmp_path, "healthy"))
    assert {c: x["status"] for c, x in f.items()} == {f"NPU20{i}": "pass" for i in range(1, 7)}
    assert "NPU path (hccl, 910B3)" in f["NPU201"]["message"]
    assert "bfloat16 median 315.4; float16 median 314.5 TFLOP/s" in f["NPU204"]["message"]
    assert "64 MiB: bus bandwidth 41.584 GB/s" in f["NPU206"]["message"]
    assert len(f["NPU204"]["evidence"]) == 16  # 8 ranks x 2 dtypes, each with its figure
    assert "rank 3 (npu:3, Ascend910B3)" in {e["source"] for e in f["NPU203"]["evidence"]}


def test_busy_hbm_names_the_npu_and_the_free_memory(tmp_path):
    f = by_code(replay(tmp_path, "busy-hbm"))
    assert f["NPU202"]["status"] == "fail"
    assert "memory failed on rank(s) 1: 6.1 GiB of 60.9 GiB wanted, 2.8 GiB free" in f["NPU202"]["message"]
    assert f["NPU201"]["status"] == "pass"


def test_set_device_failure_is_the_cause_the_rest_waited(tmp_path):
    f = by_code(replay(tmp_path, "set-device"))
    msg = f["NPU201"]["message"]
    assert f["NPU201"]["status"] == "fail"
    assert "rank(s) 1 failed in device (exit 1)" in msg and "error code is 507033" in msg
    assert "rank(s) 0, 2-7 were waiting for them in rendezvous" in msg
    assert "torch.npu.set_device(0)" in f["NPU201"]["remediation"]  # the start-up fix, not the operator one
    assert f["NPU206"]["status"] == "unknown" and "rank(s) 1 ended before the collective" in f["NPU206"]["message"]
    assert f["NPU203"]["status"] == "unknown" and "rank(s) 1 never reached" in f["NPU203"]["message"]
    assert f["NPU204"]["status"] == "unknown"  # rank 1 was never timed: it could have been the slow one
    assert "rank(s) 1 not timed" in f["NPU204"]["message"]


def test_nnal_mismatch_fails_the_atb_operator_on_every_rank(tmp_path):
    f = by_code(replay(tmp_path, "nnal-mismatch"))
    assert f["NPU205"]["status"] == "fail"
    assert "rank(s) 0-7 torch_npu._npu_reshape_and_cache(key, value, key_cache, value_cache, slot_indices) [atb]: " \
           "OSError: /usr/local/Ascend/nnal/atb/latest" in f["NPU205"]["message"]
    assert "NNAL" in f["NPU205"]["remediation"]
    assert f["NPU203"]["status"] == "pass"


def test_segfault_in_an_operator_names_rank_and_stage(tmp_path):
    f = by_code(replay(tmp_path, "segfault-op"))
    assert "rank(s) 5 killed by SIGSEGV in op:reshape_and_cache" in f["NPU201"]["message"]
    assert "faulthandler" in f["NPU201"]["remediation"]
    rank5 = next(e for e in f["NPU201"]["evidence"] if e["source"].startswith("rank 5 "))
    assert "in op_reshape_and_cache" in rank5["excerpt"]


def test_hccl_init_failure_on_every_rank(tmp_path):
    f = by_code(replay(tmp_path, "hccl-init"))
    for code in ("NPU201", "NPU206"):
        assert f[code]["status"] == "fail"
        assert "rank(s) 0-7 failed in allreduce (exit 4): RuntimeError: create_config" in f[code]["message"]
        assert "error code is 1" in f[code]["message"]


def test_hccl_hang_every_rank_stopped_at_the_collective_timeout(tmp_path):
    f = by_code(replay(tmp_path, "hccl-hang"))
    assert f["NPU206"]["status"] == "fail"
    assert "rank(s) 0-7 stopped after 62 s in allreduce without progress" in f["NPU206"]["message"]


def test_slow_npu_is_named(tmp_path):
    f = by_code(replay(tmp_path, "slow-npu"))
    assert f["NPU204"]["status"] == "warn"
    assert "rank 6 bfloat16 195.5 TFLOP/s, 38% below the median 315.4" in f["NPU204"]["message"]
    assert f["NPU201"]["status"] == "pass"


@pytest.mark.parametrize("fmt", ["sarif", "junit"])
def test_compute_findings_in_sarif_and_junit(tmp_path, fmt):
    path = snapshot_with(tmp_path, "segfault-op")
    res = CliRunner().invoke(cli, ["check", "--replay", path, "--compute", "--select", "NPU2", "--format", fmt])
    assert res.exit_code == 1
    assert "NPU201" in res.output and "SIGSEGV" in res.output


def test_without_compute_the_checks_do_not_run(tmp_path):
    """A plain `check` never starts the compute smoke (it allocates HBM)."""
    res = CliRunner().invoke(cli, ["check", "--replay", str(EXAMPLE), "--format", "json"])
    assert not [f for f in json.loads(res.output)["findings"] if f["code"].startswith("NPU2")]


def test_exec_compute_refuses_to_start_on_a_broken_npu(tmp_path):
    """The pre-deploy hook with --compute: the NPU that crashes in the ATB operator stops the launch (replayed:
    exec lints, never starts the command)."""
    path = snapshot_with(tmp_path, "segfault-op")
    res = CliRunner().invoke(cli, ["exec", "--replay", path, "--compute", "--select", "NPU2", "--report", "-",
                                   "--", "vllm", "serve", "/models/Qwen3-8B"])
    assert res.exit_code == 1
    assert "NPU201" in res.output and "rank(s) 5 killed by SIGSEGV" in res.output


def test_a_snapshot_without_a_compute_record_is_unknown_not_a_failure():
    res = CliRunner().invoke(cli, ["check", "--replay", str(EXAMPLE), "--compute", "--select", "NPU2", "--format",
                                   "json"])
    f = by_code(json.loads(res.output))
    assert {c: x["status"] for c, x in f.items()} == {f"NPU20{i}": "unknown" for i in range(1, 7)}
    assert "the snapshot holds no compute record" in f["NPU201"]["message"]


def test_an_unreadable_launcher_record_is_a_finding_not_a_crash(tmp_path):
    snap = load_snapshot(EXAMPLE)
    exe, cfg = _orders(snap)
    bad = {"ranks": [{"rank": 0, "steps": [], "returncode": "not a number"}]}
    snap.commands.append(CommandEntry(argv=canonical_argv(launcher_argv(exe, cfg)),
                                      stdout=f"{MARKER} {json.dumps(bad)}\n"))
    path = tmp_path / "bad.snapshot.json"
    path.write_text(snap.dump())
    res = CliRunner().invoke(cli, ["check", "--replay", str(path), "--compute", "--select", "NPU201", "--format",
                                   "json"])
    f = by_code(json.loads(res.output))["NPU201"]
    assert f["status"] == "fail" and "its record is unreadable" in f["message"]
