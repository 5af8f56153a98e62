"""SERVE320: the fixes later vllm-ascend releases made for the served model (signatures/release-fixes, the model and
features read from each fix's subject), each verdict with its control, on the shipped table."""

from __future__ import annotations

import json

from ascend_doctor.knowledge.fix_subjects import (
    conditions,
    connector_areas,
    folder_model,
    path_connectors,
    served_keys,
    subject_chips,
    subject_features,
    subject_models,
    vocabulary,
)
from ascend_doctor.parsers.npu_smi import NpuChip
from ascend_doctor.report import Status
from tests.checks.test_serve_checks import facts, npu, on_release, run_check

VOCAB = vocabulary(["Qwen3NextForCausalLM", "Qwen3ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV4ForCausalLM",
                    "Qwen3_5ForConditionalGeneration", "GlmForCausalLM", "BertModel"],
                   ["qwen3_next", "deepseek_v32", "qwen3_5"])


def _model(tmp_path, name: str, model_type: str, arch: str) -> str:
    d = tmp_path / name
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"model_type": model_type, "architectures": [arch]}))
    return str(d)


def _qwen3_next(tmp_path) -> str:
    return _model(tmp_path, "Qwen3-Next-80B-A3B-Instruct", "qwen3_next", "Qwen3NextForCausalLM")


# what a subject names ----------------------------------------------------------------------------------------------

def test_a_subject_names_the_longest_model_name_in_any_spelling():
    assert subject_models("[BugFix] fix qwen3-next compilation error (#7936)", VOCAB) == ["qwen3next"]
    assert subject_models("[ModelRunner][Qwen3-Next] Fix attn_group initialization timing (#3477)", VOCAB) == [
        "qwen3next"]
    assert subject_models("[BugFix] fix bug of qwen3-next and qwen3.5 + pcp (#9497)", VOCAB) == ["qwen3next", "qwen35"]
    assert subject_models("[bugfix]fixed block_size incorrect setting issue in dsv3.2 (#7630)", VOCAB) == [
        "deepseekv32"]
    assert subject_models("[Bugfix]fix ds3.2 dcp mtp (#7617)", VOCAB) == ["deepseekv32"]
    assert subject_models("[BugFix]Fix dsv4 quant name issue (#14490)", VOCAB) == ["deepseekv4"]
    # family words and the model runner are no model: such a fix is not judged before launch
    assert subject_models("[BugFix] Fix GLM MTP and Bert pooling in the model runner", VOCAB) == []


def test_features_and_chips_are_read_at_letter_and_digit_edges():
    assert subject_features("[BugFix] Fix ACLgraph bug in Qwen3_32b_int8 case (#3204)") == ["ACL Graph", "W8A8"]
    assert subject_features("[BugFix] fix qwen3.5+pcp+mtp error (#10907)") == ["MTP", "PCP"]
    assert subject_features("[BugFix][P/D] Fix MooncakeConnectorV1 Deepseek-V3.2 kvcache group bug") == [
        "Prefill-decode Disaggregation"]
    assert subject_features("Fix the step counter") == [] and subject_features("keep deep copies") == []
    assert subject_chips("[BugFix][310P] Repair 310P Qwen3.5 aclgraph precision (#9727)") == ["310P"]
    assert subject_chips("[BugFix]fix A3 DSV4 precision (#10221)") == ["A3"]
    assert subject_chips("[BugFix] fix qwen3.5 accuracy (#10442)") == []


def test_a_folder_name_gives_the_model_it_begins_with_as_spelled():
    assert folder_model("/models/Qwen3-Next-80B-A3B-Instruct-w8a8/", VOCAB) == ("qwen3next", "Qwen3-Next")
    assert folder_model("/data/DeepSeek-V3.2-Exp", VOCAB) == ("deepseekv32", "DeepSeek-V3.2")
    assert folder_model("/data/my-finetune", VOCAB) is None
    assert served_keys({"model_type": "kimi_k2", "architectures": ["DeepseekV3ForCausalLM"]}) == {"kimik2",
                                                                                                 "deepseekv3"}


# the check ---------------------------------------------------------------------------------------------------------

def _qwen3_moe(tmp_path) -> str:
    return _model(tmp_path, "Qwen3-30B-A3B", "qwen3_moe", "Qwen3MoeForCausalLM")


