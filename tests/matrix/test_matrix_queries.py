"""The query API checks call, on the shipped data with real version strings."""

from __future__ import annotations

import pytest

from ascend_doctor.knowledge.matrix import load_matrix


@pytest.fixture(scope="module")
def m():
    return load_matrix()


def test_load_is_cached(m):
    assert load_matrix() is m
    assert load_matrix([]) is m


# vllm-ascend releases ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["0.13.0rc3", "v0.13.0rc3", "V0.13.0rc3", " 0.13.0rc3 ", "0.13.0rc3+local"])
def test_release_lookup_is_tolerant(m, text):
    assert m.vllm_ascend_release(text).version == "0.13.0rc3"


def test_release_lookup_misses(m):
    assert m.vllm_ascend_release("0.13.1") is None
    assert m.vllm_ascend_release("not a version") is None


@pytest.mark.parametrize("text, version, relation", [
    ("0.18.0", "0.18.0", "exact"),
    ("0.31.0", "0.30.0rc2", "newer-than-matrix"),
    ("0.30.0", "0.30.0rc2", "newer-than-matrix"),
    ("0.13.1.dev5+gabcdef", "0.13.0", "between"),
    ("0.19.0", "0.18.0", "between"),
    ("0.6.0", "0.7.1rc1", "older"),
])
def test_nearest_release(m, text, version, relation):
    row, rel = m.nearest_release(text)
    assert (row.version, rel) == (version, relation)


def test_nearest_release_unparseable(m):
    assert m.nearest_release("main") == (None, "unparseable")


def test_releases_for_vllm(m):
    assert [r.version for r in m.releases_for_vllm("0.13.0")] == ["0.13.0rc1", "0.13.0rc2", "0.13.0rc3", "0.13.0"]
    assert [r.version for r in m.releases_for_vllm("0.13.0+empty")] == ["0.13.0rc1", "0.13.0rc2", "0.13.0rc3", "0.13.0"]
    assert [r.version for r in m.releases_for_vllm("0.10.1")] == ["0.10.1rc1"]
    assert [r.version for r in m.releases_for_vllm("0.10.1.1")] == ["0.10.1rc1"]
    assert [r.version for r in m.releases_for_vllm("0.14.1")] == ["0.14.0rc1"]
    assert m.releases_for_vllm("0.14.0") == []


# torch_npu / torch / python -----------------------------------------------------------------------------------------
def test_torch_npu_row(m):
    row = m.torch_npu_row("2.10.0.post4")
    assert row.torch == "2.10.0" and row.cann == ["9.1.0"] and row.requires_torch == "==2.10.0"
    assert m.torch_npu_row("2.9.0.post1+git4c901a4").pypi == "absent"
    assert m.torch_npu_row("2.9.0.post1").version == "2.9.0.post1+git4c901a4"  # local label ignored as a fallback
    assert m.torch_npu_row("2.14.0").cann == []  # on PyPI, pairing unknown
    assert m.torch_npu_row("2.99.0") is None


def test_python_ok_for_torch(m):
    assert m.python_ok_for_torch("2.8.0", "3.12") is True
    assert m.python_ok_for_torch("2.8.0+cpu", "3.12.4") is True
    assert m.python_ok_for_torch("2.5.1", "3.12") is False
    assert m.python_ok_for_torch("2.9.0", "3.9") is False
    assert m.python_ok_for_torch("2.99.0", "3.11") is None
    assert m.python_ok_for_torch("2.8.0", "three") is None


def test_torch_npu_wheel_cp(m):
    # torch_npu 2.8.0 (vllm-ascend 0.12.0rc1/0.13.0rc1) has no cp312 wheel: those releases cannot run on 3.12.
    assert m.torch_npu_wheel_has_cp("2.8.0", "cp312") is False
    assert m.torch_npu_wheel_has_cp("2.8.0", "cp311") is True
    assert m.torch_npu_wheel_has_cp("2.8.0", "3.11") is True
    assert m.torch_npu_wheel_has_cp("2.9.0.post9", "cp314") is True
    assert m.torch_npu_wheel_has_cp("2.10.0.post6", "cp312") is True
    assert m.torch_npu_wheel_has_cp("2.10.0.post6", "cp312", arch="aarch64") is True
    assert m.torch_npu_wheel_has_cp("2.10.0.post6", "cp312", arch="x86_64") is False
    assert m.torch_npu_wheel_has_cp("2.7.1.dev20250724", "cp311") is None  # not on PyPI
    assert m.torch_npu_wheel_has_cp("2.99.0", "cp311") is None


