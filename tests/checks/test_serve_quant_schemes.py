"""SERVE322: the quantization types of an msModelSlim checkpoint against the methods the installed vllm-ascend
release builds (`serve/quant-schemes`), on model folders written here and read by the serve_model probe.

The NZ group-size case is written after vllm-ascend#10834 (Qwen3-8B quantized to W4A8 by msModelSlim with
`--group_size 256`, served on v0.18.0rc1 with `--quantization ascend`; the maintainer: "When group_size is 256, the
weight cannot be converted to NZ ... export VLLM_ASCEND_ENABLE_NZ=0 ... or specify group_size as 128") and #8770 (the
same checkpoint from the Qwen3-8B-W4A8 tutorial on 0.17.0rc2.dev131). The descriptions follow msModelSlim's layout
(a type per `.weight`, `group_size` at the top for per-group schemes), reduced to two layers."""

from __future__ import annotations

import json

import pytest

from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.parsers.quant_description import layer_types
from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution
from tests.checks.test_serve_checks import facts, on_release, run_check

PROJ = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj",
        "mlp.up_proj", "mlp.down_proj")


def description(linear="W4A8_DYNAMIC", experts=None, group=256) -> dict:
    desc = {"model_quant_type": linear, "model.embed_tokens.weight": "FLOAT", "lm_head.weight": "FLOAT"}
    if group is not None:
        desc["group_size"] = group
    for i in range(2):
        for p in PROJ if experts is None else PROJ[:4]:
            desc[f"model.layers.{i}.{p}.weight"] = linear
            desc[f"model.layers.{i}.{p}.weight_scale"] = linear
        for e in range(2 if experts else 0):
            for p in ("gate_proj", "up_proj", "down_proj"):
                desc[f"model.layers.{i}.mlp.experts.{e}.{p}.weight"] = experts
        desc[f"model.layers.{i}.input_layernorm.weight"] = "FLOAT"
    return desc


def judge(tmp_path, desc, ascend="0.18.0rc1", env=None, extra="--quantization ascend", dists=()):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"],
                                                      "num_hidden_layers": 2}))
    (tmp_path / "quant_model_description.json").write_text(json.dumps(desc))
    f = on_release(facts(f"vllm serve {tmp_path} {extra}".strip(), env=env), ascend)
    f["python"].distributions += [Distribution(name=n, version="2.0rc2") for n in dists]
    return run_check("SERVE322", f)


def test_layer_kinds_are_read_from_the_description():
    kinds = layer_types(description("W8A8_DYNAMIC", experts="W4A8_DYNAMIC"))
    assert set(kinds) == {"linear", "moe"}
    assert kinds["linear"] == {"W8A8_DYNAMIC": "model.layers.0.self_attn.q_proj.weight"}
    assert kinds["moe"] == {"W4A8_DYNAMIC": "model.layers.0.mlp.experts.0.gate_proj.weight"}
    assert layer_types({"model.embed_tokens.weight": "W8A8", "x.weight_scale": "W8A8", "n": 3}) == {}


def test_w4a8_group_256_with_nz_on_fails_and_says_the_two_fixes(tmp_path):
    f = judge(tmp_path, description())
    assert f.status == Status.FAIL, f.message
    assert "group_size 256" in f.message and "FRACTAL_NZ" in f.message and "64 or 128" in f.message
    assert "VLLM_ASCEND_ENABLE_NZ not set (default 1)" in f.message
    assert "model.layers.0.self_attn.q_proj.weight" in f.message
    assert "export VLLM_ASCEND_ENABLE_NZ=0" in f.remediation and "--group_size 128" in f.remediation
    assert judge(tmp_path, description(), env={"VLLM_ASCEND_ENABLE_NZ": "1"}).status == Status.FAIL
    assert judge(tmp_path, description(group=None)).status == Status.FAIL  # the release assumes 256


@pytest.mark.parametrize("desc, ascend, env", [
    (description(), "0.18.0rc1", {"VLLM_ASCEND_ENABLE_NZ": "0"}),  # the maintainer's first fix
    (description(group=128), "0.18.0rc1", None),  # the second: quantized again
    (description(), "0.12.0rc1", None),  # the linear method did not cast to NZ yet
    (description("W8A8_DYNAMIC"), "0.18.0rc1", None),
])
def test_the_controls_pass(tmp_path, desc, ascend, env):
    f = judge(tmp_path, desc, ascend=ascend, env=env)
    assert f.status == Status.PASS, f.message


def test_a_type_the_release_no_longer_builds_for_the_layer_kind_fails_naming_where_it_is_built(tmp_path):
    f = judge(tmp_path, description(), ascend="0.27.1rc1")
    assert f.status == Status.FAIL, f.message
    assert "builds no W4A8_DYNAMIC method for linear layers" in f.message
    assert "0.10.0rc1-0.26.0rc1" in f.message
    assert "W8A8_DYNAMIC" in f.remediation
    static_moe = description("W8A8_DYNAMIC", experts="W8A8")
    assert judge(tmp_path, static_moe, ascend="0.13.0rc1").status == Status.FAIL
    assert judge(tmp_path, static_moe, ascend="0.12.0rc1").status == Status.PASS


def test_what_the_check_cannot_see_is_unknown_or_skipped(tmp_path):
    assert judge(tmp_path, description(), ascend="0.7.3").status == Status.UNKNOWN  # mindie_turbo era: no row
    f = judge(tmp_path, description("W8A8"), ascend="0.9.1rc1", dists=("mindie-turbo",))
    assert f.status == Status.UNKNOWN and "mindie_turbo" in f.message
    assert judge(tmp_path, description("W8A8"), ascend="0.9.1rc1").status == Status.PASS
    assert judge(tmp_path, ["not", "an", "object"]).status == Status.UNKNOWN
    assert judge(tmp_path, description(), extra="--quantization fp8").status == Status.SKIP


def test_the_table_names_the_releases_that_build_a_type():
    table = Knowledge([]).quant_schemes
    assert table.accepting("W4A8_DYNAMIC", "linear") == "0.9.1rc2-0.9.1, 0.10.0rc1-0.26.0rc1"
    assert table.accepting("W8A8", "moe") == "0.9.2rc1-0.12.0rc1"
    assert table.accepting("NO_SUCH", "linear") == ""


def test_a_hostile_description_gives_a_bounded_finding(tmp_path):
    desc = {f"model.layers.{i}.mlp.down_proj.weight": f"TYPE_{i}_" + "X" * 5000 for i in range(200)}
    f = judge(tmp_path, desc)
    assert f.status == Status.FAIL and len(f.message) < 3000 and len(f.remediation) < 3000