def test_a_reported_failure_fixed_later_warns_naming_the_fix_and_the_release(tmp_path):
    # "[Bugfix] Support Qwen3-MOE on aclgraph mode (#1381)", Fixes #1368: since 0.9.1rc1, first in 0.9.2rc1
    m = _qwen3_moe(tmp_path)
    out = run_check("SERVE320", on_release(facts(f"vllm serve {m} --tensor-parallel-size 4"), "0.9.1rc1"))
    assert out.status == Status.WARN, out.message
    assert "vllm-ascend 0.9.1rc1 lacks 1 fix(es) of reported failures" in out.message
    assert "'[Bugfix] Support Qwen3-MOE on aclgraph mode (#1381)' (in 0.9.2rc1)" in out.message
    assert "0.9.2rc1 carries them all" in out.message and "--vllm-ascend 0.9.2rc1" in out.remediation
    assert any("(fixes #1368)" in str(e.excerpt) for e in out.evidence)
    # controls: eager mode (the fix is for ACL graph), and the release that carries it
    eager = run_check("SERVE320", on_release(facts(f"vllm serve {m} --enforce-eager"), "0.9.1rc1"))
    assert "#1381" not in eager.message
    ok = run_check("SERVE320", on_release(facts(f"vllm serve {m} --tensor-parallel-size 4"), "0.13.0"))
    assert ok.status == Status.PASS and "lacks no fix of a reported failure for Qwen3MoeForCausalLM" in ok.message


def test_the_other_fixes_that_apply_are_leads_not_a_verdict(tmp_path):
    # Qwen3-Next on 0.11.0rc0: later fixes name it ("fix qwen3next full graph break. (#3812)"), none for an issue
    m = _qwen3_next(tmp_path)
    out = run_check("SERVE320", on_release(facts(f"vllm serve {m} --tensor-parallel-size 4"), "0.11.0rc0"))
    assert out.status == Status.PASS
    assert "none for a reported failure: leads, not a verdict (evidence)" in out.message
    assert any("#3812" in e.source for e in out.evidence)


def test_a_fix_of_code_the_release_never_had_is_not_its_bug(tmp_path):
    # "[BugFix] fix qwen3-next compilation error (#7936)", first in 0.19.1rc1, changed lines that came in the
    # 0.19.1rc1 cycle (since = 0.19.1rc1, git blame): 0.13.0 lacks the fix but never had the bug
    m = _qwen3_next(tmp_path)
    out = run_check("SERVE320", on_release(facts(f"vllm serve {m} --tensor-parallel-size 4"), "0.13.0"))
    assert "#7936" not in out.message and not any("#7936" in e.source for e in out.evidence)


TORCHAIR = ' --additional-config {"torchair_graph_config":{"enabled":true}}'


def test_a_reported_failure_of_a_feature_combination_applies_to_any_model_that_uses_it(tmp_path):
    # "[BugFix] Fix a bug of running chunked-prefill with torchair. (#1378) (#1844)", Fixes #1369: first in 0.9.1rc2
    m = _model(tmp_path, "DeepSeek-V2-Lite", "deepseek_v2", "DeepseekV2ForCausalLM")
    both = run_check("SERVE320", on_release(facts(f"vllm serve {m} --enable-chunked-prefill" + TORCHAIR), "0.9.1rc1"))
    assert both.status == Status.WARN and "#1844" in both.message and "0.9.1rc2 carries them all" in both.message
    assert "Torchair + Chunked Prefill: 1" in both.message
    one = run_check("SERVE320", on_release(facts(f"vllm serve {m}" + TORCHAIR), "0.9.1rc1"))
    assert "#1844" not in one.message
    # a model nobody can name: the combination is still judged, and the message says what was not
    anon = run_check("SERVE320", on_release(facts("vllm serve /models/my-finetune --enable-chunked-prefill" + TORCHAIR),
                                            "0.9.1rc1"))
    assert anon.status == Status.WARN and "the model's own fixes were not judged" in anon.message


