"""SERVE307 --additional-config keys against what the installed vllm-ascend accepts, and the extractor that wrote
matrices/serve/additional-config.toml from each release's source (both eras: keys read with `.get` up to 0.26.0rc1,
the pydantic AscendConfig that rejects unknown keys from 0.27.1rc1, vllm-project/vllm-ascend#13838)."""

from __future__ import annotations

import pytest

from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from ascend_doctor.sync.ascend_config import keys_in_source, pydantic_keys, read_release_keys
from tests.checks.test_serve_checks import QWEN, facts
from tests.helpers import run_check, shipped


def judge(extra: str, ascend: str = "0.13.0", *also: Distribution):
    out = facts(f"vllm serve {QWEN} {extra}")
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm-ascend", version=ascend),
                                             Distribution(name="vllm", version="0.13.0"), *also])
    return run_check("SERVE307", out)


def test_keys_a_release_dropped_are_named_with_when():  # vllm-ascend#6187 on 0.13.0rc1
    f = judge("--additional-config {\"enable_cpu_binding\":true,\"torchair_graph_config\":{\"enabled\":false},"
              "\"ascend_scheduler_config\":{\"enabled\":false}}", "0.13.0rc1")
    assert f.status == Status.WARN
    assert "vllm-ascend 0.13.0rc1 ignores 2 --additional-config key(s)" in f.message
    assert "torchair_graph_config (last read by 0.11.0, ignored since 0.12.0rc1)" in f.message
    assert "ascend_scheduler_config (last read by 0.11.0, ignored since 0.12.0rc1)" in f.message


def test_a_misspelt_key_gets_a_suggestion_and_known_keys_pass():
    f = judge("--additional-config {\"enable_cpu_bindings\":true}")
    assert f.status == Status.WARN and "enable_cpu_bindings (did you mean enable_cpu_binding?)" in f.message
    f = judge("--additional-config {\"enable_cpu_binding\":true,\"xlite_graph_config\":{}}")
    assert f.status == Status.PASS and "accepts all 2" in f.message


def test_a_key_only_later_releases_read():
    f = judge("--additional-config {\"enable_flashcomm1\":true}", "0.13.0")
    assert f.status == Status.WARN and "enable_flashcomm1 (read only by later releases)" in f.message


def test_an_unrecorded_release_is_judged_against_the_nearest_older_one_and_says_so():
    f = judge("--additional-config {\"enable_cpu_binding\":true}", "0.13.1")
    assert f.status == Status.PASS and "judged against 0.13.0, the nearest older release recorded" in f.message
    assert judge("--additional-config {}", "0.5.0").status == Status.UNKNOWN


def test_a_development_build_named_after_a_stale_tag_is_judged_by_the_release_pairing_its_vllm():
    """vllm-ascend 0.13.0rc3.dev40 beside vLLM 0.28.0 is main of 0.28.0rc1's weeks, not of 0.13.0's: a key
    0.28.0rc1 reads (`enable_flashcomm1`) is no "later releases only" there, and its forbid rule only warns."""
    vllm = Distribution(name="vllm", version="0.28.0")
    out = facts(f"vllm serve {QWEN} --additional-config {{\"enable_flashcomm1\":true}}")
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm-ascend", version="0.13.0rc3.dev40"), vllm])
    f = run_check("SERVE307", out)
    assert f.status == Status.PASS and "a development build, judged against 0.28.0rc1" in f.message
    out = facts(f"vllm serve {QWEN} --additional-config {{\"enable_cpu_bindings\":true}}")
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm-ascend", version="0.13.0rc3.dev40"), vllm])
    assert run_check("SERVE307", out).status == Status.WARN  # 0.28.0rc1 forbids unknown keys: a stand-in warns


@pytest.mark.parametrize("raw, words", [("{enable_cpu_binding:true}", "Expecting property name"),
                                        ("[1,2]", "not a JSON object")])
