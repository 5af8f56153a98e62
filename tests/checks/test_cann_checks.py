"""CANN checks on hand-built facts (layouts and versions from matrix-facts §3.2: 8.0.0 ascend-toolkit/latest,
8.5.0 cann-8.5.0 with cann/ and latest symlinks)."""

from ascend_doctor.parsers.ascend_files import parse_driver_version_info, parse_nnal_version_info
from ascend_doctor.probes.cann import CannFact, CannInstall, DriverFact, NnalFact
from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.helpers import run_check

ROOT80 = "/usr/local/Ascend/ascend-toolkit/8.0.0"
ROOT85 = "/usr/local/Ascend/cann-8.5.0"


def cann(version="8.0.0", root=ROOT80, arch="aarch64", host_arch="aarch64", sourced=True, nnal=None,
         inconsistencies=(), aliases=None):
    inst = CannInstall(root=root, aliases=aliases or ["/usr/local/Ascend/ascend-toolkit/latest"],
                       version=version, version_source="version.cfg toolkit_running_version",
                       version_cfg_path=f"{root}/version.cfg", arch=arch, arch_dirs=[f"{arch}-linux"])
    return CannFact(found=True, searched=["/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/cann"],
                    installs=[inst], active=inst, version=version, arch=arch, host_arch=host_arch,
                    arch_mismatch=(arch != host_arch) if arch and host_arch else None,
                    ld_library_path_has_toolkit=sourced, nnal=nnal or NnalFact(),
                    inconsistencies=list(inconsistencies))


NOT_FOUND = CannFact(found=False, searched=["/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/cann",
                                            "/root/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/nnae/latest"])
PY_VA = PythonEnv(executable="/opt/v/bin/python", version="3.11.7", machine="aarch64",
                  distributions=[Distribution(name="vllm_ascend", version="0.13.0")])
PY_NO_VA = PythonEnv(executable="/opt/v/bin/python", version="3.11.7", machine="aarch64",
                     distributions=[Distribution(name="torch", version="2.8.0")])
NNAL_85 = NnalFact(found=True, version_info_path="/usr/local/Ascend/nnal/atb/latest/version.info",
                   info=parse_nnal_version_info("Ascend-cann-atb : 8.5.0\nAscend-cann-atb Version : 8.5.0.B100\n"),
                   atb_home_path="/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1", cxx_abi=1,
                   searched=["/usr/local/Ascend/nnal/atb/latest/version.info"])


def driver(version):
    text = f"Version={version}\npackage_version={version}\n"
    return DriverFact(found=True, version_info=parse_driver_version_info(text))


# CANN101 --------------------------------------------------------------------------------------------------------
def test_cann_installed():
    f = run_check("CANN101", {"cann": cann()})
    assert f.status == Status.PASS and "8.0.0" in f.message and ROOT80 in f.message


def test_cann_missing_lists_where_it_looked():
    f = run_check("CANN101", {"cann": NOT_FOUND})
    assert f.status == Status.FAIL and "/usr/local/Ascend/cann" in f.message and "nnae" in f.message
    assert run_check("CANN101", {}).status == Status.UNKNOWN


# CANN102 --------------------------------------------------------------------------------------------------------
def test_cann_consistent_pass_and_fail():
    assert run_check("CANN102", {"cann": cann()}).status == Status.PASS
    bad = cann(version="8.5.0", root=ROOT85, inconsistencies=[
        "/usr/local/Ascend/ascend-toolkit/latest resolves to /usr/local/Ascend/cann-8.5.0, a directory named for "
        "8.5.0, but its files say CANN 8.3.RC2"])
    f = run_check("CANN102", {"cann": bad})
    assert f.status == Status.FAIL and "8.3.RC2" in f.message
    assert run_check("CANN102", {}).status == Status.UNKNOWN
    assert run_check("CANN102", {"cann": NOT_FOUND}).status == Status.SKIP


def test_cann_consistent_leaves_arch_and_nnal_to_their_checks():
    c = cann(arch="x86_64")
    c.arch_mismatch = True
    assert run_check("CANN102", {"cann": c}).status == Status.PASS
    assert run_check("CANN103", {"cann": c}).status == Status.FAIL