def test_a_fix_for_one_chip_applies_on_that_chip_only(tmp_path):
    # "[BugFix][310p] Qwen3.5 shared-experts linear failuer when out_dim=1 (#11714)": since 0.20.2rc1, first in
    # 0.24.0rc1, no issue named: a lead on a 300I Duo, nothing on an A2, "not judged" where no chip is seen
    m = _model(tmp_path, "Qwen3.5-27B", "qwen3_5", "Qwen3_5ForConditionalGeneration")
    a2 = run_check("SERVE320", on_release(facts(f"vllm serve {m}"), "0.21.0rc1"))
    duo = npu(2)
    duo.info.chips = [NpuChip(npu_id=i, chip_id=0, name="310P3", health="OK", hbm_used_mb=0, hbm_total_mb=44280)
                      for i in range(2)]
    p310 = run_check("SERVE320", on_release(facts(f"vllm serve {m}", npus=duo), "0.21.0rc1"))
    assert not any("#11714" in e.source for e in a2.evidence)
    assert p310.status == Status.PASS and any("#11714" in e.source for e in p310.evidence)
    unseen = on_release(facts(f"vllm serve {m}"), "0.21.0rc1")
    unseen["npu_smi"] = None
    assert "the chip (310P)" in run_check("SERVE320", unseen).message


def test_speculative_decoding_and_mtp_are_one_feature_not_a_combination():
    from ascend_doctor.knowledge.fix_subjects import distinct_features

    assert distinct_features(["MTP", "Speculative Decoding"]) == {"Speculative Decoding"}
    assert len(distinct_features(["Eagle3", "ACLGraph Full_Decode_Only"])) == 2
    assert distinct_features(["ACL Graph", "MTP"]) == {"Speculative Decoding"}


def test_a_paste_is_judged_by_the_folder_name_and_says_so():
    out = run_check("SERVE320", on_release(facts("vllm serve /models/Qwen3-30B-A3B -tp 4"), "0.9.1rc1"))
    assert out.status == Status.WARN and "#1381" in out.message  # A3B: the MoE checkpoint of the family
    ok = run_check("SERVE320", on_release(facts("vllm serve /models/Qwen3-30B-A3B -tp 4"), "0.13.0"))
    assert "Qwen3-30B-A3B (the name of /models/Qwen3-30B-A3B; its config.json was not read)" in ok.message
    unknown = run_check("SERVE320", on_release(facts("vllm serve /models/my-finetune"), "0.11.0rc0"))
    assert unknown.status == Status.UNKNOWN and "begins with no model name" in unknown.message


def test_a_fix_for_a_quantized_checkpoint_needs_one(tmp_path):
    # "[BugFix]Fix dsv4 quant name issue (#14490)": on main only, a lead for quantized checkpoints alone
    m = _model(tmp_path, "DeepSeek-V4-Flash", "deepseek_v4", "DeepseekV4ForCausalLM")
    quant = run_check("SERVE320", on_release(facts(f"vllm serve {m} --quantization ascend"), "0.21.0rc1"))
    plain = run_check("SERVE320", on_release(facts(f"vllm serve {m}"), "0.21.0rc1"))
    assert any("#14490" in e.source and "no release up to 0.25.1rc1" in str(e.excerpt) for e in quant.evidence)
    assert not any("#14490" in e.source for e in plain.evidence)


def test_a_development_build_is_not_judged_by_its_number(tmp_path):
    m = _qwen3_next(tmp_path)
    out = run_check("SERVE320", on_release(facts(f"vllm serve {m}"), "0.19.1rc2.dev5+gabc1234"))
    assert out.status == Status.UNKNOWN and "development or local build" in out.message


def test_a_release_newer_than_the_history_says_where_the_history_ends(tmp_path):
    m = _qwen3_next(tmp_path)
    out = run_check("SERVE320", on_release(facts(f"vllm serve {m}"), "0.30.0"))
    assert out.status == Status.PASS and "the history read ends at 0.25.1rc1" in out.message


def test_a_revert_and_the_fix_it_undid_are_no_fixes():
    from ascend_doctor.knowledge.fix_subjects import conditions

    fix = "[BUGFIX] Mtp torchair pd fix (#3449)"
    undone = conditions([(fix, ()), ('Revert "[BUGFIX] Mtp torchair pd fix (#3449)" (#3500)', ())], VOCAB)
    assert undone == [((), (), (), (), ()), ((), (), (), (), ())]
    assert conditions([(fix, ())], VOCAB)[0][1] == ("MTP", "Prefill-decode Disaggregation", "Torchair")


