"""HOST checks: pass, fail and unknown for each, on facts given by hand; probes on hand-built fake roots."""

import pytest

from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.probes.host_facts import (
    ContainerFact,
    DiskFact,
    DiskPlace,
    GccFact,
    LimitsFact,
    MemoryFact,
    PcieFact,
    PcieLink,
    SelinuxFact,
    ShmFact,
    TimeSyncFact,
)
from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from ascend_doctor.seam.snapshot import CommandEntry, DirEntry, DiskEntry, FileEntry, ReplayHost, Snapshot
from tests.helpers import run_check

GIB = 1024 ** 3
PY_OK = PythonEnv(executable="/opt/v/bin/python", version="3.11.7", implementation="CPython", soabi="cpython-311-aarch64-linux-gnu",
                  abiflags="", pointer_bits=64, machine="aarch64", libc="glibc", libc_version="2.35",
                  distributions=[Distribution(name="torch", version="2.9.0")])


def status(code, facts, **opts):
    return run_check(code, facts, opts).status


@pytest.mark.parametrize("code, good, bad", [
    ("HOST101", {"python": PY_OK}, {"python": PY_OK.model_copy(update={"abiflags": "t"})}),
    ("HOST102", {"selinux": SelinuxFact(enforce_file="0", kernel_has_selinux=True)},
     {"selinux": SelinuxFact(enforce_file="1", kernel_has_selinux=True)}),
    ("HOST103", {"limits": LimitsFact(nofile_soft=65535, nofile_hard=1048576)},
     {"limits": LimitsFact(nofile_soft=1024, nofile_hard=1048576)}),
    ("HOST104", {"shm": ShmFact(total_bytes=32 * GIB, free_bytes=32 * GIB)},
     {"shm": ShmFact(total_bytes=64 * 1024 * 1024, free_bytes=60 * 1024 * 1024)}),
    ("HOST105", {"memory": MemoryFact(total_kib=1024 ** 3, available_kib=900 * 1024 ** 2)},
     {"memory": MemoryFact(total_kib=16 * 1024 ** 2, available_kib=8 * 1024 ** 2)}),
    ("HOST106", {"disk": DiskFact(places=[DiskPlace(role="model dir", path="/m", measured_path="/m",
                                                    total_bytes=2000 * GIB, free_bytes=1000 * GIB)])},
     {"disk": DiskFact(places=[DiskPlace(role="model dir", path="/m", measured_path="/m",
                                         total_bytes=2000 * GIB, free_bytes=10 * GIB)])}),
    ("HOST107", {"timesync": TimeSyncFact(synchronized=True, via="chrony")},
     {"timesync": TimeSyncFact(synchronized=False, via="chrony")}),
    ("HOST110", {"pcie": PcieFact(sysfs_readable=True, devices=[PcieLink(slot="0000:c1:00.0", current_width=16,
                                                                         max_width=16, current_speed="16.0 GT/s PCIe",
                                                                         max_speed="16.0 GT/s PCIe")])},
     {"pcie": PcieFact(sysfs_readable=True, devices=[PcieLink(slot="0000:c1:00.0", current_width=8, max_width=16,
                                                              current_speed="16.0 GT/s PCIe",
                                                              max_speed="16.0 GT/s PCIe")])}),
])
def test_pass_fail_unknown(code, good, bad):
    assert status(code, good) == Status.PASS
    assert status(code, bad) == Status.FAIL
    assert status(code, {}) == Status.UNKNOWN  # no fact -> unknown, never fail


def test_python_32bit_and_pypy_fail_with_reason():
    f = run_check("HOST101", {"python": PY_OK.model_copy(update={"pointer_bits": 32, "implementation": "PyPy"})})
    assert f.status == Status.FAIL and "32-bit" in f.message and "PyPy" in f.message


def test_selinux_permissive_but_configured_enforcing_warns():
    f = run_check("HOST102", {"selinux": SelinuxFact(enforce_file="0", config_mode="enforcing", kernel_has_selinux=True)})
    assert f.status == Status.WARN and "next boot" in f.message


def test_selinux_cannot_tell():
    f = run_check("HOST102", {"selinux": SelinuxFact(kernel_has_selinux=True)})
    assert f.status == Status.UNKNOWN