# CANN <-> driver ------------------------------------------------------------------------------------------------------
def test_hdk_for_cann(m):
    pairs = m.hdk_for_cann("7.0.0")
    assert sorted((tuple(h.hardware), tuple(h.driver)) for h in pairs) == [(("310P",), ("23.0.1",)),
                                                                            (("A2",), ("23.0.3",))]
    assert m.hdk_for_cann("8.0.RC3")[0].driver == ["24.1.rc2"]
    assert m.hdk_for_cann("8.5.0")[0].driver == ["25.5.0", "25.5.1"]
    assert m.hdk_for_cann("9.2.0_20260930220649") == []  # 9.2.0 final: no pairing
    assert m.hdk_for_cann("8.3.RC2")[0].driver == ["25.3.rc1"]  # the maintainer's download link (#4972)
    assert m.hdk_for_cann("8.3.RC1") == []


@pytest.mark.parametrize("cann, driver, verdict", [
    ("9.1.0", "25.0.rc1.1", False),   # 9.1.1 notes: 9.1.X x 25.0.X = N
    ("9.1.1", "25.0.rc1", False),
    ("9.1.1", "25.2.1", True),
    ("9.0.1", "25.0.rc1", True),      # 9.1.1 notes: 9.0.X x 25.0.X = Y
    ("8.5.2", "26.1.0", True),
    ("9.0.0", "26.0.rc1", True),      # upper/lower case RC
    ("8.0.0", "24.1.rc2.2", True),    # patch of the tested 24.1.rc2
    ("8.2.RC1", "25.0.rc1.1", True),
    ("8.0.0", "24.1.rc3", None),      # not the tested pair, no grid covers it
    ("8.3.RC1", "25.0.rc1", None),    # no source pairs 8.3.RC1; 8.3.RC2's 25.3.rc1 does not bound an earlier CANN
    ("8.3.RC2", "25.0.rc1", False),   # inferred: older than the 25.3.rc1 paired with 8.3.RC2
    ("garbage", "25.0.rc1", None),
])
def test_cann_driver_compatible(m, cann, driver, verdict):
    pairing = m.cann_driver_compatible(cann, driver)
    got, why = pairing.compatible, pairing.why
    assert got is verdict, why
    assert not why.startswith("INFERRED")  # the verdict is typed (pairing.inferred), not prefixed prose
    assert pairing.sources or verdict is None
    assert why
    if verdict is not None:
        assert "source:" in why


# vLLM parser names -----------------------------------------------------------------------------------------------
# Source for every fact below: the vLLM sdists on PyPI, read by `matrix sync` and cross-checked name for name with
# ../shared/facts/matrix-audit-2026-12-01.md §2.2-§2.4 (e.g. deepseek_v4: vllm-0.20.0.tar.gz
# vllm/tool_parsers/__init__.py line 37; deepseek_v41: vllm-0.30.0.tar.gz vllm/tool_parsers/__init__.py line 45).
def test_first_vllm_release_with(m):
    assert m.first_vllm_release_with("tool_parser", "deepseek_v4") == "0.20.0"  # was 0.20.2 (first *sampled*)
    assert m.first_vllm_release_with("reasoning_parser", "deepseek_v4") == "0.20.0"
    assert m.first_vllm_release_with("tokenizer_mode", "deepseek_v4") == "0.20.0"
    assert m.first_vllm_release_with("tool_parser", "deepseek_v41") == "0.30.0"  # was 0.33.0
    assert m.first_vllm_release_with("tokenizer_mode", "deepseek_v41") == "0.30.0"  # registry-only mode
    assert m.first_vllm_release_with("tool_parser", "deepseek_v32") == "0.13.0"
    assert m.first_vllm_release_with("tool_parser", "deepseek_v31") == "0.10.2"
    assert m.first_vllm_release_with("tool_parser", "qwen3_xml") == "0.11.0"
    assert m.first_vllm_release_with("tool_parser", "glm4_moe") == "0.10.0"
    assert m.first_vllm_release_with("tokenizer_mode", "kimi_audio") == "0.18.0"
    assert m.first_vllm_release_with("tool_parser", "no_such_parser") is None
    with pytest.raises(ValueError):
        m.first_vllm_release_with("parser", "hermes")