def test_the_model_files_a_fix_alone_changed_say_whose_fix_it_is():
    from ascend_doctor.knowledge.fix_subjects import conditions, path_models

    assert path_models(["vllm_ascend/models/qwen3_next.py:forward"], VOCAB) == ["qwen3next"]
    assert path_models(["vllm_ascend/torchair/models/torchair_deepseek_v32.py:forward"], VOCAB) == ["deepseekv32"]
    assert path_models(["vllm_ascend/models/qwen3_next.py:forward", "vllm_ascend/worker/model_runner_v1.py:x"],
                       VOCAB) is None
    # a fix naming two features but changing one model's file is that model's, not every model's
    assert conditions([("[Bugfix] fix pcp + mtp (#1)", ("vllm_ascend/models/qwen3_next.py:forward",))],
                      VOCAB)[0][0] == ("qwen3next",)


def test_conditions_nobody_looked_at_keep_a_fix_unjudged():
    from ascend_doctor.knowledge.fix_subjects import conditions

    (_, features, _, unjudged, _), = conditions([("[BugFix] Fix dsv4 FlashComm2 o_proj with sp (#2)", ())], VOCAB)
    assert "Flashcomm1" not in features and unjudged == ("flashcomm2", "sp")
    (_, _, _, unjudged, _), = conditions([("[main2main] adapt to vllm 0.12 (#3)", ())], VOCAB)
    assert unjudged


def test_a_variant_of_a_model_is_its_own_model():
    assert subject_models("[BugFix][310P] fix Qwen3-Embedding-8B run failed (#9854)", VOCAB) == ["qwen3embedding"]
    assert folder_model("/m/Qwen3-Embedding-8B", VOCAB)[0] == "qwen3embedding"


def test_a_negated_feature_or_an_opt_in_engine_keeps_a_fix_unjudged():
    from ascend_doctor.knowledge.fix_subjects import conditions

    for subject in ("[BugFix] Fix Qwen3-Next crash when prefix caching is disabled (#5)",
                    "[BugFix][MRV2] Fix dsv4 MTP slot mapping (#6)", "[BugFix] fix qwen3-next without aclgraph (#7)"):
        (_, _, _, unjudged, _), = conditions([(subject, ())], VOCAB)
        assert unjudged, subject
    # a release tag in a cherry-pick's subject is no V0 engine
    (_, _, _, unjudged, _), = conditions([("[v0.9.1][BugFix] Fix Qwen3-Next mtp (#8)", ())], VOCAB)
    assert unjudged == ()


def test_a_fix_of_the_quantization_code_alone_needs_a_quantized_checkpoint():
    from ascend_doctor.knowledge.fix_subjects import conditions

    (_, features, _, _, _), = conditions([("[BugFix] Fix Qwen3-Next scale (#9)",
                                        ("vllm_ascend/quantization/w8a8_dynamic.py:apply",))], VOCAB)
    assert "Quantization" in features


# a KV connector's own fixes --------------------------------------------------------------------------------------

# Name=module pairs as vllm-ascend registers them (serve/names-vllm-ascend, kv_connector_module): 0.13.0's and 0.23.0's
MODULES = ["MooncakeConnectorV1=vllm_ascend.distributed.mooncake_connector",
           "MooncakeLayerwiseConnector=vllm_ascend.distributed.mooncake_layerwise_connector",
           "UCMConnector=vllm_ascend.distributed.ucm_connector",
           "AscendStoreConnector=vllm_ascend.distributed.kvpool.ascend_store_connector",
           "MooncakeConnectorStoreV1=vllm_ascend.distributed.kvpool.ascend_store_connector",
           "MooncakeConnectorV1=vllm_ascend.distributed.kv_transfer.kv_p2p.mooncake_connector",
           "MooncakeHybridConnector=vllm_ascend.distributed.kv_transfer.kv_p2p.mooncake_hybrid_connector",
           "AscendStoreConnector=vllm_ascend.distributed.kv_transfer.kv_pool.ascend_store.ascend_store_connector"]


