"""SERVE211: an msModelSlim description against the weights beside it, on model folders written here (config.json,
quant_model_description.json, and the weights' index or real safetensors headers), read by the serve_model probe."""

from __future__ import annotations

import json
import struct

import pytest

from ascend_doctor.parsers.npu_smi import NpuChip, NpuSmiInfo
from ascend_doctor.parsers.quant_description import canonical, coverage, kind_of
from ascend_doctor.probes.npu import CommandSummary, NpuSmiFact
from ascend_doctor.report import Status
from tests.checks.test_serve_checks import facts, on_release, run_check

LAYERS = 2


def _names(layers: int = LAYERS, mtp: bool = False) -> list[str]:
    """A Llama-shaped checkpoint's tensors as msModelSlim saves them (W8A8: scales beside each quantized weight), after
    the layout of msModelSlim's own docs (MindStudio-ModelSlim, the quant_model_weight_w8a8.safetensors and
    quant_model_description_w8a8.json examples: `model.layers.0.self_attn.q_proj.weight` "W8A8" with its
    `input_scale`/`deq_scale`, `model.embed_tokens.weight` "FLOAT"), whose saver writes every name to both files."""
    out = ["model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"]
    for i in range(layers + (1 if mtp else 0)):
        for proj in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj",
                     "mlp.up_proj", "mlp.down_proj"):
            out += [f"model.layers.{i}.{proj}.{t}" for t in ("weight", "deq_scale", "input_scale")]
        out += [f"model.layers.{i}.input_layernorm.weight", f"model.layers.{i}.post_attention_layernorm.weight"]
    return out


def _description(names, drop=()) -> dict:
    desc = {"model_quant_type": "W8A8", "version": "1.0.0"}
    for n in names:
        if not any(d in n for d in drop):
            desc[n] = "FLOAT" if "norm" in n or "embed" in n or "lm_head" in n else "W8A8"
    return desc


def model_dir(tmp_path, names=None, desc=None, *, index=True, config=None):
    names = _names() if names is None else names
    (tmp_path / "config.json").write_text(json.dumps(config or {"model_type": "llama", "num_hidden_layers": LAYERS,
                                                                "architectures": ["LlamaForCausalLM"]}))
    (tmp_path / "quant_model_description.json").write_text(json.dumps(_description(names) if desc is None else desc))
    if index:
        (tmp_path / "quant_model_weight_w8a8.safetensors.index.json").write_text(json.dumps(
            {"metadata": {"total_size": 1000}, "weight_map": {n: "quant_model_weight_w8a8.safetensors" for n in names}}))
    else:
        safetensors(tmp_path / "quant_model_weight_w8a8.safetensors", names)
    return str(tmp_path)


def safetensors(path, names) -> None:
    """A real safetensors file: 8 bytes of header length, the JSON header, then the tensors' bytes (one int8 each)."""
    header = {n: {"dtype": "I8", "shape": [1], "data_offsets": [i, i + 1]} for i, n in enumerate(names)}
    header["__metadata__"] = {"format": "pt"}
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(len(names)))


def judge(path, extra="", ascend="0.13.0rc3", npus=None):
    f = facts(f"vllm serve {path} --quantization ascend {extra}".strip(), npus=npus)
    return run_check("SERVE211", on_release(f, ascend))


# the parser ---------------------------------------------------------------------------------------------------------
def test_names_are_compared_without_the_wrappers_exports_differ_in():
    assert canonical("model.language_model.layers.0.mlp.up_proj.weight") == "layers.0.mlp.up_proj.weight"
    assert canonical("language_model.model.layers.0.mlp.up_proj.weight") == "layers.0.mlp.up_proj.weight"
    assert canonical("model.layers.61.shared_head.head.weight") == "layers.61.head.weight"
    assert canonical("layers.3.attn.wq_a.weight") == "layers.3.self_attn.wq_a.weight"


@pytest.mark.parametrize("name, kind", [
    ("model.layers.0.self_attn.q_proj.weight", "shard"),
    ("model.layers.3.mlp.experts.17.down_proj.weight", "shard"),
    ("model.layers.0.self_attn.o_proj.weight", "layer"),
    ("model.layers.0.input_layernorm.weight", "norm"),
    ("model.layers.0.self_attn.kv_a_layernorm.weight", "norm"),
    ("model.layers.61.eh_proj.weight", "mtp_layer"),
    ("model.layers.61.mlp.experts.0.gate_proj.weight", "mtp_shard"),
    ("mtp.layers.0.self_attn.o_proj.weight", "mtp_layer"),
    ("visual.blocks.0.attn.qkv.weight", "layer"),
    ("visual.blocks.40.attn.qkv.weight", "layer"),
    ("model.embed_tokens.weight", "embedding"),
    ("lm_head.weight", "embedding"),
    ("visual.merger.mlp.0.weight", "other"),
])
def test_a_missing_weight_is_classed_by_what_vllm_ascend_does_with_its_layer(name, kind):
    assert kind_of(name, 61) == kind