# CANN103 --------------------------------------------------------------------------------------------------------
def test_cann_arch():
    assert run_check("CANN103", {"cann": cann()}).status == Status.PASS
    f = run_check("CANN103", {"cann": cann(arch="x86_64")})
    assert f.status == Status.FAIL and "x86_64" in f.message and "aarch64" in f.message
    assert run_check("CANN103", {"cann": cann(arch=None)}).status == Status.UNKNOWN
    assert run_check("CANN103", {}).status == Status.UNKNOWN


# CANN104 --------------------------------------------------------------------------------------------------------
def test_cann_env_sourced_pass():
    env = {"LD_LIBRARY_PATH": f"{ROOT80}/lib64:/usr/local/Ascend/driver/lib64"}
    f = run_check("CANN104", {"cann": cann(), "env": env})
    assert f.status == Status.PASS


def test_cann_env_not_sourced_names_the_right_script():
    f = run_check("CANN104", {"cann": cann(sourced=False), "env": {}})
    assert f.status == Status.FAIL and "source /usr/local/Ascend/ascend-toolkit/set_env.sh" in f.remediation
    f = run_check("CANN104", {"cann": cann(version="8.5.0", root=ROOT85, sourced=False), "env": {}})
    assert "source /usr/local/Ascend/cann/set_env.sh" in f.remediation
    assert any(e.source == "env: LD_LIBRARY_PATH" and "not set" in e.excerpt for e in f.evidence)


def test_cann_env_unknown():
    assert run_check("CANN104", {"cann": cann(sourced=None), "env": {}}).status == Status.UNKNOWN
    assert run_check("CANN104", {}).status == Status.UNKNOWN


# CANN105 --------------------------------------------------------------------------------------------------------
def test_nnal_present_and_sourced():
    f = run_check("CANN105", {"cann": cann(version="8.5.0", root=ROOT85, nnal=NNAL_85), "python": PY_VA})
    assert f.status == Status.PASS and "8.5.0" in f.message


def test_nnal_missing_with_vllm_ascend_fails():
    f = run_check("CANN105", {"cann": cann(nnal=NnalFact(searched=["/usr/local/Ascend/nnal/atb/latest/version.info"])),
                              "python": PY_VA})
    assert f.status == Status.FAIL and "libatb" in f.message


def test_nnal_installed_but_not_sourced_fails():
    nnal = NNAL_85.model_copy(update={"atb_home_path": None})
    f = run_check("CANN105", {"cann": cann(version="8.5.0", root=ROOT85, nnal=nnal), "python": PY_VA})
    assert f.status == Status.FAIL and "nnal/atb/set_env.sh" in f.remediation


def test_nnal_for_another_cann_warns():
    c = cann(version="8.3.RC2", nnal=NNAL_85.model_copy(update={"cann_mismatch": True}))
    assert run_check("CANN105", {"cann": c, "python": PY_VA}).status == Status.WARN


def test_nnal_skip_and_unknown():
    assert run_check("CANN105", {"cann": cann(), "python": PY_NO_VA}).status == Status.SKIP
    assert run_check("CANN105", {"cann": cann()}).status == Status.UNKNOWN  # no python fact, no NNAL
    assert run_check("CANN105", {}).status == Status.UNKNOWN


# CANN106 --------------------------------------------------------------------------------------------------------
def test_cann_driver_tested_pair_passes_with_source():
    f = run_check("CANN106", {"cann": cann(version="8.0.0"), "driver": driver("24.1.rc2")})
    assert f.status == Status.PASS
    assert any("package_info.js" in e.excerpt or "release-notes.md" in e.excerpt for e in f.evidence)


def test_cann_driver_published_n_fails():
    # CANN 9.1.1 release notes: CANN 9.1.X with HDK 25.0.X is "N".
    f = run_check("CANN106", {"cann": cann(version="9.1.1", root="/usr/local/Ascend/cann-9.1.1"),
                              "driver": driver("25.0.rc1.1")})
    assert f.status == Status.FAIL and "NOT compatible" in f.message


def test_cann_85_with_the_hdks_its_release_notes_list_is_compatible():
    """#37: Huawei's CANN 8.5.0 release notes list HDK 25.5.X, 25.3.X, 25.2.X, 25.0.X (commercial and community)."""
    for drv in ("25.0.rc1.1", "25.2.0", "25.3.0", "25.5.1"):
        f = run_check("CANN106", {"cann": cann(version="8.5.0", root=ROOT85), "driver": driver(drv)})
        assert f.status == Status.PASS, (drv, f.message)
    f = run_check("CANN106", {"cann": cann(version="8.5.0", root=ROOT85), "driver": driver("25.2.0")})
    assert any("canncommercial/850/releasenote" in e.excerpt for e in f.evidence)