def test_a_value_vllm_cannot_read_fails_with_the_parsers_words(raw, words):
    f = judge(f"--additional-config {raw}")
    assert f.status == Status.FAIL and words in f.message


def test_without_the_option_nothing_is_judged():
    assert judge("").status == Status.SKIP


def test_the_extractor_sees_every_way_vllm_ascend_reads_a_key():
    src = '''
class AscendConfig:
    def __init__(self, vllm_config):
        additional_config = vllm_config.additional_config if vllm_config.additional_config is not None else {}
        a = additional_config.get("plain", False)
        b = additional_config.get(
            "multiline", {})
        c = vllm_config.additional_config["subscript"]
        if "membership" in additional_config:
            pass
        d = self._get_config_value(additional_config, "via_helper", "ENV", 1)
        e = other.get("not_this_one")
'''
    assert keys_in_source(src) == {"plain", "multiline", "subscript", "membership", "via_helper"}
    assert keys_in_source("def (:") == set()


def test_the_shipped_key_lists_date_the_torchair_removal():
    table = shipped().additional_config
    assert table.history("torchair_graph_config", "0.25.1rc1") == ("0.11.0", "0.12.0rc1")
    assert table.row_for("0.13.0")[1] == "exact" and "6281c1207a" in table.row_for("0.13.0")[0].source
    assert len(table.releases) >= 35


# From 0.27.1rc1 the same mistakes stop vLLM at start ----------------------------------------------------------------
def test_a_misspelt_key_stops_a_strict_release_with_pydantics_words():  # the typo of #13679's description
    f = judge("--additional-config {\"enable_cpu_bindng\":true}", "0.28.0rc1")
    assert f.status == Status.FAIL and "pydantic `Unexpected keyword argument`" in f.message
    assert "enable_cpu_bindng (did you mean enable_cpu_binding?)" in f.message
    assert "unknown keys rejected" in f.evidence[-1].source and "vllm_ascend-0.28.0rc1.tar.gz" in f.evidence[-1].excerpt


def test_a_key_from_an_old_tutorial_fails_where_it_was_ignored_before():
    cfg = "--additional-config {\"torchair_graph_config\":{\"enabled\":true}}"
    assert judge(cfg, "0.26.0rc1").status == Status.WARN
    f = judge(cfg, "0.30.0rc2")
    assert f.status == Status.FAIL and "torchair_graph_config (last read by 0.11.0, ignored since 0.12.0rc1)" in f.message


def test_a_sub_config_key_is_judged_where_the_release_validates_it():
    ok = judge("--additional-config {\"eplb_config\":{\"dynamic_eplb\":true,\"num_redundant_experts\":16}}", "0.27.1rc1")
    assert ok.status == Status.PASS, ok.message
    f = judge("--additional-config {\"eplb_config\":{\"num_redundant_expert\":16}}", "0.27.1rc1")
    assert f.status == Status.FAIL
    assert "eplb_config.num_redundant_expert (did you mean eplb_config.num_redundant_experts?)" in f.message
    # Before 0.27.1rc1 the table records no sub-config keys: nothing below the top level is judged.
    assert judge("--additional-config {\"eplb_config\":{\"num_redundant_expert\":16}}", "0.26.0rc1").status \
        == Status.PASS


def test_keys_stripped_before_validation_are_accepted():
    f = judge("--additional-config {\"refresh\":true,\"enable_flashcomm1\":true,\"dump_config_path\":\"/d\"}",
              "0.30.0rc2")
    assert f.status == Status.PASS, f.message


def test_with_vllm_omni_installed_an_unknown_top_level_key_warns_and_a_sub_config_key_still_fails():  # #15515
    omni = Distribution(name="vllm-omni", version="0.30.0")
    f = judge("--additional-config {\"code2wav_enable_npu_graph\":true}", "0.30.0rc2", omni)
    assert f.status == Status.WARN and "vllm-omni is installed" in f.message
    f = judge("--additional-config {\"code2wav_enable_npu_graph\":true,\"rl_config\":{\"enable\":true}}",
              "0.30.0rc2", omni)
    assert f.status == Status.FAIL and "rl_config.enable (did you mean rl_config.enabled?)" in f.message
    assert "code2wav_enable_npu_graph" not in f.message
    assert judge("--additional-config {\"code2wav_enable_npu_graph\":true}", "0.30.0rc2").status == Status.FAIL


