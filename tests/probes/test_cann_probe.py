"""The `cann` and `driver` probes over hand-built snapshots of every CANN layout (no real machine)."""

from __future__ import annotations

from typing import Optional

from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.probes import load_probes
from ascend_doctor.probes.cann import CannFact, DriverFact, cann_probe, driver_probe, norm_arch
from ascend_doctor.seam.snapshot import ReplayHost, Snapshot
from tests.helpers import DATA

A = "/usr/local/Ascend"
TK = f"{A}/ascend-toolkit"


def data(name: str) -> str:
    return (DATA / "ascend_files" / name).read_text(encoding="utf-8")


def cfg(version: str, internal: str = "7.6.0.1.220") -> str:
    comps = ("runtime", "compiler", "hccl", "opp", "toolkit", "aoe", "ncs", "opp_kernel")
    lines = ["# version: 1.0"] + [f"{c}_{s}_version=[{internal}:{version}]"
                                  for s in ("running", "upgrade", "installed") for c in comps]
    return "\n".join(lines) + "\n"


def install_info(version: str, arch: str, root: str) -> str:
    return (f"package_name=Ascend-cann-toolkit\nversion={version}\ninnerversion=V100R001C20SPC001B251\n"
            f"compatible_version=[V100R001C15],[V100R001C20]\narch={arch}\nos=linux\npath={root}/{arch}-linux\n")


def old_layout(version: str = "8.0.0", cfg_version: Optional[str] = None, arch: str = "aarch64",
               env: Optional[dict] = None, machine: str = "aarch64", **extra) -> Snapshot:
    """ascend-toolkit/latest -> <version>, as installed by CANN <= 8.3 run packages."""
    root = f"{TK}/{version}"
    files = {f"{root}/version.cfg": {"content": cfg(cfg_version or version)},
             f"{root}/{arch}-linux/ascend_toolkit_install.info": {"content": install_info(cfg_version or version,
                                                                                          arch, root)}}
    files.update(extra.pop("files", {}))
    return Snapshot.model_validate(dict(
        system={"machine": machine},
        env=env if env is not None else {
            "ASCEND_HOME_PATH": f"{TK}/latest", "ASCEND_TOOLKIT_HOME": f"{TK}/latest",
            "ASCEND_OPP_PATH": f"{TK}/latest/opp",
            "LD_LIBRARY_PATH": f"{TK}/latest/lib64:{TK}/latest/lib64/plugin/opskernel:{A}/driver/lib64/driver:"},
        dirs={A: {"entries": ["ascend-toolkit", "driver", "firmware"]},
              TK: {"entries": [version, "latest", "set_env.sh"]},
              root: {"entries": ["bin", "lib64", f"{arch}-linux", "opp", "version.cfg"]}},
        links={f"{TK}/latest": {"target": version, "resolved": root}},
        files=files, **extra))


def run(func, snap: Snapshot, preset: Optional[dict] = None):
    store = FactStore(ReplayHost(snap), RunOptions(), probes={}, preset=preset)
    return func(ReplayHost(snap), store)


def test_probes_registered():
    probes = load_probes()
    assert probes["cann"] is cann_probe and probes["driver"] is driver_probe


def test_old_layout_sourced_env_is_consistent():
    fact: CannFact = run(cann_probe, old_layout())
    assert fact.found
    assert fact.version == "8.0.0" and fact.arch == "aarch64" and fact.host_arch == "aarch64"
    assert fact.arch_mismatch is False
    assert fact.ld_library_path_has_toolkit is True
    assert fact.inconsistencies == []
    assert len(fact.installs) == 1
    inst = fact.active
    assert inst.root == f"{TK}/8.0.0" and inst.dir_version == "8.0.0"
    assert f"{TK}/latest" in inst.aliases and f"{TK}/8.0.0" in inst.aliases
    assert inst.version_source == "version.cfg toolkit_running_version"
    assert inst.install_info.version == "8.0.0"
    latest = next(c for c in fact.candidates if c.path == f"{TK}/latest")
    assert (latest.exists, latest.link_target, latest.resolved) == (True, "8.0.0", f"{TK}/8.0.0")
    assert fact.env["ASCEND_HOME_PATH"] == f"{TK}/latest"


