"""A verdict a CI gate can trust: no OK where the doctor did not look, bad paths are usage errors, container facts are
not host facts, disagreeing sources are findings, a crashed probe is an error — and the report says where it ran and
what stack it found."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_doctor.probes.host_facts import ContainerFact, MemoryFact, PcieFact, SelinuxFact, TimeSyncFact
from ascend_doctor.report import Status
from tests.helpers import REPO, run_check

EXAMPLES = REPO / "examples"
HEALTHY = EXAMPLES / "healthy-a2.snapshot.json"
CONTAINER = EXAMPLES / "container-missing-devices.snapshot.json"
HOST = ContainerFact(in_container=False)
DOCKER = ContainerFact(in_container=True, runtime="docker", signals=["/.dockerenv exists"])


def run(*args, cwd=None, env=None):
    e = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], cwd=cwd or REPO, env=e,
                          capture_output=True, text=True, timeout=120)


def snapshot(tmp_path: Path, edit, src: Path = HEALTHY) -> Path:
    data = json.loads(src.read_text())
    edit(data)
    p = tmp_path / "s.json"
    p.write_text(json.dumps(data))
    return p


def hung_npu_smi(data):
    for c in data["commands"]:
        if c["argv"][:1] == ["npu-smi"]:
            c.update(stdout="", returncode=None, error="timeout", error_message="killed after 10s", duration_s=10.0)


# Paths the user names ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args, needle", [
    (["--python", "/usr/bin/pyhton3", "--select", "TORCH,VLLM"], "'/usr/bin/pyhton3': no such file"),
    (["--model-dir", "/modles/x"], "'/modles/x': no such directory"),
    (["--replay", "/nope.json"], "'/nope.json' does not exist"),
    (["--matrix", "/nope.toml"], "'/nope.toml' does not exist"),
    (["--checks-dir", "/nope-dir"], "'/nope-dir' does not exist"),
    (["--config", "/nope.toml"], "'/nope.toml' does not exist"),
    (["--checks-dir", str(HEALTHY)], "is a file"),
])
def test_a_path_that_does_not_exist_is_a_usage_error(args, needle):
    r = run("check", *args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert needle in r.stderr and r.stderr.count("\n") == 1 and r.stdout == ""


def test_config_paths_are_checked_too(tmp_path: Path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[options]\nmatrix = ["/nope/golden.toml"]\n')
    r = run("check", "--replay", str(HEALTHY), "--config", str(cfg))
    assert r.returncode == 2 and f"config file {cfg}: options.matrix: '/nope/golden.toml': no such file" in r.stderr


def test_a_replay_python_must_be_one_the_snapshot_recorded():
    r = run("check", "--replay", str(HEALTHY), "--python", "/usr/bin/pyhton3")
    assert r.returncode == 2 and "not an interpreter recorded in the snapshot" in r.stderr


# INCOMPLETE -----------------------------------------------------------------------------------------------------------
def test_unknown_checks_that_matter_make_the_verdict_incomplete(tmp_path: Path):
    snap = snapshot(tmp_path, hung_npu_smi)
    r = run("check", "--replay", str(snap), "--format", "json")
    rep = json.loads(r.stdout)
    assert r.returncode == 0 and rep["verdict"] == "incomplete"
    assert {"NPU101", "NPU102", "NPU103", "NPU104"} <= set(rep["incomplete"])
    # HW104 too: triton-ascend is installed and, with npu-smi hung, nobody can say whether this is a 300I Duo; nor
    # whether the chips are ones the release runs on (HW107) and the kernels cover (CANN108).
    assert set(rep["incomplete"]) == {"NPU101", "NPU102", "NPU103", "NPU104", "HW104", "HW107", "CANN108"}
    r = run("check", "--replay", str(snap))
    assert r.stdout.splitlines()[r.stdout.splitlines().index("") + 1].startswith("INCOMPLETE — 7 unknown")
    assert "7 checks of severity error or critical could not run: CANN108, HW104, HW107, NPU101" in r.stdout
    assert "7 checks could not run: `npu-smi info` timed out after 10.0s" in r.stdout  # one root cause, one entry


def test_fail_on_unknown_makes_an_incomplete_run_exit_1(tmp_path: Path):
    snap = snapshot(tmp_path, hung_npu_smi)
    r = run("check", "--replay", str(snap), "--fail-on-unknown", "--format", "json")
    assert r.returncode == 1 and json.loads(r.stdout)["exit_code"] == 1
    cfg = tmp_path / "ascend-doctor.toml"
    cfg.write_text("[options]\nfail_on_unknown = true\n")
    assert run("check", "--replay", str(snap), "-q", cwd=tmp_path).returncode == 1


def test_a_clean_run_is_ok():
    rep = json.loads(run("check", "--replay", str(HEALTHY), "--format", "json").stdout)
    assert rep["verdict"] == "ok" and rep["incomplete"] == []


# A crashed probe ------------------------------------------------------------------------------------------------------
def test_a_crashed_probe_is_an_error_finding_with_its_traceback():
    from ascend_doctor.core.evaluator import CheckContext, evaluate_one
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.facts import FactStore

    def boom(host, ctx):
        raise KeyError("selinux probe bug")

    reg = load_registry(entry_points=False)
    opts = RunOptions()
    store = FactStore(None, opts, probes={"selinux": boom, "container": lambda h, c: HOST})
    f = evaluate_one(reg.get("HOST102"), CheckContext(store, opts))
    assert f.status == Status.ERROR and "selinux probe crashed: KeyError" in f.message
    assert "raise KeyError" in f.traceback


# Container facts are not host facts -----------------------------------------------------------------------------------
def test_in_a_container_selinux_time_and_pcie_are_unknown_not_pass():
    rep = json.loads(run("check", "--replay", str(CONTAINER), "--format", "json").stdout)
    by = {f["code"]: f for f in rep["findings"]}
    for code in ("HOST102", "HOST107", "HOST110"):
        assert by[code]["status"] == "unknown" and "inside a container" in by[code]["message"], code
        assert "run `ascend-doctor check` on the host" in by[code]["message"]
    assert rep["host"]["where"] == "container" and rep["host"]["runtime"] == "docker"


def test_in_a_container_getenforce_disabled_says_nothing_but_a_visible_selinuxfs_does():
    f = run_check("HOST102", {"selinux": SelinuxFact(getenforce="Disabled"), "container": DOCKER})
    assert f.status == Status.UNKNOWN
    f = run_check("HOST102", {"selinux": SelinuxFact(enforce_file="1", kernel_has_selinux=True), "container": DOCKER})
    assert f.status == Status.FAIL
    f = run_check("HOST102", {"selinux": SelinuxFact(enforce_file="0", config_mode="enforcing",
                                                     kernel_has_selinux=True), "container": DOCKER})
    assert f.status == Status.PASS  # the image's /etc/selinux/config is not the host's boot config


def test_on_the_host_no_selinux_anywhere_is_disabled():
    f = run_check("HOST102", {"selinux": SelinuxFact(), "container": HOST})
    assert f.status == Status.PASS and "disabled" in f.message


def test_in_a_container_time_sync_unknown_names_the_host_and_an_answer_is_judged():
    f = run_check("HOST107", {"timesync": TimeSyncFact(seen=["chronyc: not found"]), "container": DOCKER})
    assert f.status == Status.UNKNOWN and "inside a container" in f.message
    f = run_check("HOST107", {"timesync": TimeSyncFact(synchronized=True, via="chrony"), "container": DOCKER})
    assert f.status == Status.PASS


def test_in_a_container_an_empty_sysfs_is_unknown_and_a_real_one_is_judged():
    f = run_check("HOST110", {"pcie": PcieFact(sysfs_readable=True, listed=0), "container": DOCKER})
    assert f.status == Status.UNKNOWN and "inside a container" in f.message
    f = run_check("HOST110", {"pcie": PcieFact(sysfs_readable=True, listed=40), "container": DOCKER})
    assert f.status == Status.SKIP and "among the 40 PCI functions" in f.message


def test_container_memory_limit_wins_over_the_hosts_meminfo():
    gib = 1024 ** 3
    m = MemoryFact(total_kib=1_500_000_000, available_kib=1_400_000_000, cgroup_limit_bytes=16 * gib,
                   cgroup_usage_bytes=12 * gib, cgroup_file="/sys/fs/cgroup/memory.max")
    f = run_check("HOST105", {"memory": m, "container": DOCKER})
    assert f.status == Status.FAIL and "4 GiB available of 16 GiB (the container's memory limit)" in f.message
    m = MemoryFact(total_kib=1_500_000_000, available_kib=1_400_000_000, cgroup_error="no cgroup memory limit file")
    f = run_check("HOST105", {"memory": m, "container": DOCKER})
    assert f.status == Status.PASS and "the container's memory limit could not be read" in f.message


# Sources that disagree, unreadable files, hung and crashed tools ------------------------------------------------------
def test_enforcing_kernel_with_unparseable_getenforce_does_not_pass():
    f = run_check("HOST102", {"selinux": SelinuxFact(enforce_file="1", getenforce="???", kernel_has_selinux=True),
                              "container": HOST})
    assert f.status == Status.FAIL and "not a mode" in f.message
    f = run_check("HOST102", {"selinux": SelinuxFact(enforce_file="1", getenforce="Permissive",
                                                     kernel_has_selinux=True), "container": HOST})
    assert f.status == Status.FAIL and "disagree" in f.message
    f = run_check("HOST102", {"selinux": SelinuxFact(getenforce="???", kernel_has_selinux=True), "container": HOST})
    assert f.status == Status.UNKNOWN
    f = run_check("HOST102", {"selinux": SelinuxFact(enforce_error="Permission denied", kernel_has_selinux=True),
                              "container": HOST})
    assert f.status == Status.UNKNOWN and "Permission denied" in f.message


def test_unreadable_cann_files_are_permission_denied_not_not_installed(tmp_path: Path):
    def deny(d):
        for k in list(d["files"]):
            if k.endswith(("version.cfg", "ascend_toolkit_install.info")):
                d["files"][k] = {"content": None, "error": "permission_denied", "error_message": "Permission denied"}
    rep = json.loads(run("check", "--replay", str(snapshot(tmp_path, deny)), "--select", "CANN",
                         "--format", "json").stdout)
    by = {f["code"]: f for f in rep["findings"]}
    assert by["CANN101"]["status"] == "unknown" and "Permission denied" in by["CANN101"]["message"]
    assert all("not found" not in f["message"] for f in rep["findings"])
    assert by["CANN105"]["status"] == "pass"  # NNAL is found by its own paths


def test_a_crashed_npu_smi_is_crashed_not_absent(tmp_path: Path):
    def crash(d):
        for c in d["commands"]:
            if c["argv"] == ["npu-smi", "info"]:
                c.update(stdout="", returncode=-11, error=None, error_message="killed by signal SIGSEGV")
    rep = json.loads(run("check", "--replay", str(snapshot(tmp_path, crash)), "--select", "NPU",
                         "--format", "json").stdout)
    by = {f["code"]: f for f in rep["findings"]}
    assert by["NPU102"]["status"] == "fail" and "crashed (killed by signal SIGSEGV)" in by["NPU102"]["message"]
    for f in rep["findings"]:
        assert "not found" not in f["message"] and "absent" not in f["message"]


# Builds the official images ship -------------------------------------------------------------------------------------
def test_obs_and_dev_builds_match_their_public_release(tmp_path: Path):
    def builds(d):
        for env in d["python_envs"].values():
            for dist in env["distributions"]:
                if dist["name"].lower() in ("torch-npu", "torch_npu"):
                    dist["version"] = "2.8.0.post2+gitee7ba04"
                if dist["name"].lower() == "triton-ascend":
                    dist["version"] = "3.2.0.dev20250912"
    rep = json.loads(run("check", "--replay", str(snapshot(tmp_path, builds)), "--select", "TORCH,VLLM",
                         "--format", "json").stdout)
    by = {f["code"]: f for f in rep["findings"]}
    # pip check rejects triton-ascend 3.2.0.dev20250912 for vllm-ascend 0.13.0's ==3.2.0, and 0.13.0's matrix row
    # names no such build: VLLM104 reports the conflict (#22: an allowance must rest on a checked premise).
    assert by["VLLM104"]["status"] == "fail" and "3.2.0.dev20250912" in by["VLLM104"]["message"]
    assert by["VLLM108"]["status"] == "skip"  # no MindIE Turbo on the host: nothing to pair
    rest = [f for f in rep["findings"] if f["code"] not in ("VLLM104", "VLLM108")]
    assert all(f["status"] == "pass" for f in rest), [(f["code"], f["message"]) for f in rest]
    assert "a local build, +gitee7ba04" in by["TORCH101"]["message"]
    assert "3.2.0.dev20250912 is a build of 3.2.0" in by["VLLM102"]["message"]


def test_build_of():
    from ascend_doctor.text.versions import build_of

    assert build_of("3.2.0.dev20260322", "3.2.0") and build_of("2.9.0.post1+git4c901a4", "2.9.0")
    assert not build_of("3.2.0rc1", "3.2.0") and not build_of("3.2.1", "3.2.0") and not build_of("3.2.0", "3.2.0rc1")


# Where it ran and the stack it found ----------------------------------------------------------------------------------
def test_the_header_states_where_and_the_stack():
    rep = json.loads(run("check", "--replay", str(HEALTHY), "--format", "json").stdout)
    assert rep["host"]["where"] == "host" and rep["schema_version"] == "2.1"
    stack = rep["host"]["stack"]
    assert stack["driver"] == "25.5.0" and stack["cann"] == "8.5.0" and stack["cann_path"]
    assert stack["torch_npu"] == "2.8.0.post2" and stack["vllm_ascend"] == "0.13.0"
    assert stack["npu_model"] == "910B3" and stack["npu_count"] == 8
    out = run("check", "--replay", str(HEALTHY)).stdout
    assert "on the host" in out.splitlines()[0] and "stack: driver 25.5.0" in out
    rep = json.loads(run("check", "--replay", str(CONTAINER), "--format", "json").stdout)
    assert rep["host"]["stack"]["driver"] is None and rep["host"]["stack"]["npu_count"] is None  # not established
    schema = json.loads(run("schema").stdout)
    assert "stack" in json.dumps(schema) and "not established" in json.dumps(schema)
