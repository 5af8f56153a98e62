"""CANN / driver / firmware / NNAL version-file parsers: hand-written fixtures, then golden facts from the corpus."""

from __future__ import annotations

import pytest

from ascend_doctor.core.errors import ParseError
from ascend_doctor.parsers import parser_kinds
from ascend_doctor.parsers.ascend_files import (
    cfg_value,
    parse_ascend_install_info,
    parse_component_version_info,
    parse_driver_version_info,
    parse_firmware_version_info,
    parse_install_info,
    parse_nnal_version_info,
    parse_ranges,
    parse_version_cfg,
    split_cat_sections,
)
from tests.helpers import DATA, corpus_files, corpus_params, read_corpus

D = DATA / "ascend_files"


def fixture(name: str) -> str:
    return (D / name).read_text(encoding="utf-8")


# --- version.cfg --------------------------------------------------------------------------------------------------

def test_version_cfg_new_format():
    cfg = parse_version_cfg(fixture("version_cfg_8.1.RC1.cfg"))
    assert cfg.format_version == "1.0"
    assert cfg.cann_version == "8.1.RC1"
    assert cfg.cann_version_source == "toolkit_running_version"
    assert set(cfg.components) == {"runtime", "compiler", "hccl", "opp", "toolkit", "aoe", "ncs", "opp_kernel"}
    assert cfg.components["opp_kernel"].installed.internal == "7.7.0.1.238"
    assert cfg.components["hccl"].upgrade.version == "8.1.RC1"
    assert set(cfg.running_versions().values()) == {"8.1.RC1"}


def test_version_cfg_old_headerless_format():
    cfg = parse_version_cfg(fixture("version_cfg_old_6.0.1.cfg"))
    assert cfg.format_version is None
    assert cfg.cann_version == "6.0.1"
    assert cfg.components["toolkit"].running.internal == "1.84.15.1.310"
    assert cfg.components["opp"].installed is None


def test_version_cfg_without_toolkit_falls_back_to_most_common_running():
    cfg = parse_version_cfg(fixture("version_cfg_no_toolkit_half_upgraded.cfg"))
    assert "toolkit" not in cfg.components
    assert cfg.cann_version == "8.0.0"  # three components run 8.0.0, one still 8.0.RC3
    assert cfg.cann_version_source.endswith("_running_version")
    assert cfg.running_versions()["runtime"] == "8.0.RC3"


@pytest.mark.parametrize("raw,internal,version", [
    ("[7.6.0.1.220:8.0.0]", "7.6.0.1.220", "8.0.0"),
    ("[7.6.T13.0.B094:8.0.T63]", "7.6.T13.0.B094", "8.0.T63"),
    ("[8.0.RC3]", None, "8.0.RC3"),
    ("8.0.RC3", None, "8.0.RC3"),
])
def test_cfg_value(raw, internal, version):
    v = cfg_value(raw)
    assert (v.internal, v.version) == (internal, version)


# --- install info ---------------------------------------------------------------------------------------------------

def test_toolkit_install_info_crlf_x86():
    info = parse_install_info(fixture("toolkit_install_8.3.RC2_x86_64_crlf.info"))
    assert info.package_name == "Ascend-cann-toolkit"
    assert info.version == "8.3.RC2"
    assert info.arch == "x86_64"
    assert info.innerversion == "V100R001C23SPC002B210"
    assert [r.min for r in info.compatible_version] == ["V100R001C18", "V100R001C19", "V100R001C20", "V100R001C21",
                                                         "V100R001C23"]
    assert info.path == "/usr/local/Ascend/ascend-toolkit/8.3.RC2/x86_64-linux"


def test_toolkit_install_info_cann_85_layout():
    info = parse_install_info(fixture("toolkit_install_8.5.0_cann_layout.info"))
    assert (info.version, info.arch, info.os) == ("8.5.0", "aarch64", "linux")
    assert info.path.startswith("/usr/local/Ascend/cann-8.5.0/")


def test_nnae_install_info_with_range():
    info = parse_install_info(fixture("nnae_install_range.info"))
    assert info.package_name == "Ascend-cann-nnae"
    assert (info.compatible_version[0].min, info.compatible_version[0].max) == ("V100R001C13", "V100R001C18")
    assert info.compatible_version[1].min == info.compatible_version[1].max == "V100R001C30"


def test_parse_ranges():
    r = parse_ranges("[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]")
    assert [(x.min, x.max) for x in r] == [("23.0.rc3", "23.0.rc3."), ("23.0.0", "23.0.0.")]
    assert parse_ranges("") == []