def test_cann_85_layout_with_cann_symlinks_and_no_version_cfg():
    root = f"{A}/cann-8.5.0"
    snap = Snapshot.model_validate(dict(
        system={"machine": "aarch64"},
        env={"ASCEND_HOME_PATH": f"{A}/cann", "LD_LIBRARY_PATH": f"{A}/cann/lib64:{A}/cann/lib64/plugin/nnengine"},
        dirs={A: {"entries": ["ascend-toolkit", "cann", "cann-8.5.0", "driver"]},
              TK: {"entries": ["latest"]},
              root: {"entries": ["aarch64-linux", "bin", "lib64", "set_env.sh"]}},
        links={f"{A}/cann": {"target": "cann-8.5.0", "resolved": root},
               f"{TK}/latest": {"target": f"{A}/cann", "resolved": root}},
        files={f"{root}/aarch64-linux/ascend_toolkit_install.info": {
            "content": data("toolkit_install_8.5.0_cann_layout.info")}}))
    fact = run(cann_probe, snap)
    assert fact.found and fact.version == "8.5.0" and fact.arch == "aarch64"
    assert len(fact.installs) == 1
    assert fact.active.root == root and fact.active.dir_version == "8.5.0"
    assert fact.active.version_cfg is None and fact.active.version_cfg_error is None
    assert fact.active.version_source == f"{root}/aarch64-linux/ascend_toolkit_install.info"
    assert sorted(fact.active.aliases) == sorted([f"{A}/cann", f"{TK}/latest", root])
    assert fact.ld_library_path_has_toolkit is True
    assert fact.inconsistencies == []


def test_version_cfg_disagrees_with_symlink_target():
    # latest -> 8.0.RC3, but the files in that directory say 8.0.0 (an in-place copy/upgrade).
    fact = run(cann_probe, old_layout(version="8.0.RC3", cfg_version="8.0.0"))
    assert fact.version == "8.0.0"
    assert fact.active.dir_version == "8.0.RC3"
    assert any("named for 8.0.RC3" in x and "8.0.0" in x for x in fact.inconsistencies)


def test_version_cfg_disagrees_with_install_info():
    root = f"{TK}/8.1.RC1"
    snap = old_layout(version="8.1.RC1", files={
        f"{root}/aarch64-linux/ascend_toolkit_install.info": {"content": install_info("8.0.0", "aarch64", root)}})
    fact = run(cann_probe, snap)
    assert any("version.cfg says CANN 8.1.RC1" in x and "8.0.0" in x for x in fact.inconsistencies)


def test_x86_toolkit_on_aarch64_host():
    fact = run(cann_probe, old_layout(arch="x86_64", machine="aarch64"))
    assert fact.arch == "x86_64" and fact.host_arch == "aarch64"
    assert fact.arch_mismatch is True
    assert not any("built for x86_64" in x for x in fact.inconsistencies)  # its own field, CANN103 reports it


def test_arm64_dir_name_counts_as_aarch64():
    assert norm_arch("arm64") == "aarch64" and norm_arch("AMD64") == "x86_64" and norm_arch("") is None
    fact = run(cann_probe, old_layout(arch="aarch64", machine="arm64"))
    assert fact.arch_mismatch is False


def test_set_env_not_sourced():
    fact = run(cann_probe, old_layout(env={"PATH": "/usr/bin"}))
    assert fact.found and fact.version == "8.0.0"  # found through the default path
    assert fact.ld_library_path_has_toolkit is False
    assert fact.env == {}


def test_ld_library_path_of_another_install_does_not_count():
    fact = run(cann_probe, old_layout(env={"LD_LIBRARY_PATH": "/opt/other/ascend-toolkit/latest/lib64"}))
    assert fact.ld_library_path_has_toolkit is False