def test_coverage_counts_each_kind_and_keeps_a_few_names_in_layer_order():
    names = [f"model.layers.{i}.self_attn.o_proj.weight" for i in range(12)] + ["model.norm.weight"]
    cov = coverage("d.json", {"model_quant_type": "W8A8"}, names, 12)
    assert cov.counts == {"layer": 12, "norm": 1} and cov.weights == 13 and cov.described == 0
    assert cov.missing["layer"][:3] == [f"model.layers.{i}.self_attn.o_proj.weight" for i in range(3)]
    assert len(cov.missing["layer"]) == 6 and "norm" not in cov.missing


# the check ----------------------------------------------------------------------------------------------------------
def test_a_description_from_the_same_export_passes(tmp_path):
    out = judge(model_dir(tmp_path))
    assert out.status == Status.PASS, out.message
    assert "names 49 tensors; the checkpoint has 21 weights" in out.message


def test_the_weights_are_read_from_safetensors_headers_without_an_index(tmp_path):
    out = judge(model_dir(tmp_path, index=False))
    assert out.status == Status.PASS and "quant_model_weight_w8a8.safetensors" in out.message
    names = _names()
    (tmp_path / "x").mkdir()
    bad = judge(model_dir(tmp_path / "x", names, _description(names, drop=("self_attn.q_proj",)), index=False))
    assert bad.status == Status.FAIL
    assert "(e.g. KeyError: 'model.layers.0.self_attn.q_proj.weight')" in bad.message


def test_a_description_written_for_other_weights_fails_naming_the_first_lookup(tmp_path):
    """vllm-ascend#3520: an INT8 GLM-4.6 whose description does not name the attention projections."""
    names = _names()
    desc = _description(names, drop=("self_attn.",))
    desc.update({f"model.layers.{i}.self_attn.qkv_proj.weight": "W8A8" for i in range(LAYERS)})
    out = judge(model_dir(tmp_path, names, desc))
    assert out.status == Status.FAIL
    assert "6 shards of fused layers have no entry (model.layers.0.self_attn.q_proj.weight, model.layers.0.self_attn.k_proj" in out.message
    assert "(e.g. KeyError: 'model.layers.0.self_attn.q_proj.weight')" in out.message
    assert "msModelSlim wrote for them in the same run" in out.remediation


def test_an_unfused_layer_without_an_entry_fails_up_to_0_27_and_warns_from_0_28(tmp_path):
    names = _names()
    path = model_dir(tmp_path, names, _description(names, drop=("o_proj.weight",)))
    assert judge(path).status == Status.FAIL
    assert judge(path, ascend="0.27.1rc1").status == Status.FAIL
    later = judge(path, ascend="0.28.0rc1")
    assert later.status == Status.WARN and "builds such a layer unquantized" in later.message


def test_a_missing_embedding_entry_is_judged_by_the_release_and_the_chip(tmp_path):
    names = _names()
    path = model_dir(tmp_path, names, _description(names, drop=("embed_tokens",)))
    assert judge(path).status == Status.FAIL  # 0.13.0rc3 looks it up (vllm-ascend#3534's KeyError)
    assert judge(path, ascend="0.23.0").status == Status.PASS
    assert judge(path, ascend="0.25.1rc1").status == Status.FAIL
    assert judge(path, ascend="0.30.0rc2").status == Status.PASS
    assert judge(path, ascend="0.9.0rc2").status == Status.PASS
    chips = [NpuChip(npu_id=i, chip_id=0, name="310P3", health="OK", hbm_used_mb=100, hbm_total_mb=45000)
             for i in range(2)]
    duo = NpuSmiFact(found=True, command=CommandSummary(argv=["npu-smi", "info"], returncode=0),
                     info=NpuSmiInfo(chips=chips))
    assert judge(path, ascend="0.18.0").status == Status.FAIL
    assert judge(path, ascend="0.18.0", npus=duo).status == Status.PASS  # 310P builds embeddings unquantized
    assert judge(path, npus=duo).status == Status.FAIL  # but not before 0.15.0rc1


def test_the_mtp_layer_matters_only_when_mtp_is_served(tmp_path):
    names = _names(mtp=True)
    path = model_dir(tmp_path, names, _description(names, drop=(f"layers.{LAYERS}.",)))
    plain = judge(path)
    assert plain.status == Status.PASS and "loaded only with an MTP --speculative-config" in plain.message
    spec = judge(path, """--speculative-config {"method":"deepseek_mtp","num_speculative_tokens":1}""")
    assert spec.status == Status.FAIL and '"FLOAT"' in spec.remediation
    assert f"(e.g. KeyError: 'model.layers.{LAYERS}.self_attn.q_proj.weight')" in spec.message


def test_norms_and_renamed_wrappers_are_not_gaps(tmp_path):
    names = _names()
    desc = _description(names, drop=("norm",))
    desc = {k.replace("model.layers.", "language_model.model.layers."): v for k, v in desc.items()}
    out = judge(model_dir(tmp_path, names, desc))
    assert out.status == Status.PASS, out.message