def test_nofile_hard_limit_too_low_says_root_needed():
    f = run_check("HOST103", {"limits": LimitsFact(nofile_soft=1024, nofile_hard=4096),
                              "container": ContainerFact(in_container=False)})
    assert f.status == Status.FAIL and "only root raises" in f.message and "LimitNOFILE=65535" in f.remediation


def test_nofile_hard_limit_in_a_container_names_the_runtime_not_root():
    """#40 item 16: root inside a container gets EPERM from `ulimit -n`: the runtime sets the hard limit."""
    f = run_check("HOST103", {"limits": LimitsFact(nofile_soft=1024, nofile_hard=4096),
                              "container": ContainerFact(in_container=True, runtime="docker",
                                                         signals=["/.dockerenv exists"])})
    assert f.status == Status.FAIL and "set by the container runtime" in f.message
    assert "root" not in f.message.split("(")[0]
    assert "--ulimit nofile=65535:65535" in f.remediation
    assert any(e.source == "container signals" for e in f.evidence)


def test_shm_between_minimum_and_recommended_warns():
    assert status("HOST104", {"shm": ShmFact(total_bytes=2 * GIB, free_bytes=2 * GIB)}) == Status.WARN
    assert status("HOST104", {"shm": ShmFact(mounted=False)}) == Status.FAIL


def test_time_sync_nothing_to_ask_is_unknown():
    assert status("HOST107", {"timesync": TimeSyncFact(seen=["timedatectl: not found"])}) == Status.UNKNOWN


def test_gcc_missing_warns_info_severity():
    f = run_check("HOST108", {"gcc": GccFact(found=False)})
    assert f.status == Status.WARN and f.level.value == "info"
    assert status("HOST108", {"gcc": GccFact(found=True, version="12.2.0")}) == Status.PASS


def test_container_reports_runtime():
    f = run_check("HOST109", {"container": ContainerFact(in_container=True, runtime="docker", signals=["/.dockerenv exists"])})
    assert f.status == Status.PASS and "docker" in f.message


def test_pcie_speed_drop_warns_and_names_slot():
    f = run_check("HOST110", {"pcie": PcieFact(sysfs_readable=True, devices=[
        PcieLink(slot="0000:41:00.0", current_width=16, max_width=16, current_speed="2.5 GT/s PCIe",
                 max_speed="16.0 GT/s PCIe")])})
    assert f.status == Status.WARN and "0000:41:00.0" in f.message
    assert status("HOST110", {"pcie": PcieFact(sysfs_readable=False)}) == Status.UNKNOWN
    assert status("HOST110", {"pcie": PcieFact(sysfs_readable=True)}) == Status.SKIP


# Probes on fake roots ----------------------------------------------------------------------------------------------
def facts_of(snapshot, *names, **opts):
    store = FactStore(ReplayHost(snapshot), RunOptions(**opts))
    return [store.fact(n) for n in names]