def test_last_release_without_and_first_ascend_release(m):
    assert m.last_vllm_release_without("tool_parser", "deepseek_v4") == "0.19.1"
    assert m.last_vllm_release_without("tool_parser", "deepseek_v41") == "0.29.0"
    # No vllm-ascend release pairs with vLLM 0.20.0/0.20.1 (audit §2.3): the first that has the parser is v0.20.2rc1.
    assert m.first_ascend_release_with("tool_parser", "deepseek_v4").version == "0.20.2rc1"
    # vllm-ascend 0.30.0rc1/rc2 pair with vLLM 0.30.0, which has deepseek_v41 (the old fix text said vLLM 0.33.0).
    assert m.first_ascend_release_with("tool_parser", "deepseek_v41").version == "0.30.0rc1"
    assert m.first_ascend_release_with("tool_parser", "no_such_parser") is None


def test_parsers_in_vllm(m):
    tools = m.parsers_in_vllm("0.13.0", "tool_parser")
    assert "deepseek_v32" in tools and "deepseek_v4" not in tools and "hermes" in tools
    assert len(tools) == 29 and len(m.parsers_in_vllm("0.33.0", "tool_parser")) == 58  # audit §2.2 counts
    assert "deepseek_v4" in m.parsers_in_vllm("0.23.0", "tool_parser")
    assert "minimax" not in m.parsers_in_vllm("0.33.0", "tool_parser")  # renamed minimax_m3 in 0.24.0
    # Literal + registry: 0.13.0's registry adds nothing new; 0.33.0 accepts kimi_audio and deepseek_v41.
    assert m.parsers_in_vllm("0.13.0", "tokenizer_mode") == {"auto", "hf", "slow", "mistral", "deepseek_v32"}
    assert {"kimi_audio", "deepseek_v41"} <= m.parsers_in_vllm("0.33.0", "tokenizer_mode")
    assert {"grok2", "qwen_vl", "kimi_audio"} <= m.parsers_in_vllm("0.18.0", "tokenizer_mode")
    assert len(m.parsers_in_vllm("0.23.0", "reasoning_parser")) == 25  # complete now (was a partial list)
    assert "GptOss" in m.parsers_in_vllm("0.10.1.1", "reasoning_parser")  # renamed openai_gptoss in 0.10.2
    assert m.parsers_in_vllm("0.13.0+empty", "tool_parser") == tools
    assert m.parsers_in_vllm("0.11.1", "tool_parser") is None  # not recorded: never interpolated
    assert m.parsers_in_vllm("0.99.0", "tool_parser") is None


def test_has_parser_answers_only_from_recorded_releases(m):
    assert m.has_parser("0.13.0", "tool_parser", "deepseek_v4") is False
    assert m.has_parser("0.20.0", "tool_parser", "deepseek_v4") is True
    assert m.has_parser("0.20.1", "reasoning_parser", "deepseek_v4") is True
    assert m.has_parser("0.20.1", "tokenizer_mode", "deepseek_v4") is True
    # vLLM 0.10.0 registers glm4_moe (renamed glm45 in 0.10.1); the old "absent in both neighbours" rule said False.
    assert m.has_parser("0.10.0", "tool_parser", "glm4_moe") is True
    assert m.has_parser("0.10.0", "reasoning_parser", "glm4_moe") is True
    assert m.has_parser("0.10.1", "tool_parser", "glm4_moe") is False
    # A release between recorded ones is unknown, whatever its neighbours say.
    assert m.has_parser("0.11.1", "tool_parser", "hermes") is None
    assert m.has_parser("0.99.0", "tool_parser", "hermes") is None


def test_vllm_torch_pins(m):
    """vLLM's own torch pin (PKG-INFO Requires-Dist, audit §4.2-B): the torch `pip install vllm` brings."""
    pins = {p.vllm: p.torch for p in m.parsers}
    assert pins["0.9.1"] == "2.7.0" and pins["0.13.0"] == "2.9.0" and pins["0.23.0"] == "2.11.0"
    assert pins["0.30.0"] == "2.13.0" and pins["0.33.0"] == "2.14.0"


