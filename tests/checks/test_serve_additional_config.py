"""SERVE307 --additional-config keys against what the installed vllm-ascend reads, and the extractor that wrote
matrices/serve/additional-config.toml from each release's source."""

from __future__ import annotations

import pytest

from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from ascend_doctor.sync.ascend_config import keys_in_source
from tests.checks.test_serve_checks import QWEN, facts
from tests.helpers import run_check, shipped


def judge(extra: str, ascend: str = "0.13.0"):
    out = facts(f"vllm serve {QWEN} {extra}")
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm-ascend", version=ascend),
                                             Distribution(name="vllm", version="0.13.0")])
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
    assert f.status == Status.PASS and "reads all 2" in f.message


def test_a_key_only_later_releases_read():
    f = judge("--additional-config {\"enable_flashcomm1\":true}", "0.13.0")
    assert f.status == Status.WARN and "enable_flashcomm1 (read only by later releases)" in f.message


def test_an_unrecorded_release_is_judged_against_the_nearest_older_one_and_says_so():
    f = judge("--additional-config {\"enable_cpu_binding\":true}", "0.13.1")
    assert f.status == Status.PASS and "judged against 0.13.0, the nearest older release recorded" in f.message
    assert judge("--additional-config {}", "0.5.0").status == Status.UNKNOWN


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