def test_no_cann_at_all():
    fact = run(cann_probe, Snapshot.model_validate(dict(system={"machine": "x86_64"})))
    assert fact.found is False
    assert fact.version is None and fact.active is None and fact.installs == []
    assert f"{TK}/latest" in fact.searched and f"{A}/cann" in fact.searched
    assert all(not c.exists for c in fact.candidates)
    assert fact.ld_library_path_has_toolkit is None


def test_env_var_pointing_nowhere_falls_back_to_default():
    env = {"ASCEND_HOME_PATH": "/opt/cann/latest", "LD_LIBRARY_PATH": f"{TK}/latest/lib64"}
    fact = run(cann_probe, old_layout(env=env))
    assert fact.found and fact.active.root == f"{TK}/8.0.0"
    assert "ASCEND_HOME_PATH=/opt/cann/latest does not exist" in fact.inconsistencies
    assert fact.searched[0] == "/opt/cann/latest"


def test_env_vars_point_at_different_installs():
    other = f"{TK}/8.1.RC1"
    snap = old_layout(env={"ASCEND_HOME_PATH": f"{TK}/latest", "ASCEND_TOOLKIT_HOME": other},
                      files={f"{other}/version.cfg": {"content": cfg("8.1.RC1")}})
    snap = Snapshot.model_validate({**snap.model_dump(), "dirs": {
        **snap.model_dump()["dirs"], other: {"entries": ["version.cfg"]},
        TK: {"entries": ["8.0.0", "8.1.RC1", "latest"]}}})
    fact = run(cann_probe, snap)
    assert [i.root for i in fact.installs] == [f"{TK}/8.0.0", other]
    assert fact.version == "8.0.0"  # ASCEND_HOME_PATH is looked at first
    assert any("different CANN installs" in x for x in fact.inconsistencies)


def test_half_upgraded_version_cfg_is_an_inconsistency():
    snap = old_layout(files={f"{TK}/8.0.0/version.cfg": {"content": data("version_cfg_no_toolkit_half_upgraded.cfg")}})
    fact = run(cann_probe, snap)
    assert fact.version == "8.0.0"
    assert any("different versions" in x and "runtime=8.0.RC3" in x for x in fact.inconsistencies)


def test_unparseable_version_cfg_falls_back_to_install_info():
    snap = old_layout(files={f"{TK}/8.0.0/version.cfg": {"content": "<html>404</html>\n"}})
    fact = run(cann_probe, snap)
    assert fact.active.version_cfg is None and fact.active.version_cfg_error
    assert fact.version == "8.0.0" and fact.active.version_source.endswith("ascend_toolkit_install.info")


def test_unreadable_install_listing_tries_host_arch_dirs():
    snap = old_layout()
    del snap.dirs[f"{TK}/8.0.0"]
    fact = run(cann_probe, snap)
    assert fact.active.install_info is not None and fact.arch == "aarch64"


def test_nnal_atb_found_via_atb_home_path():
    env = {"ASCEND_HOME_PATH": f"{TK}/latest", "LD_LIBRARY_PATH": f"{TK}/latest/lib64",
           "ATB_HOME_PATH": f"{A}/nnal/atb/latest/atb/cxx_abi_1"}
    atb = "    Ascend-cann-atb : 8.0.0\n    Ascend-cann-atb Version : 8.0.0.B100\n    Platform : aarch64\n"
    fact = run(cann_probe, old_layout(env=env, files={f"{A}/nnal/atb/latest/version.info": {"content": atb}}))
    assert fact.nnal.found and fact.nnal.version == "8.0.0"
    assert fact.nnal.info.build_version == "8.0.0.B100"
    assert fact.nnal.cxx_abi == 1
    assert fact.nnal.version_info_path == f"{A}/nnal/atb/latest/version.info"
    assert not any("NNAL" in x for x in fact.inconsistencies) and fact.nnal.cann_mismatch is False


def test_nnal_built_for_other_cann():
    atb = data("atb_version.info")  # Ascend-cann-atb : 8.2.RC1
    fact = run(cann_probe, old_layout(files={f"{A}/nnal/atb/latest/version.info": {"content": atb}}))
    assert fact.nnal.found and fact.nnal.atb_home_path is None
    assert fact.nnal.version == "8.2.RC1" and fact.version == "8.0.0" and fact.nnal.cann_mismatch is True