# --- driver / firmware ----------------------------------------------------------------------------------------------

def test_driver_version_info():
    d = parse_driver_version_info(fixture("driver_version_25.0.rc1.1.info"))
    assert d.version == "25.0.rc1.1"
    assert d.package_version == "25.0.rc1.1"
    assert d.ascendhal_version == "7.35.23"
    assert d.innerversion == "V100R001C21SPC001B211"
    assert (d.compatible_version_fw.min, d.compatible_version_fw.max) == ("7.0.0", "7.7.99")
    assert len(d.compatible_version) == 6
    assert d.extra["tsfw_version"] == "1.0"


def test_driver_version_info_cat_n_and_no_package_version():
    d = parse_driver_version_info(fixture("driver_version_no_package_version_cat_n.txt"))
    assert d.version == "24.1.rc1"
    assert d.package_version is None
    assert d.compatible_version_fw.max == "7.3.99"


def test_driver_parser_refuses_toolkit_install_info():
    with pytest.raises(ParseError):
        parse_driver_version_info(fixture("toolkit_install_8.5.0_cann_layout.info"))


def test_firmware_version_info():
    f = parse_firmware_version_info(fixture("firmware_version_7.7.0.1.231.info"))
    assert f.version == "7.7.0.1.231"
    assert f.firmware_version == "1.0"
    assert f.package_version == "25.0.rc1.1"
    assert [r.min for r in f.compatible_version_drv] == ["23.0.0", "24.0", "24.1", "25.0"]


def test_firmware_parser_refuses_driver_file():
    with pytest.raises(ParseError):
        parse_firmware_version_info(fixture("driver_version_25.0.rc1.1.info"))


# --- component / NNAL / ascend_install.info ---------------------------------------------------------------------------

def test_component_version_info():
    c = parse_component_version_info(fixture("toolkit_component_version.info"))
    assert c.version == "8.2.0.0.201"
    assert c.version_dir == "8.2.RC1"
    assert c.timestamp == "20250620_000000111"
    assert c.required_packages == {"amct_acl": "8.2", "runtime": "8.2"}


def test_nnal_version_info():
    n = parse_nnal_version_info(fixture("atb_version.info"))
    assert n.package == "Ascend-cann-atb"
    assert n.version == "8.2.RC1"
    assert n.build_version == "8.2.RC1.B150"
    assert n.platform == "aarch64"
    assert n.branch == "br_release_cann_8.2.RC1_20250630"
    assert n.commit_id.startswith("3c1e6f0b")


def test_ascend_install_info():
    a = parse_ascend_install_info(fixture("ascend_install.info"))
    assert a.driver_install_path == "/usr/local/Ascend"
    assert a.firmware_install_path == "/usr/local/Ascend"
    assert (a.user_name, a.user_group) == ("HwHiAiUser", "HwHiAiUser")
    assert a.driver_install_for_all == "yes"
    assert a.driver_install_type == "full"


# --- bundles and garbage ----------------------------------------------------------------------------------------------

def test_bundle_each_parser_picks_its_own_file():
    text = fixture("bundle_driver_firmware_toolkit.txt")
    assert parse_driver_version_info(text).version == "24.1.rc3"
    assert parse_firmware_version_info(text).version == "7.5.0.3.220"
    assert parse_version_cfg(text).cann_version == "8.0.0"
    info = parse_install_info(text)
    assert (info.version, info.arch) == ("8.0.0", "aarch64")
    paths = [p for p, _ in split_cat_sections(text)]
    assert paths == ["/usr/local/Ascend/driver/version.info", "/usr/local/Ascend/firmware/version.info",
                     "/usr/local/Ascend/ascend-toolkit/latest/version.cfg",
                     "/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info"]


ALL = [parse_version_cfg, parse_install_info, parse_driver_version_info, parse_firmware_version_info,
       parse_component_version_info, parse_nnal_version_info, parse_ascend_install_info]


@pytest.mark.parametrize("func", ALL, ids=lambda f: f.__name__)
@pytest.mark.parametrize("text", ["", "   \n\n", "hello world", "<html><body>502 Bad Gateway</body></html>",
                                  "GARBAGE", "{\"version\": 1}"],
                         ids=["empty", "blank", "words", "html", "file", "json"])
def test_garbage_raises_one_line_parse_error(func, text):
    if text == "GARBAGE":
        text = fixture("garbage.txt")
    with pytest.raises(ParseError) as exc:
        func(text)
    assert "\n" not in str(exc.value) and str(exc.value)