def test_a_release_newer_than_the_table_warns_instead_of_failing():
    f = judge("--additional-config {\"enable_cpu_bindng\":true}", "0.31.0rc1")
    assert f.status == Status.WARN and "judged against 0.30.0rc2" in f.message
    assert "0.30.0rc2 rejects unknown keys; vllm-ascend 0.31.0rc1 is not recorded" in f.message


PYDANTIC_SOURCE = '''
from __future__ import annotations
import dataclasses
import importlib.util
from typing import Any, ClassVar
from pydantic import ConfigDict
from vllm_ascend.config_utils import config


@config
class EplbConfig:
    dynamic_eplb: bool = False
    num_redundant_experts: int = 0


@config(config=ConfigDict(extra="allow"))
class OpenConfig:
    anything: int = 0


@config
class AscendConfig:
    model_config = ConfigDict(extra="forbid")
    LIMIT: ClassVar[int] = 3
    enable_cpu_binding: bool = True
    eplb_config: EplbConfig = dataclasses.field(default_factory=EplbConfig)
    open_config: OpenConfig = dataclasses.field(default_factory=OpenConfig)
    opaque_config: Any = None
    pd_tp_ratio: int = 1
    _private: set[int] = dataclasses.field(default_factory=set, init=False)
    derived: bool = dataclasses.field(default=False, init=False)


def init_ascend_config(vllm_config):
    additional_config = vllm_config.additional_config or {}
    _NON_USER_INPUT_KEYS = {"refresh", "dump_config"}
    kwargs = {k: v for k, v in additional_config.items() if k not in _NON_USER_INPUT_KEYS}
    if importlib.util.find_spec("vllm_omni") is not None:
        pass
    return AscendConfig(**kwargs)
'''


def test_the_pydantic_reader_takes_init_fields_stripped_keys_and_strict_sub_configs():
    found = pydantic_keys(PYDANTIC_SOURCE)
    assert found.strict is True and found.lenient_with == "vllm-omni"
    assert found.keys == ["dump_config", "enable_cpu_binding", "eplb_config", "eplb_config.dynamic_eplb",
                          "eplb_config.num_redundant_experts", "opaque_config", "open_config", "pd_tp_ratio",
                          "refresh"]
    # A class that is not a @config dataclass is the old era: the `.get` reader runs instead.
    old = read_release_keys([("vllm_ascend/ascend_config.py",
                              "class AscendConfig:\n    def __init__(self, c):\n        c.additional_config.get('k')\n"),
                             ("vllm_ascend/other.py", "x = additional_config.get('j')\n"), ("README.md", "")])
    assert old.strict is False and old.keys == ["j", "k"]
    allow = PYDANTIC_SOURCE.replace('model_config = ConfigDict(extra="forbid")', 'model_config = ConfigDict(extra="ignore")')
    assert pydantic_keys(allow).strict is False and pydantic_keys(allow).lenient_with is None
    assert pydantic_keys("def (:") is None and read_release_keys([("setup.py", "")]) is None


def test_the_shipped_table_switches_to_rejecting_unknown_keys_at_0_27_1rc1():
    table = shipped().additional_config
    strict = [r.version for r in table.releases if r.strict]
    assert strict[0] == "0.27.1rc1" and all(r.lenient_with == "vllm-omni" for r in table.releases if r.strict)
    assert table.row_for("0.26.0rc1")[0].strict is False and table.row_for("0.23.0.post1")[1] == "exact"
    assert "eplb_config.dynamic_eplb" in table.row_for("0.30.0rc2")[0].keys