def test_cann_851_pairs_the_hdks_of_850_as_the_mindie_notes_say():
    """No CANN 8.5.1 notes exist; the MindIE 26.0.0 notes (which ship 8.5.1) say it pairs the HDKs of 8.5.0."""
    f = run_check("CANN106", {"cann": cann(version="8.5.1", root=ROOT85), "driver": driver("25.5.1")})
    assert f.status == Status.PASS and "inferred" not in f.message, f.message
    assert any("MindIE/26.0.0/release.md" in e.excerpt for e in f.evidence)
    bad = run_check("CANN106", {"cann": cann(version="8.5.1", root=ROOT85), "driver": driver("24.1.0")})
    assert bad.status == Status.WARN and bad.details["inferred"] is True, bad.message


def test_cann_82rc1_on_a_24_1_driver_is_compatible_per_the_mindie_grid():
    """The MindIE 2.1.RC1 notes pair CANN 8.2.RC1 with HDK 24.1.RC2/RC3/24.1.0 (and 25.0.RC1, 25.2.0); vllm-ascend
    reporters ran CANN 8.2 on 24.1.rc3. Before, the doctor failed it as 'older than any HDK of CANN 8.2' (inferred).
    CANN 8.2.RC2 on 24.1 is no longer inferred incompatible (a CANN of its line is published with a 24.1 driver),
    and nothing publishes the pair either: a warning that says so, not a failure."""
    for drv in ("24.1.rc2.2", "24.1.rc3.b090", "24.1.0.3", "25.0.rc1.1", "25.2.0"):
        f = run_check("CANN106", {"cann": cann(version="8.2.RC1"), "driver": driver(drv)})
        assert f.status == Status.PASS and "compat-mindie-2.1.RC1" in f.evidence[-1].excerpt, (drv, f.message)
    rc2 = run_check("CANN106", {"cann": cann(version="8.2.RC2"), "driver": driver("24.1.rc3")})
    assert rc2.status == Status.WARN and "no published table" in rc2.message, rc2.message
    old = run_check("CANN106", {"cann": cann(version="8.2.RC1"), "driver": driver("23.0.3")})
    assert old.status == Status.WARN and old.details["inferred"] is True, old.message


def test_cann_driver_uncovered_pair_is_unknown_not_fail():
    f = run_check("CANN106", {"cann": cann(version="8.3.RC1"), "driver": driver("25.2.0")})
    assert f.status == Status.UNKNOWN and "no source" in f.message


def test_a_driver_of_an_older_generation_than_the_cann_line_warns_inferred():
    """CANN 8.3.RC2 is paired with HDK 25.3.RC1 (the maintainer's download link in vllm-ascend#4972, where a 24.1
    driver gave `aicore execution times out`): 24.1 warns with 8.3.RC2 and with the earlier 8.3.RC1 (a 24.x driver
    is a generation older); 25.2.0 with 8.3.RC1, which may have shipped with it, stays unknown (above). A warning,
    not a failure: no table publishes the pair, and the field has seen such pairs both time out and serve."""
    for version in ("8.3.RC2", "8.3.RC1"):
        f = run_check("CANN106", {"cann": cann(version=version), "driver": driver("24.1.rc3")})
        assert f.status == Status.WARN and f.details["inferred"] is True, (version, f.message)
        assert "#4972, #5468" in f.message and "#9005) and served" in f.message and "#8350, #9666" in f.message
        assert "25.3.rc1" in f.message and "4972" in f.message
    ok = run_check("CANN106", {"cann": cann(version="8.3.RC2"), "driver": driver("25.3.rc1")})
    assert ok.status == Status.PASS, ok.message


def test_cann_driver_older_than_published_driver_warns():
    # CANN 8.0.0 was published with 24.1.rc2 (package_info.js); 24.1.rc1 belongs to the same line (8.0.RC1 names
    # it), so nothing is inferred: older than 8.0.0's own driver, no table covers it -> warning.
    f = run_check("CANN106", {"cann": cann(), "driver": driver("24.1.rc1")})
    assert f.status == Status.WARN and "older than every driver CANN 8.0.0 was published with" in f.message