def test_what_cannot_be_compared_is_unknown_and_what_does_not_apply_skips(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    nothing = model_dir(tmp_path / "a", index=False)
    (tmp_path / "a" / "quant_model_weight_w8a8.safetensors").unlink()
    out = judge(nothing)
    assert out.status == Status.UNKNOWN and "no *.safetensors weights" in out.message
    broken = model_dir(tmp_path / "b", index=False)
    (tmp_path / "b" / "quant_model_weight_w8a8.safetensors").write_bytes(struct.pack("<Q", 40) + b"{not json")
    out = judge(broken)
    assert out.status == Status.UNKNOWN and "the safetensors header is not JSON" in out.message
    f = facts(f"vllm serve {broken} --quantization compressed-tensors")
    assert run_check("SERVE211", f).status == Status.SKIP
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "config.json").write_text("{}")
    assert judge(str(tmp_path / "c")).status == Status.SKIP


def _moe(model_type: str = "kimi_k2", fused_key: bool = False) -> tuple[list, dict, dict]:
    """A DeepSeek-shaped MoE checkpoint: layer 0 dense, layer 1 with two experts, as msModelSlim names them."""
    names = ["model.embed_tokens.weight", "lm_head.weight", "model.norm.weight",
             "model.layers.0.self_attn.q_a_proj.weight", "model.layers.0.mlp.gate_proj.weight",
             "model.layers.1.self_attn.q_a_proj.weight", "model.layers.1.mlp.gate.weight"]
    names += [f"model.layers.1.mlp.experts.{e}.{p}.{t}" for e in range(2) for p in ("gate_proj", "up_proj", "down_proj")
              for t in ("weight", "weight_scale", "weight_offset")]
    desc = _description(names)
    if fused_key:
        desc["model.layers.1.mlp.experts.weight"] = "W8A8_DYNAMIC"
    return names, desc, {"model_type": model_type, "num_hidden_layers": 2, "architectures": ["DeepseekV3ForCausalLM"]}


def judge_rows(path, ascend, extra=""):
    """SERVE211 on `ascend`'s serve/names-vllm-ascend row (the fixture's installed files do not hold vllm-ascend)."""
    f = on_release(facts(f"vllm serve {path} --quantization ascend {extra}".strip()), ascend)
    del f["vllm_files"]
    return run_check("SERVE211", f)


def test_a_moe_model_type_the_release_does_not_map_fails_on_the_experts_lookup(tmp_path):
    """vllm-ascend#3785: Kimi-K2 W8A8 stops with KeyError: 'model.layers.1.mlp.experts.weight'; the fix (#3798)
    added kimi_k2 to the mapping, which the 0.11.0rc2 sdist has."""
    names, desc, config = _moe()
    path = model_dir(tmp_path, names, desc, config=config)
    out = judge_rows(path, "0.11.0rc1")
    assert out.status == Status.FAIL, out.message
    assert "config.json model_type 'kimi_k2' is not among the model types whose quantized experts" in out.message
    assert "it first appears in vllm-ascend 0.11.0rc2" in out.message
    assert "(e.g. KeyError: 'model.layers.1.mlp.experts.weight')" in out.message
    assert "0.28.0rc1 or later" in out.remediation
    assert judge_rows(path, "0.11.0rc2").status == Status.PASS
    assert judge_rows(path, "0.28.0rc1").status == Status.PASS  # the shards are found in the description
    assert judge_rows(path, "0.10.2rc1").status == Status.PASS  # no list read for that release: not judged


def test_a_description_with_the_fused_experts_key_or_a_mapped_text_model_type_passes(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    names, desc, config = _moe(fused_key=True)
    assert judge_rows(model_dir(tmp_path / "a", names, desc, config=config), "0.11.0rc1").status == Status.PASS
    names, desc, config = _moe("qwen3_vl_moe")
    config["text_config"] = {"model_type": "qwen3_vl_moe_text"}
    path = model_dir(tmp_path / "b", names, desc, config=config)
    assert judge_rows(path, "0.13.0").status == Status.PASS  # 0.13.0 reads hf_text_config: qwen3_vl_moe_text
    assert judge_rows(path, "0.14.0rc1").status == Status.PASS  # 0.14.0rc1 reads hf_config: qwen3_vl_moe
    assert judge_rows(path, "0.12.0rc1").status == Status.FAIL


def test_without_vllm_ascend_the_gaps_name_the_releases_from_the_rows(tmp_path):
    """No vllm-ascend in the serving python: what a gap does is told by the serve/release-features rows' ranges (a
    layer built unquantized from >=0.28.0rc1; embeddings looked up in the rows' ranges), and it warns."""
    names = _names()
    path = model_dir(tmp_path, names, _description(names, drop=("o_proj.weight", "embed_tokens")))
    f = facts(f"vllm serve {path} --quantization ascend")
    f["python"].distributions = [d for d in f["python"].distributions if d.name != "vllm-ascend"]
    out = run_check("SERVE211", f)
    assert out.status == Status.WARN, out.message
    assert "builds such a layer unquantized in vllm-ascend >=0.28.0rc1" in out.message
    assert "(vllm-ascend >=0.9.1rc2,<0.9.2rc1 or >=0.10.0rc1,<0.23.0rc1" in out.message