def test_a_connector_owns_its_package_or_only_its_file():
    areas = connector_areas(MODULES)
    # alone in its package: the package, backends included; beside other connectors' modules: the file alone
    assert areas["vllm_ascend/distributed/kvpool/"] == {"AscendStoreConnector", "MooncakeConnectorStoreV1"}
    assert areas["vllm_ascend/distributed/mooncake_connector.py"] == {"MooncakeConnectorV1"}
    assert "vllm_ascend/distributed/" not in areas
    assert path_connectors(["vllm_ascend/distributed/kvpool/backend/mooncake_backend.py:put"], areas) == [
        "AscendStoreConnector", "MooncakeConnectorStoreV1"]
    assert path_connectors(["vllm_ascend/distributed/kv_transfer/kv_p2p/mooncake_connector.py:_send",
                            "vllm_ascend/distributed/mooncake_layerwise_connector.py:_send"], areas) == [
        "MooncakeConnectorV1", "MooncakeLayerwiseConnector"]
    # any file outside the connectors' code: a shared fix, not one connector's
    assert path_connectors(["vllm_ascend/distributed/mooncake_connector.py:f",
                            "vllm_ascend/worker/model_runner_v1.py:g"], areas) is None
    assert path_connectors(["vllm_ascend/distributed/parallel_state.py:init"], areas) is None
    (_, _, _, _, connectors), = conditions(
        [("[BugFix] fix transfer (#1)", ("vllm_ascend/distributed/mooncake_connector.py:_send",))], VOCAB, areas)
    assert connectors == ("MooncakeConnectorV1",)


def _pd(connector: str) -> str:
    return " --kv-transfer-config " + json.dumps({"kv_connector": connector, "kv_role": "kv_producer"}, separators=(",", ":"))


def test_a_reported_failure_fixed_in_the_connector_the_command_uses_warns(tmp_path):
    # "[P/D][BugFix] Fix for transmit kv cache failure (#8959)", Fixes #7871: it changed only
    # mooncake_connector.py and mooncake_layerwise_connector.py; since 0.19.1rc1, first in 0.20.2rc1
    m = _model(tmp_path, "my-model", "llama", "LlamaForCausalLM")
    out = run_check("SERVE320", on_release(facts(f"vllm serve {m}" + _pd("MooncakeConnectorV1")), "0.19.1rc1"))
    assert out.status == Status.WARN, out.message
    assert "'[P/D][BugFix] Fix for transmit kv cache failure (#8959)' (in 0.20.2rc1)" in out.message
    assert "MooncakeConnectorV1: " in out.message
    assert any("(fixes #7871)" in str(e.excerpt) and "MooncakeConnectorV1" in str(e.excerpt) for e in out.evidence)
    # controls: another connector, no connector at all, and the release that carries the fix
    for cmd, release in ((f"vllm serve {m}" + _pd("AscendStoreConnector"), "0.19.1rc1"),
                         (f"vllm serve {m}", "0.19.1rc1"),
                         (f"vllm serve {m}" + _pd("MooncakeConnectorV1"), "0.20.2rc1")):
        other = run_check("SERVE320", on_release(facts(cmd), release))
        assert "#8959" not in other.message and not any("#8959" in e.source for e in other.evidence), cmd


def test_a_cut_kv_transfer_config_leaves_the_connector_fixes_unjudged(tmp_path):
    m = _model(tmp_path, "my-model", "llama", "LlamaForCausalLM")
    out = run_check("SERVE320", on_release(facts(f"vllm serve {m} --kv-transfer-config '{{\"kv_connector\": ...'"),
                                           "0.19.1rc1"))
    assert "#8959" not in out.message
    assert "the KV connector (--kv-transfer-config not read)" in out.message, out.message


def test_a_module_path_that_loads_the_release_s_own_connector_is_that_connector(tmp_path):
    m = _model(tmp_path, "my-model", "llama", "LlamaForCausalLM")
    kv = json.dumps({"kv_connector": "MyMooncake", "kv_role": "kv_producer",
                     "kv_connector_module_path": "vllm_ascend.distributed.mooncake_connector"}, separators=(",", ":"))
    out = run_check("SERVE320", on_release(facts(f"vllm serve {m} --kv-transfer-config {kv}"), "0.19.1rc1"))
    assert out.status == Status.WARN and "#8959" in out.message, out.message
    own = kv.replace("vllm_ascend.distributed.mooncake_connector", "my_pkg.connector")
    mine = run_check("SERVE320", on_release(facts(f"vllm serve {m} --kv-transfer-config {own}"), "0.19.1rc1"))
    assert "#8959" not in mine.message