def test_nnal_absent():
    fact = run(cann_probe, old_layout())
    assert fact.nnal.found is False and fact.nnal.version is None
    assert f"{A}/nnal/atb/latest/version.info" in fact.nnal.searched


# --- driver ---------------------------------------------------------------------------------------------------------

def driver_snapshot(**over) -> Snapshot:
    files = {"/etc/ascend_install.info": {"content": data("ascend_install.info")},
             f"{A}/driver/version.info": {"content": data("driver_version_25.0.rc1.1.info")},
             f"{A}/firmware/version.info": {"content": data("firmware_version_7.7.0.1.231.info")}}
    files.update(over.pop("files", {}))
    return Snapshot.model_validate(dict(files={k: v for k, v in files.items() if v is not None},
                    dirs={f"{A}/driver/lib64": {"entries": ["common", "driver"]}}, **over))


def test_driver_firmware_install_info():
    fact: DriverFact = run(driver_probe, driver_snapshot())
    assert fact.found and fact.version == "25.0.rc1.1"
    assert fact.version_info.compatible_version_fw.max == "7.7.99"
    assert fact.firmware_version == "7.7.0.1.231" and fact.firmware_path == f"{A}/firmware/version.info"
    assert fact.install_info.driver_install_path == A
    assert fact.lib64_present is True
    assert fact.version_info_error is None and fact.firmware_error is None


def test_driver_missing_is_a_fact():
    fact = run(driver_probe, Snapshot())
    assert fact.found is False and fact.version is None and fact.firmware_version is None
    assert fact.searched == [f"{A}/driver/version.info"]
    assert fact.lib64_present is False
    assert fact.install_info is None and fact.install_info_error is None


def test_driver_in_custom_install_path():
    info = data("ascend_install.info").replace("Driver_Install_Path_Param=/usr/local/Ascend",
                                               "Driver_Install_Path_Param=/data/ai/Ascend")
    snap = Snapshot.model_validate(dict(files={"/etc/ascend_install.info": {"content": info},
                           "/data/ai/Ascend/driver/version.info": {"content": data("driver_version_25.0.rc1.1.info")}},
                    dirs={"/data/ai/Ascend/driver/lib64": {"entries": []}}))
    fact = run(driver_probe, snap)
    assert fact.found and fact.driver_dir == "/data/ai/Ascend/driver"
    assert fact.searched[0] == "/data/ai/Ascend/driver/version.info"
    assert fact.lib64_present is True


def test_driver_version_info_unreadable_and_firmware_garbage():
    snap = driver_snapshot(files={
        f"{A}/driver/version.info": {"error": "permission_denied", "error_message": "Permission denied"},
        f"{A}/firmware/version.info": {"content": "garbage\n"}})
    fact = run(driver_probe, snap)
    assert fact.found is False
    assert "Permission denied" in fact.version_info_error
    assert fact.firmware is None and fact.firmware_error


def test_symlink_chain_given_only_as_targets():
    """latest -> /usr/local/Ascend/cann -> cann-8.5.0, recorded without `resolved` (a hand-written snapshot)."""
    root = f"{A}/cann-8.5.0"
    snap = Snapshot.model_validate(dict(
        system={"machine": "aarch64"},
        links={f"{TK}/latest": {"target": f"{A}/cann"}, f"{A}/cann": {"target": "cann-8.5.0"}},
        dirs={root: {"entries": ["aarch64-linux"]}},
        files={f"{root}/aarch64-linux/ascend_toolkit_install.info": {
            "content": data("toolkit_install_8.5.0_cann_layout.info")}}))
    fact = run(cann_probe, snap)
    assert fact.found and fact.version == "8.5.0"
    assert [i.root for i in fact.installs] == [root]
    assert sorted(fact.active.aliases) == sorted([f"{TK}/latest", f"{A}/cann"])
    assert fact.ld_library_path_has_toolkit is False