def test_driver_older_than_the_whole_cann_line_warns_inferred():
    """CANN 8.5.1 has no HDK row; every source for CANN 8.5.x names HDK 25.5.x/26.0 (hicann/release-management
    8.5.0, 8.5.0-beta.1 and 9.0.0 notes): a 24.1 driver warns, marked inferred, with those sources (audit §3.2)."""
    f = run_check("CANN106", {"cann": cann(version="8.5.1", root=ROOT85), "driver": driver("24.1.rc3")})
    assert f.status == Status.WARN and f.details["inferred"] is True
    assert "(inferred, no published table covers the pair)" in f.message
    assert "older than any HDK published for CANN 8.5" in f.message
    assert "hicann/release-management@68ef36b:8.5.0/release-notes.md" in f.message
    assert "25.5.0, 25.5.1" in f.message


def test_cann_driver_newer_than_matrix_warns():
    f = run_check("CANN106", {"cann": cann(version="99.0.0"), "driver": driver("25.5.1")})
    assert f.status == Status.WARN and "not in the matrix yet" in f.message


def test_cann_driver_unknown_and_skip():
    assert run_check("CANN106", {"cann": cann()}).status == Status.UNKNOWN  # no driver version anywhere
    assert run_check("CANN106", {"cann": NOT_FOUND}).status == Status.SKIP
    assert run_check("CANN106", {}).status == Status.UNKNOWN


# End to end: the real probes on a replayed CANN 8.5 host, then the checks on their facts ------------------------
def _host_facts(arch="aarch64", sourced=True, nnal_version="8.5.0", machine="aarch64"):
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.facts import FactStore
    from ascend_doctor.seam.host import SystemInfo
    from ascend_doctor.seam.snapshot import DirEntry, FileEntry, LinkEntry, ReplayHost, Snapshot

    cfg = "# version: 1.0\n" + "".join(f"{c}_running_version=[8.5.0.1.100:8.5.0]\n{c}_upgrade_version=[8.5.0.1.100:"
                                       f"8.5.0]\n{c}_installed_version=[8.5.0.1.100:8.5.0]\n"
                                       for c in ("runtime", "compiler", "hccl", "opp", "toolkit"))
    info = (f"package_name=Ascend-cann-toolkit\nversion=8.5.0\ninnerversion=V100R001C25SPC001B212\n"
            f"compatible_version=[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23]"
            f",[V100R001C25]\narch={arch}\nos=linux\npath={ROOT85}/{arch}-linux\n")
    env = {"ASCEND_HOME_PATH": "/usr/local/Ascend/cann", "HOME": "/root"}
    if sourced:
        env["LD_LIBRARY_PATH"] = "/usr/local/Ascend/driver/lib64:/usr/local/Ascend/cann/lib64:/usr/local/lib"
        env["ATB_HOME_PATH"] = "/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1"
    snap = Snapshot.model_validate(dict(
        system=SystemInfo(hostname="a2-node-01", os="Ubuntu 22.04", machine=machine),
        env=env,
        files={f"{ROOT85}/version.cfg": FileEntry(content=cfg),
               f"{ROOT85}/{arch}-linux/ascend_toolkit_install.info": FileEntry(content=info),
               "/usr/local/Ascend/nnal/atb/latest/version.info": FileEntry(
                   content=f"Ascend-cann-atb : {nnal_version}\nAscend-cann-atb Version : {nnal_version}.B100\n"
                           f"Platform : {arch}\n"),
               "/usr/local/Ascend/driver/version.info": FileEntry(
                   content="Version=25.5.1\nascendhal_version=7.35.23\nInnerversion=V100R001C25SPC001B212\n"
                           "compatible_version=[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19],"
                           "[V100R001C20],[V100R001C21],[V100R001C23],[V100R001C25]\n"
                           "compatible_version_fw=[7.0.0,7.9.99]\npackage_version=25.5.1\n")},
        dirs={"/usr/local/Ascend": DirEntry(entries=["ascend-toolkit", "cann", "cann-8.5.0", "driver", "nnal"]),
              "/usr/local/Ascend/ascend-toolkit": DirEntry(entries=["latest", "set_env.sh"]),
              ROOT85: DirEntry(entries=[f"{arch}-linux", "lib64", "set_env.sh", "version.cfg"]),
              "/usr/local/Ascend/driver/lib64": DirEntry(entries=["libascend_hal.so"])},
        links={"/usr/local/Ascend/cann": LinkEntry(target="cann-8.5.0", resolved=ROOT85),
               "/usr/local/Ascend/ascend-toolkit/latest": LinkEntry(target="/usr/local/Ascend/cann",
                                                                    resolved=ROOT85)},
    ))
    store = FactStore(ReplayHost(snap), RunOptions())
    return {"cann": store.fact("cann"), "driver": store.fact("driver"), "env": env, "python": PY_VA}