# model registries ----------------------------------------------------------------------------------------------
def test_vllm_models(m):
    archs = m.vllm_architectures("0.20.0")
    assert len(archs) == 348 and "DeepseekV4ForCausalLM" in archs
    assert "DeepseekV4ForCausalLM" not in m.vllm_architectures("0.19.1")
    assert m.first_vllm_with("architectures", "DeepseekV4ForCausalLM") == "0.20.0"
    assert "deepseek_v32" in m.vllm_model_types("0.13.0")
    assert m.vllm_architectures("0.11.1") is None and m.vllm_model_types("0.99") is None


def test_transformers_models(m):
    assert m.first_transformers_with("qwen3_moe") == "4.51.0"
    assert m.first_transformers_with("glm4") == "4.51.3"  # a patch release that added a model type
    assert m.first_transformers_with("deepseek_v4") == "5.8.0"
    assert "qwen3_moe" in m.transformers_model_types("5.14.1")
    assert m.transformers_model_types("4.39.3") is None  # older than the first record
    assert m.first_transformers_with("no_such_type") is None


# advisories ---------------------------------------------------------------------------------------------------------
def test_set_random_seed_advisory(m):
    ids = [a.id for a in m.matching_advisories({"vllm-ascend": "0.14.0rc1", "vllm": "0.13.0"})]
    assert ids == ["ADV-2026-001"]
    adv = m.matching_advisories({"vllm_ascend": "0.18.0", "vllm": "0.13.0+empty"})[0]
    assert "set_random_seed" in adv.symptom[0] and adv.severity == "critical"
    assert m.matching_advisories({"vllm-ascend": "0.13.0", "vllm": "0.13.0"}) == []
    assert m.matching_advisories({"vllm-ascend": "0.13.0rc3", "vllm": "0.13.0"}) == []
    assert m.matching_advisories({"vllm-ascend": "0.14.0rc1", "vllm": "0.14.1"}) == []
    assert m.matching_advisories({"vllm-ascend": "0.14.0rc1"}) == []  # vllm unknown: cannot hold


def test_advisories_with_cann_driver_machine(m):
    ids = lambda v: [a.id for a in m.matching_advisories(v)]  # noqa: E731
    assert ids({"vllm-ascend": "0.18.0", "cann": "8.5.1", "machine": "x86_64"}) == ["ADV-2026-005"]
    assert ids({"vllm-ascend": "0.18.0", "cann": "8.5.1", "machine": "aarch64"}) == []
    assert ids({"vllm-ascend": "0.18.0", "cann": "8.5.1"}) == []
    assert ids({"vllm-ascend": "0.21.0rc1", "driver": "24.1.rc3", "cann": "8.3.RC2"}) == ["ADV-2026-006",
                                                                                           "ADV-2026-007"]
    assert ids({"vllm-ascend": "0.21.0rc1", "driver": "25.5.1", "cann": "9.0.0"}) == []
    # ADV-2026-002..004 were withdrawn: VLLM102 checks the torch pin of every release (audit §4.2-B).
    assert ids({"vllm-ascend": "0.11.0", "torch": "2.8.0"}) == []
    assert not {"ADV-2026-002", "ADV-2026-003", "ADV-2026-004"} & {a.id for a in m.advisories}
    assert ids({"triton": "3.6.0", "triton-ascend": "3.2.0"}) == ["ADV-2026-011"]
    # ADV-2026-009 (Ascend/pytorch#99): an NNAL of another release than the toolkit; the official 0.11.0rc1 image's
    # own NNAL does not match, nor does an NNAL nobody has seen; the torch_npu daily build wants an NNAL >= 8.0.0
    assert ids({"torch_npu": "2.7.1", "cann": "8.3.RC1", "nnal": "8.2.RC1"}) == ["ADV-2026-009"]
    assert ids({"torch_npu": "2.7.1", "cann": "8.3.RC1", "nnal": "8.3.RC1"}) == []
    assert ids({"torch_npu": "2.7.1", "cann": "8.3.RC1"}) == []
    assert ids({"torch-npu": "2.5.1.dev20250218", "nnal": "8.0.RC3"}) == ["ADV-2026-010"]
    assert ids({"torch-npu": "2.5.1.dev20250218", "nnal": "8.0.0"}) == []
    # the release its maintainers withdrew (#267: "Please use v0.7.3rc2 instead."), not its successor
    assert ids({"vllm-ascend": "0.7.3rc1"}) == ["ADV-2026-012"] and ids({"vllm-ascend": "0.7.3rc2"}) == []
    # the v0.9.1 release notes: "the old version of Mindie Turbo is not compatible. Please do not install it."
    assert ids({"vllm-ascend": "0.9.1", "mindie-turbo": "2.0rc2"}) == ["ADV-2026-013"]
    assert ids({"vllm-ascend": "0.9.1"}) == [] and ids({"vllm-ascend": "0.7.3", "mindie-turbo": "2.0rc1"}) == []