def test_kinds_registered():
    kinds = parser_kinds()
    for k in ("version-cfg", "toolkit-install-info", "driver-version-info", "firmware-version-info",
              "cann-component-version-info", "nnal-version-info", "ascend-install-info"):
        assert k in kinds


# --- corpus golden facts --------------------------------------------------------------------------------------------

def corpus(name_part: str) -> str:
    files = [p for p in corpus_files("cann_version") + corpus_files("collect_env") if name_part in p.name]
    if not files:
        pytest.skip(f"corpus file *{name_part}* not present")
    return read_corpus(files[0])[1]


def test_corpus_old_version_cfg_310p():
    cfg = parse_version_cfg(corpus("ascend-samples-11-version-cfg-6.0.1"))
    assert cfg.cann_version == "6.0.1"
    assert cfg.components["toolkit"].running.internal == "1.84.15.1.310"
    assert set(cfg.components) == {"runtime", "compiler", "opp", "toolkit", "aoe", "ncs"}
    assert any("310P3" in x for x in cfg.ignored)  # the user's label lines are kept aside, not misread


def test_corpus_mindcluster_bundle():
    text = corpus("mindcluster-faultdiag-driver-firmware-toolkit-nnae")
    d = parse_driver_version_info(text)
    assert (d.version, d.ascendhal_version, d.innerversion) == ("23.0.7", "7.35.19", "V100R001C15SPC012B220")
    assert (d.compatible_version_fw.min, d.compatible_version_fw.max) == ("7.0.0", "7.1.99")
    f = parse_firmware_version_info(text)
    assert (f.version, f.package_version) == ("7.1.0.11.220", "23.0.7")
    assert [(r.min, r.max) for r in f.compatible_version_drv] == [("23.0.rc3", "23.0.rc3."), ("23.0.0", "23.0.0.")]
    t = parse_install_info(text)
    assert (t.package_name, t.version, t.arch) == ("Ascend-cann-toolkit", "7.0.T10", "aarch64")
    assert t.path == "/usr/local/Ascend/ascend-toolkit/7.0.T10/aarch64-linux"
    sections = dict(split_cat_sections(text))
    nnae = parse_install_info(sections["/usr/local/Ascend/nnae/latest/ascend_nnae_install.info"])
    assert (nnae.package_name, nnae.version, nnae.arch) == ("Ascend-cann-nnae", "8.0.RC3", "x86_64")
    assert (nnae.compatible_version[0].min, nnae.compatible_version[0].max) == ("V100R001C13", "V100R001C19")
    with pytest.raises(ParseError):
        parse_version_cfg(text)


def test_corpus_toolkit_install_info_8_0_0():
    info = parse_install_info(corpus("vllm-ascend-198-toolkit-install-info-8.0.0"))
    assert (info.version, info.innerversion, info.arch) == ("8.0.0", "V100R001C20SPC001B251", "aarch64")
    assert info.compatible_version[-1].min == "V100R001C20"


def test_corpus_cat_n_four_files():
    text = corpus("vllm-ascend-451-driver-toolkit-atb-toolbox-cat-n")
    d = parse_driver_version_info(text)
    assert (d.version, d.package_version, d.ascendhal_version) == ("24.1.rc3", "24.1.rc3", "7.35.23")
    assert d.innerversion == "V100R001C19SPC001B124"
    assert (d.compatible_version_fw.min, d.compatible_version_fw.max) == ("7.0.0", "7.5.99")
    cfg = parse_version_cfg(text)
    assert cfg.format_version == "1.0"
    assert cfg.cann_version == "8.0.0"
    assert cfg.components["opp_kernel"].running.internal == "7.6.0.1.220"
    assert "hccl" in cfg.components
    atb = parse_nnal_version_info(text)
    assert (atb.package, atb.version, atb.build_version) == ("Ascend-cann-atb", "8.0.0", "8.0.0.B100")
    assert atb.branch == "br_release_cann_8.0.0_20250521"
    toolbox = parse_install_info(text)  # the only *_install.info in this paste is the MindX toolbox
    assert (toolbox.version, toolbox.path) == ("6.0.RC1", "/usr/local/Ascend/toolbox/6.0.RC1")


def test_corpus_atlas200idk_7_0_rc1():
    info = parse_install_info(corpus("yunwuyue7-atlas200IDK-toolkit-install-info-7.0.RC1"))
    assert (info.version, info.innerversion, info.arch) == ("7.0.RC1", "V100R001C13SPC005B246", "aarch64")