def test_end_to_end_healthy_cann_8_5_host():
    facts = _host_facts()
    assert facts["cann"].version == "8.5.0", facts["cann"]
    for code in ("CANN101", "CANN102", "CANN103", "CANN104", "CANN105", "CANN106"):
        f = run_check(code, facts)
        assert f.status == Status.PASS, (code, f.message)


def test_end_to_end_broken_cann_8_5_host():
    facts = _host_facts(arch="x86_64", sourced=False, nnal_version="8.3.RC2")
    assert run_check("CANN103", facts).status == Status.FAIL
    f = run_check("CANN104", facts)
    assert f.status == Status.FAIL and "source /usr/local/Ascend/cann/set_env.sh" in f.remediation
    assert run_check("CANN105", facts).status == Status.FAIL  # installed but ATB_HOME_PATH not set
    # The arch and NNAL disagreements are their own fields (CANN103's and CANN105's business), not CANN102's.
    assert facts["cann"].arch_mismatch and facts["cann"].nnal.cann_mismatch and facts["cann"].inconsistencies == []
    assert run_check("CANN102", facts).status == Status.PASS


def test_nnal_unreadable_version_info_warns():
    nnal = NnalFact(found=True, version_info_path="/usr/local/Ascend/nnal/atb/latest/version.info",
                    error="/usr/local/Ascend/nnal/atb/latest/version.info: no `Ascend-cann-<pkg> : <version>` line",
                    atb_home_path="/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_0")
    assert run_check("CANN105", {"cann": cann(nnal=nnal), "python": PY_VA}).status == Status.WARN


# CANN107 --------------------------------------------------------------------------------------------------------
# Source of the layout change and the date: hicann/release-management@0436983 9.1.1/release-notes.md (paths
# deprecated in 8.5.0, removed after 2026-12-30; audit §3.2 / §4.2-D).
def test_deprecated_layout_in_the_environment_warns_with_the_date():
    env = {"LD_LIBRARY_PATH": "/usr/local/Ascend/ascend-toolkit/latest/lib64:/usr/local/Ascend/driver/lib64",
           "CPATH": "/usr/local/Ascend/ascend-toolkit/latest/runtime/include"}
    f = run_check("CANN107", {"cann": cann(version="8.5.0", root=ROOT85), "env": env})
    assert f.status == Status.WARN
    assert "env CPATH, env LD_LIBRARY_PATH" in f.message and "after 2026-12-30" in f.message
    assert "hicann/release-management@0436983" in f.message
    assert "source /usr/local/Ascend/cann/set_env.sh" in f.remediation
    assert "cann/lib64 (libascendcl.so -> libacl_rt.so" in f.remediation and "cann/include" in f.remediation
    assert f.details["removal"] == "2026-12-30"


def test_deprecated_layout_in_the_serve_command():
    from tests.helpers import parse_serve as parse_serve_command

    cmd = parse_serve_command(["env", "PYTHONPATH=/usr/local/Ascend/ascend-toolkit/latest/compiler/python/func2graph",
                               "vllm", "serve", "/m"])
    f = run_check("CANN107", {"cann": cann(version="9.1.0", root=ROOT85), "env": {}, "serve_cmd": cmd})
    assert f.status == Status.WARN and "the vllm serve command line" in f.message


def test_new_layout_passes_and_old_cann_skips():
    env = {"LD_LIBRARY_PATH": "/usr/local/Ascend/cann/lib64:/usr/local/Ascend/driver/lib64"}
    assert run_check("CANN107", {"cann": cann(version="8.5.0", root=ROOT85), "env": env}).status == Status.PASS
    old = {"LD_LIBRARY_PATH": "/usr/local/Ascend/ascend-toolkit/latest/lib64"}
    assert run_check("CANN107", {"cann": cann(), "env": old}).status == Status.SKIP  # CANN 8.0.0: the only layout
    assert run_check("CANN107", {"cann": cann(version="8.5.0", root=ROOT85)}).status == Status.UNKNOWN