# newest known -------------------------------------------------------------------------------------------------------
def test_newest_known(m):
    assert m.newest_known("vllm-ascend") == "0.30.0rc2"
    assert m.newest_known("vllm") == "0.34.0"
    assert m.newest_known("torch_npu") == "2.14.0"
    assert m.newest_known("torch-npu") == "2.14.0"
    assert m.newest_known("cann") == "9.2.0"
    assert m.newest_known("driver") == "26.1.1"
    assert m.newest_known("python") == "3.14"
    assert m.newest_known("something-else") is None


def test_newer_than_matrix(m):
    assert m.newer_than_matrix("vllm-ascend", "0.31.0") is True
    assert m.newer_than_matrix("vllm-ascend", "0.30.0rc2") is False
    assert m.newer_than_matrix("vllm-ascend", "0.30.0") is True  # final after the newest rc
    assert m.newer_than_matrix("cann", "9.2.0_20260930220649") is False  # a build of 9.2.0 is not newer
    assert m.newer_than_matrix("torch_npu", "2.15.0") is True
    assert m.newer_than_matrix("driver", "24.1.rc3") is False
    assert m.newer_than_matrix("vllm", "main") is None
    assert m.newer_than_matrix("numpy", "2.0") is None


def test_compare_stack(m):
    items = {i.component: i for i in m.compare_stack({
        "vllm_ascend": "0.18.0", "vllm": "0.18.0+empty", "torch": "2.9.0+cpu", "torch-npu": "2.9.0.post1+git4c901a4",
        "cann": "8.5.0", "python": "3.12.3"})}
    assert items["vllm"].status == "ok"
    assert items["torch"].status == "ok"
    assert items["torch-npu"].status == "alternative" and "OBS" in items["torch-npu"].conflict
    assert items["cann"].status == "alternative" and "README" in items["cann"].conflict
    assert items["python"].status == "mismatch" and items["python"].expected == [">=3.10,<3.12"]
    assert items["triton-ascend"].status == "unknown"  # not given
    assert items["transformers"].status == "unknown"
    items = {i.component: i for i in m.compare_stack({"vllm-ascend": "0.10.0rc1", "torch-npu": "2.7.1"})}
    assert items["torch-npu"].status == "mismatch" and items["torch-npu"].expected == ["2.7.1.dev20250724"]
    assert items["triton-ascend"].status == "unpinned"
    assert m.compare_stack({"vllm-ascend": "0.99.0"}) == []
    assert m.compare_stack({"vllm": "0.13.0"}) == []


def test_a_grid_cell_for_an_hdk_holds_its_patch_builds():
    """npu-smi reports the HDK's patch build (25.7.rc1.1); the CANN 9.1.0 notes' grid says "Y" for HDK 25.7.RC1, and
    that is the same HDK (h38p: CANN106 warned the pair was older than every driver CANN 9.1.0 shipped with)."""
    from tests.helpers import shipped

    m = shipped().matrix
    for driver in ("25.7.rc1", "25.7.rc1.1", "25.7.RC1.3"):
        v = m.cann_driver_compatible("9.1.0", driver)
        assert v.compatible is True and "compat-9.1.0-notes" in v.why, (driver, v.why)
    assert m.cann_driver_compatible("9.1.0", "25.7.rc2").compatible is not True  # another HDK, not a patch
    assert m.cann_driver_compatible("9.1.0", "25.7.rc10").compatible is not True