@pytest.mark.parametrize("name,version,arch,inner", [
    ("3963-collect-env-A3", "8.2.RC1", "aarch64", "V100R001C22SPC001B231"),
    ("486-collect-env-x86", "8.1.T6", "x86_64", "V100R001C21B058"),
])
def test_corpus_collect_env_cann_section(name, version, arch, inner):
    text = corpus(name)
    section = text[text.index("CANN:\n") + len("CANN:\n"):]
    info = parse_install_info(section)
    assert (info.version, info.arch, info.innerversion) == (version, arch, inner)


@pytest.mark.parametrize("path", corpus_params("cann_version"))
def test_corpus_never_crashes(path):
    """Every parser either understands a cann_version capture or says so with a ParseError."""
    _, text = read_corpus(path)
    understood = 0
    for func in ALL:
        try:
            func(text)
            understood += 1
        except ParseError:
            pass
    assert understood >= 1


# --- the strings these parsers hand on are ones ascend_doctor.text.versions understands -------------------------------

def _extracted_versions(text: str) -> list[str]:
    found = []
    for func, fields in ((parse_version_cfg, ("cann_version",)), (parse_install_info, ("version",)),
                         (parse_driver_version_info, ("version", "package_version")),
                         (parse_firmware_version_info, ("version", "package_version")),
                         (parse_component_version_info, ("version", "version_dir")),
                         (parse_nnal_version_info, ("version", "build_version"))):
        try:
            fact = func(text)
        except ParseError:
            continue
        found += [getattr(fact, f) for f in fields if getattr(fact, f)]
    return found


def test_extracted_versions_are_orderable():
    from ascend_doctor.text.versions import cann_version_from_cfg_value, parse_innerversion, try_parse_version

    texts = [p.read_text(encoding="utf-8") for p in sorted(D.glob("*")) if p.name != "garbage.txt"]
    texts += [read_corpus(p)[1] for p in corpus_files("cann_version")]
    versions = [v for t in texts for v in _extracted_versions(t)]
    assert len(versions) >= 20
    assert [v for v in versions if try_parse_version(v) is None] == []
    cfg = parse_version_cfg(fixture("version_cfg_8.1.RC1.cfg"))
    raw = cfg.components["toolkit"].running.raw
    assert cann_version_from_cfg_value(raw) == cfg.cann_version
    inner = parse_driver_version_info(fixture("driver_version_25.0.rc1.1.info")).innerversion
    assert parse_innerversion(inner)["C"] == 21


def test_undecodable_bytes_and_a_cut_off_last_line_are_flagged():
    from ascend_doctor.parsers.ascend_files import parse_driver_version_info, parse_install_info

    junk = parse_driver_version_info("Version=24.1.rc3\nascendhal_version=7.35.\ufffd\ufffd\n")
    assert junk.version == "24.1.rc3"
    assert junk.problems == ["line 2 holds undecodable bytes (U+FFFD): 'ascendhal_version=7.35.\ufffd\ufffd'"]
    cut = parse_install_info("package_name=Ascend-cann-toolkit\nversion=8.0.")
    assert cut.problems and "looks truncated" in cut.problems[0]
    whole = parse_install_info("package_name=Ascend-cann-toolkit\nversion=8.0.0\n")
    assert whole.problems == []


def test_the_version_a_cann_install_directory_names():
    """One reading for the CANN probe (an install's root) and the paste reader (a path an environment variable
    names): `cann-X` (CANN >= 8.5), `ascend-toolkit/X`, a pre-release kept (`cann-9.1.0-beta.1`, the 310P images'
    base), `latest` no version."""
    from ascend_doctor.parsers.ascend_files import cann_dir_version, cann_path_version

    assert [cann_dir_version(n) for n in ("cann-8.5.0", "8.3.RC1", "cann-9.1.0-beta.1", "latest")] == [
        "8.5.0", "8.3.RC1", "9.1.0-beta.1", None]
    assert cann_path_version("/usr/local/Ascend/ascend-toolkit/8.0.RC3/lib64") == "8.0.RC3"
    assert cann_path_version("/usr/local/Ascend/cann-9.1.0-beta.1/opp") == "9.1.0-beta.1"
    assert cann_path_version("/usr/local/Ascend/ascend-toolkit/latest/lib64") is None
    assert cann_path_version("/opt/models/8.3.RC1") is None  # a version-like name outside an install directory