def test_probes_on_a_fake_root():
    snap = Snapshot.model_validate(dict(
        env={"HOME": "/home/svc", "HF_HOME": "/data/hf"},
        files={
            "/sys/fs/selinux/enforce": FileEntry(content="1\n"),
            "/etc/selinux/config": FileEntry(content="# c\nSELINUX=enforcing\nSELINUXTYPE=targeted\n"),
            "/proc/self/limits": FileEntry(content="Limit  Soft Limit  Hard Limit  Units\n"
                                                   "Max open files            1024                 524288               files\n"),
            "/proc/meminfo": FileEntry(content="MemTotal:       1583989660 kB\nMemAvailable:   1502233100 kB\n"
                                               "HugePages_Total:       0\nHugepagesize:       2048 kB\n"),
            "/proc/mounts": FileEntry(content="shm /dev/shm tmpfs rw,nosuid,nodev,size=65536k 0 0\n"),
            "/.dockerenv": FileEntry(content=""),
            "/sys/bus/pci/devices/0000:c1:00.0/vendor": FileEntry(content="0x19e5\n"),
            "/sys/bus/pci/devices/0000:c1:00.0/device": FileEntry(content="0xd802\n"),
            "/sys/bus/pci/devices/0000:c1:00.0/class": FileEntry(content="0x120000\n"),
            "/sys/bus/pci/devices/0000:c1:00.0/current_link_width": FileEntry(content="8\n"),
            "/sys/bus/pci/devices/0000:c1:00.0/max_link_width": FileEntry(content="16\n"),
            "/sys/bus/pci/devices/0000:c1:00.0/current_link_speed": FileEntry(content="16.0 GT/s PCIe\n"),
            "/sys/bus/pci/devices/0000:c1:00.0/max_link_speed": FileEntry(content="16.0 GT/s PCIe\n"),
            "/sys/bus/pci/devices/0000:00:01.0/vendor": FileEntry(content="0x8086\n"),
        },
        dirs={"/sys/bus/pci/devices": DirEntry(entries=["0000:00:01.0", "0000:c1:00.0"])},
        disk={"/dev/shm": DiskEntry(total_bytes=64 * 1024 * 1024, free_bytes=64 * 1024 * 1024),
              "/data": DiskEntry(total_bytes=4000 * GIB, free_bytes=3000 * GIB),
              "/home/svc": DiskEntry(total_bytes=100 * GIB, free_bytes=20 * GIB)},
        commands=[CommandEntry(argv=["getenforce"], stdout="Enforcing\n"),
                  CommandEntry(argv=["chronyc", "tracking"], stdout="Reference ID    : A9FEA97B\nLeap status     : Normal\n")],
    ))
    selinux, limits, shm, mem, disk, ts, ctr, pcie = facts_of(
        snap, "selinux", "limits", "shm", "memory", "disk", "timesync", "container", "pcie")
    assert selinux.mode == "enforcing" and selinux.config_mode == "enforcing"
    assert (limits.nofile_soft, limits.nofile_hard) == (1024, 524288)
    assert shm.total_bytes == 64 * 1024 * 1024 and "size=65536k" in shm.mount_line
    assert mem.available_kib == 1502233100
    roles = {p.role: p for p in disk.places}
    assert roles["Hugging Face cache"].path == "/data/hf/hub" and roles["Hugging Face cache"].measured_path == "/data"
    assert roles["ModelScope cache"].measured_path == "/home/svc" and roles["ModelScope cache"].free_bytes == 20 * GIB
    assert ts.synchronized is True and ts.via == "chrony"
    assert ctr.in_container and ctr.runtime == "docker"
    assert [d.slot for d in pcie.devices] == ["0000:c1:00.0"] and pcie.devices[0].current_width == 8


def test_probes_on_an_empty_root_give_facts_or_unavailable():
    store = FactStore(ReplayHost(Snapshot()), RunOptions())
    assert store.try_fact("limits") is None and store.try_fact("memory") is None
    assert store.fact("selinux").mode == "disabled"
    assert store.fact("timesync").synchronized is None
    assert store.fact("gcc").found is False
    assert store.fact("container").in_container is False
    assert store.fact("pcie").sysfs_readable is False
    assert store.try_fact("shm") is None  # a snapshot that did not record /dev/shm cannot say


def test_policy_file_layers_over_the_shipped_thresholds(tmp_path):
    """`--policy FILE`: a copy of host-policy.toml with another /dev/shm minimum changes HOST104's verdict; a broken
    policy is a one-line input error (exit 2) before anything runs."""
    import subprocess
    import sys

    from tests.helpers import REPO

    broken = REPO / "examples" / "broken-host.snapshot.json"  # 64 MiB /dev/shm
    text = (REPO / "matrices" / "host-policy.toml").read_text(encoding="utf-8")
    lenient = tmp_path / "lenient.toml"
    lenient.write_text(text.replace("[shm_gib]\nminimum = 1\n", "[shm_gib]\nminimum = 0.05\n"), encoding="utf-8")
    assert lenient.read_text(encoding="utf-8") != text

    def host104(*extra):
        r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--replay", str(broken), "--select",
                            "HOST104", "--format", "json", *extra], capture_output=True, text=True, cwd=REPO,
                           timeout=120)
        return r

    import json

    assert json.loads(host104().stdout)["findings"][0]["status"] == "fail"
    assert json.loads(host104("--policy", str(lenient)).stdout)["findings"][0]["status"] != "fail"
    bad = tmp_path / "bad.toml"
    bad.write_text("[shm_gib]\nminimum = \"big\"\n", encoding="utf-8")  # only some thresholds: fine; a wrong one not
    r = host104("--policy", str(bad))
    assert r.returncode == 2 and "host policy" in r.stderr and len(r.stderr.strip().splitlines()) == 1
