"""The deployment model against published figures: parameter counts of real checkpoints, vLLM's own KV-cache log
for the model the vllm-cpu tier serves, and the KV formulas of vLLM V1 for MLA, GQA replication and sliding windows."""

from __future__ import annotations

import pytest

from ascend_doctor.deploy.arch import derived_max_len, read_architecture
from ascend_doctor.deploy.kv import capacity, kv_per_token
from ascend_doctor.deploy.weights import count_params, estimate
from tests.deploy import configs as C
from tests.helpers import shipped


@pytest.mark.parametrize("cfg, params", [
    (C.QWQ_32B, 32_763_876_352),    # model-info report of the checkpoint: 32,763,876,352 parameters
    (C.QWEN3_14B, 14_768_307_200),  # the same kind of report for Qwen3-14B
])
def test_parameter_count_is_exact_for_dense_checkpoints(cfg, params):
    assert count_params(read_architecture(cfg)).total == params


@pytest.mark.parametrize("cfg, billions", [
    (C.QWEN3_8B, 8.19),        # Qwen3-8B model card: 8.2 B
    (C.QWEN3_30B_A3B, 30.5),   # Qwen3-30B-A3B model card: 30.5 B
    (C.QWEN3_235B, 235.1),     # Qwen3-235B-A22B model card: 235 B
    (C.DEEPSEEK_V3, 671.0),    # DeepSeek-V3: 671 B main model (+14 B MTP, not loaded without speculation)
])
def test_parameter_count_matches_the_model_cards(cfg, billions):
    assert count_params(read_architecture(cfg)).total / 1e9 == pytest.approx(billions, rel=0.003)


def test_kv_arithmetic_equals_what_vllm_logged_for_smollm2():
    """vllm-cpu 0.32 serving SmolLM2-135M-Instruct with VLLM_CPU_KVCACHE_SPACE=1 --dtype float32 --max-model-len
    2048 logged, on this machine (2026-12-02): `CPU KV cache size: 23,296 tokens, Maximum concurrency for 2,048
    tokens per request: 11.38x`. The live check of the same figures is in tests/smoke/test_vllm_default.py."""
    a = read_architecture(C.SMOLLM2_135M)
    kv = kv_per_token(a, kv_dtype_bytes=4)
    assert kv.bytes_per_token == 30 * 2 * 3 * 64 * 4 == 46080
    cap = capacity(kv, 1 << 30, 2048, block=16)
    assert cap.tokens == 23_296 and f"{cap.concurrency:.2f}" == "11.38"


def test_mla_caches_one_latent_per_layer_whatever_the_tp():
    a = read_architecture(C.DEEPSEEK_V3)
    assert a.attention == "mla"
    for tp in (1, 4, 16):  # (512 + 64) × 2 B × 61 layers (deploy-facts.md §4c: 70,272 B/token)
        assert kv_per_token(a, tp=tp).bytes_per_token == 70_272


def test_kv_heads_split_by_tp_then_replicated():
    a = read_architecture(C.QWEN3_235B)  # 4 KV heads
    per_layer = {tp: kv_per_token(a, tp=tp).bytes_per_token // 94 for tp in (1, 2, 4, 8, 16)}
    assert per_layer == {1: 2048, 2: 1024, 4: 512, 8: 512, 16: 512}


def test_sliding_window_layers_are_bounded_by_their_window():
    a = read_architecture(C.GPT_OSS_120B)
    assert (a.full_layers, a.sliding_layers, a.sliding_window) == (18, 18, 128)
    kv = kv_per_token(a, kv_dtype_bytes=2)  # the config names no dtype (MXFP4 weights); the KV cache is bf16
    short = capacity(kv, 8 << 30, 4096, block=128, batched_tokens=2048)
    long = capacity(kv, 8 << 30, 131072, block=128, batched_tokens=2048)
    # Per request, in blocks of all 36 layers: full layers need ⌈len/128⌉ blocks, sliding ones
    # ⌈min(128 − 1 + 2048, len)/128⌉ + 1 = 18 whatever the length (vLLM SlidingWindowSpec.max_memory_usage_bytes).
    assert short.num_blocks == 910
    assert short.concurrency == pytest.approx(910 / ((32 + 18) / 2))
    assert long.concurrency == pytest.approx(910 / ((1024 + 18) / 2))


def test_what_cannot_be_sized_is_said_not_guessed():
    hybrid = dict(C.QWEN3_30B_A3B, model_type="qwen3_next", full_attention_interval=4)
    a = read_architecture(hybrid)
    assert a.linear_layers == 36 and "linear-attention" in a.cannot_size[0]
    assert kv_per_token(a).unknown
    odd = dict(C.DEEPSEEK_V3, model_type="somebody_mla")
    assert "not one vLLM sizes as MLA" in kv_per_token(read_architecture(odd)).unknown


def test_families_that_alternate_windows_without_layer_types_by_the_rule_their_config_class_derives():
    """Gemma-2 (every second layer full), Gemma-3 (every `sliding_window_pattern`-th, default 6) and Cohere2 (default
    4) list no `layer_types`: transformers derives them — full when (i + 1) % period == 0 — and vLLM sizes each
    sliding layer by its window. Gemma's LM head is the embedding when the config does not say."""
    gemma = {k: v for k, v in C.QWEN3_8B.items() if k not in ("use_sliding_window", "tie_word_embeddings")}
    gemma.update(model_type="gemma2", num_hidden_layers=42, sliding_window=4096)
    a = read_architecture(gemma)
    assert (a.full_layers, a.sliding_layers, a.sliding_window, a.tie_embeddings) == (21, 21, 4096, True)
    assert not kv_per_token(a).unknown
    g3 = dict(gemma, model_type="gemma3_text", num_hidden_layers=62)
    assert (read_architecture(g3).full_layers, read_architecture(g3).sliding_layers) == (10, 52)
    g3b = dict(g3, sliding_window_pattern=2)
    assert read_architecture(g3b).full_layers == 31
    assert read_architecture(dict(gemma, model_type="cohere2", num_hidden_layers=40)).full_layers == 10
    assert read_architecture(dict(gemma, tie_word_embeddings=False)).tie_embeddings is False
    assert read_architecture({k: v for k, v in C.QWEN3_8B.items() if k != "tie_word_embeddings"}).tie_embeddings \
        is False  # Qwen3's config class does not tie


def test_weight_formats_and_the_derived_context():
    a = read_architecture(C.QWEN3_32B)
    bf16, w8a8 = estimate(a, "bf16").total_bytes, estimate(a, "w8a8").total_bytes
    assert bf16 == pytest.approx(2 * 32.76e9, rel=0.01) and 0.5 < w8a8 / bf16 < 0.55
    assert derived_max_len(C.QWEN3_32B)[0] == 40960
    yarn = dict(C.QWEN3_32B, rope_scaling={"rope_type": "yarn", "factor": 4.0,
                                           "original_max_position_embeddings": 32768})
    assert derived_max_len(yarn)[0] == 131072


@pytest.mark.parametrize("key, value, field", [("num_hidden_layers", 10 ** 12, "num_hidden_layers"),
                                               ("num_attention_heads", -8, "num_attention_heads"),
                                               ("vocab_size", 10 ** 30, "vocab_size"),
                                               ("num_experts", 10 ** 9, "num_experts")])
def test_a_count_no_real_model_has_is_refused_before_anything_loops_over_it(key, value, field):
    """#40 item 8: `num_hidden_layers` 10**12 made plan and exec loop for ~39 h. Every count is bounded by what real
    checkpoints have; beyond it the model is not sized and the field is named."""
    import time

    from ascend_doctor.deploy.plan import admissible_tp

    cfg = {**C.QWEN3_32B, key: value}
    if key == "num_experts":
        cfg["num_experts_per_tok"] = 8
    t0 = time.monotonic()
    a = read_architecture(cfg)
    admissible_tp(a, 16)
    assert time.monotonic() - t0 < 1.0
    assert a.attention == "unknown" and any(f"config.json {field} = {value}" in str(w) for w in a.cannot_size)
    assert read_architecture(C.QWEN3_32B).cannot_size == []  # the real one is sized


def test_nested_language_model_configs_are_unwrapped_as_vllm_does():
    """#41: Qwen2.5-Omni nests its language model under thinker_config.text_config, DeepSeek-OCR under
    language_config, InternVL under llm_config; the sizes come from there, not from the wrapper (which has none)."""
    from ascend_doctor.deploy.arch import read_architecture, text_config

    lm = {"model_type": "qwen2", "num_hidden_layers": 28, "hidden_size": 3584, "num_attention_heads": 28,
          "num_key_value_heads": 4, "max_position_embeddings": 32768, "intermediate_size": 18944,
          "vocab_size": 152064, "torch_dtype": "bfloat16"}
    for wrapper in ({"model_type": "qwen2_5_omni", "thinker_config": {"model_type": "qwen2_5_omni_thinker",
                                                                       "text_config": lm}},
                    {"model_type": "deepseek_vl_v2", "language_config": lm},
                    {"model_type": "internvl_chat", "llm_config": lm}):
        assert lm.items() <= text_config(wrapper).items()  # what it gives wins over its class's defaults
        a = read_architecture(wrapper, 32768)
        assert (a.layers, a.kv_heads) == (28, 4), wrapper["model_type"]


def test_a_nested_config_takes_its_classs_defaults_for_what_it_leaves_out():
    """google/gemma-3-4b-it's text_config gives no heads (Gemma3TextConfig: 8 heads, 4 KV heads × 256) and Qwen2-Audio's
    no layers or heads (Qwen2Config: 32 × 32 heads, hidden 4096); a top-level config is read as written. Gemma 3's
    context is not scaled by its linear rope factor (vLLM: "already scaled by RoPE scaling")."""
    from ascend_doctor.deploy.arch import read_architecture, text_config

    gemma = C.config("google--gemma-3-4b-it")
    a = read_architecture(gemma, derived_max_len(text_config(gemma))[0])
    assert (a.heads, a.kv_heads, a.head_dim, a.vocab, a.layers, a.full_layers) == (8, 4, 256, 262208, 34, 5)
    assert a.max_len == 131072 and a.tie_embeddings
    audio = read_architecture(C.config("Qwen--Qwen2-Audio-7B-Instruct"))
    assert (audio.layers, audio.hidden, audio.heads, audio.kv_heads, audio.vocab) == (32, 4096, 32, 32, 156032)
    assert audio.audio and "the audio encoder not counted" in str(estimate(audio, "bf16").source)
    bare = {"model_type": "qwen2", "num_hidden_layers": 2, "hidden_size": 64, "vocab_size": 10}
    assert text_config(bare) is bare and read_architecture(bare).heads == 0


# Excerpts of public configs (ai-dynamo/aiconfigurator@095f58a, aic-core/src/aiconfigurator_core/model_configs): the
# keys that decide each model's KV layout, on a plain GQA body. Before, every one was sized as plain attention.
_GQA = dict(model_type="x", num_hidden_layers=4, hidden_size=1024, num_attention_heads=8, num_key_value_heads=2,
            head_dim=128, vocab_size=1000, torch_dtype="bfloat16")


@pytest.mark.parametrize("extra, says", [
    (dict(model_type="deepseek_v4", sliding_window=128, index_topk=512, compress_ratios=[0, 0, 4, 128]),
     "compressed attention (DeepSeek-V4: a sliding window, KV compressed 1:4, 1:128"),
    (dict(model_type="minimax_m3", sparse_attention_config={"use_sparse_attention": True, "sparse_index_dim": 128}),
     "block-sparse attention"),
    (dict(model_type="gemma4_text", global_head_dim=512, num_global_key_value_heads=2, attention_k_eq_v=True,
          sliding_window=1024, layer_types=["sliding_attention"] * 3 + ["full_attention"]),
     "global_head_dim, num_global_key_value_heads, attention_k_eq_v in config.json"),
    (dict(num_kv_shared_layers=2), "2 layer(s) reusing an earlier layer's KV"),
    (dict(model_type="nemotron_h", hybrid_override_pattern="M-M*"), "2 Mamba-2 layer(s)"),
    (dict(model_type="nemotron_h", layers_block_type=["mamba", "moe", "attention", "mamba"]), "2 Mamba-2 layer(s)"),
    (dict(linear_attn_config={"kda_layers": [1, 2]}), "Kimi Delta Attention"),
    (dict(hybrid_layer_pattern=[0, 1, 1, 1], swa_head_dim=192, swa_num_key_value_heads=8, sliding_window=128),
     "sliding-window layers with a KV shape of their own"),
    (dict(attn_type_list=[0, 0, 0, 1]), "lightning (linear) attention"),
    (dict(block_configs=[{"attention": {"no_op": True}}] * 4), "a shape per layer"),
    (dict(attention_chunk_size=8192), "chunked local attention"),
])
def test_kv_layouts_this_model_does_not_follow_are_refused_not_sized_as_attention(extra, says):
    a = read_architecture({**_GQA, **extra})
    assert a.attention == "unknown" and any(says in str(w) for w in a.cannot_size), a.cannot_size
    assert says in kv_per_token(a).unknown


@pytest.mark.parametrize("extra", [dict(attn_type_list=[1, 1, 1, 1]),  # MiniMax-M2.7: every layer full attention
                                   dict(num_kv_shared_layers=0, global_head_dim=128, num_global_key_value_heads=2),
                                   dict(compress_ratios=[0, 0, 0, 0]), dict(attention_k_eq_v=False)])
def test_the_same_keys_saying_plain_attention_are_sized(extra):
    a = read_architecture({**_GQA, **extra})
    assert a.cannot_size == [] and kv_per_token(a).bytes_per_token == 4 * 2 * 2 * 128 * 2


def test_a_wrapped_language_model_is_mla_by_its_own_model_type():
    """vLLM asks `hf_text_config.model_type` whether a model is MLA: Kimi-K2.5's `kimi_k25` wraps a `kimi_k2`
    (DeepSeek-V3-shaped) language model, so its KV is the latent — (512 + 64) × 2 B per layer."""
    wrapped = {"model_type": "kimi_k25", "architectures": ["KimiK25ForConditionalGeneration"],
               "text_config": dict(C.KIMI_K2, model_type="kimi_k2"), "vision_config": {"vt_hidden_size": 1152}}
    a = read_architecture(wrapped)
    assert a.attention == "mla" and a.cannot_size == []
    assert kv_per_token(a).bytes_per_token == 61 * 576 * 2


def test_an_indexer_on_every_layer_is_sized_a_shared_one_is_refused():
    """GLM-5.1: zai-org's config has no `indexer_types`, NVIDIA's NVFP4 copy lists 78 × "full" — the same cache
    (latent + rope + index key on every layer). GLM-5.2 shares some layers' indexer ("shared"): refused."""
    glm = dict(C.DEEPSEEK_V3, model_type="glm_moe_dsa", index_topk=2048, index_head_dim=128)
    plain = kv_per_token(read_architecture(glm)).bytes_per_token
    full = read_architecture(dict(glm, indexer_types=["full"] * 61))
    assert full.cannot_size == [] and kv_per_token(full).bytes_per_token == plain == 61 * (512 + 64 + 128) * 2
    shared = read_architecture(dict(glm, indexer_types=["full", "shared"] * 30 + ["full"]))
    assert "indexer_types" in kv_per_token(shared).unknown


@pytest.mark.parametrize("keys, named", [(dict(index_topk_freq=4, index_skip_topk_offset=3), "index_topk_freq"),
                                         (dict(index_topk_pattern="FFFSSS" * 10 + "F"), "index_topk_pattern")])
def test_an_index_cache_config_is_refused(keys, named):
    """vLLM's IndexCache (deepseek_v2.py, 0.26.0 on): with `index_topk_freq` 4 (offset 3) or an `index_topk_pattern`
    "S", only some layers build an indexer — a cache laid out per layer kind, as GLM-5.2's `indexer_types`."""
    glm = dict(C.DEEPSEEK_V3, model_type="glm_moe_dsa", index_topk=2048, index_head_dim=128)
    a = read_architecture(dict(glm, **keys))
    assert a.attention == "unknown" and named in kv_per_token(a).unknown
    assert read_architecture(dict(glm, index_topk_freq=1, index_topk_pattern="F" * 61)).cannot_size == []


def test_kimi_k25_moonvit_tower_is_counted_whole_on_every_rank():
    """MoonViT after vLLM 0.34.0 kimi_k25_vit.py, from the catalogue's Kimi-K2.5 config (h 1152, 27 blocks, MLP 4304,
    patch 14, 64 × 64 positions, 2 × 2 merge into the 7168-wide language model): patch 678,528 + positions 4,718,592
    + 27 × 15,239,504 + final norm 2,304 + projector 54,277,888 = 471,143,920 (Moonshot's card: a 400M MoonViT)."""
    from ascend_doctor.deploy.catalogue import catalogue_files, find_model

    files = catalogue_files(find_model("moonshotai/Kimi-K2.5", shipped().catalogue), "bf16")
    assert files.arch.vision_params == 471_143_920
    assert files.weights.vision_bytes == 471_143_920 * 2 and "of which the vision encoder 0.47 B" in files.weights.source


@pytest.mark.parametrize("vision, params, rel", [
    # openai/clip-vit-large-patch14-336's vision tower: 303.5 M (transformers' CLIPVisionModel, 24 × 1024, 577 positions)
    (dict(model_type="clip_vision_model", hidden_size=1024, intermediate_size=4096, num_hidden_layers=24,
          patch_size=14, image_size=336), 303.5e6, 0.001),
    # InternVL2.5's InternViT-6B-448px-V2_5 (model card: 5.5 B)
    (dict(model_type="intern_vit_6b", hidden_size=3200, intermediate_size=12800, num_hidden_layers=45, patch_size=14,
          image_size=448), 5.5e9, 0.01),
])
def test_clip_style_towers_are_counted_without_their_projector(vision, params, rel):
    from ascend_doctor.deploy.weights import estimate

    cfg = {**C.QWEN3_8B, "vision_config": vision}
    a = read_architecture(cfg)
    assert a.vision_params == pytest.approx(params, rel=rel) and not a.vision_projector_counted
    assert "its projector into the language model not counted" in estimate(a, "bf16").source


@pytest.mark.parametrize("release, per_layer", [("0.11.0rc1", 2304), ("0.13.0", 2304), ("0.14.0rc1", 2304),
                                                ("0.15.0rc1", 1408), ("0.23.0", 1408), ("0.30.0rc2", 1408)])
def test_a_dsa_layer_is_cached_as_its_release_lays_it_out(release, per_layer):
    """vllm-ascend 0.11.0rc1 … 0.14.0rc1 declare a DeepSeek-V3.2 layer a FullAttentionSpec of the 576-wide latent
    (K and V: 2 × 576 × 2 B, the indexer key inside); PR #6610 (0.15.0rc1 on) caches the latent and the 128-wide
    indexer key: (576 + 128) × 2 B. The shipped deploy/dsa-pages rows."""
    a = read_architecture(dict(C.DEEPSEEK_V3, model_type="deepseek_v32", index_topk=2048, index_head_dim=128))
    kv = kv_per_token(a, tp=8, release=release, dsa_rules=shipped().dsa_pages)
    assert kv.bytes_per_token == 61 * per_layer, kv.unknown
    assert "predates DeepSeek sparse attention" in kv_per_token(a, release="0.10.2rc1",
                                                                  dsa_rules=shipped().dsa_pages).unknown


def test_mla_down_projections_sit_whole_on_every_rank():
    """vLLM builds MLA's q_a / kv_a projections unsharded (deepseek_v2.py: ReplicatedLinear, `disable_tp=True`) and
    the DSA indexer "no tensor parallel, just replicated": at TP8 each rank holds them whole."""
    from ascend_doctor.deploy.weights import estimate, per_rank

    a = read_architecture(C.DEEPSEEK_V3)
    ws = estimate(a, "bf16")
    assert ws.replicated_bytes == 61 * (7168 * 1536 + 1536 + 7168 * 576 + 512) * 2
    rest = ws.total_bytes - ws.expert_bytes - ws.vocab_bytes - ws.replicated_bytes
    assert per_rank(ws, a, 8) == int(rest / 8 + ws.expert_bytes / 8 + ws.replicated_bytes + ws.vocab_bytes / 8)
    v32 = read_architecture(dict(C.DEEPSEEK_V3, model_type="deepseek_v32", index_topk=2048, index_head_dim=128,
                                 index_n_heads=64))
    indexer = 1536 * 64 * 128 + 7168 * 128 + 2 * 128 + 7168 * 64
    assert estimate(v32, "bf16").replicated_bytes == ws.replicated_bytes + 61 * indexer * 2


def test_a_w8a8_checkpoint_keeps_kv_b_proj_and_the_indexer_in_bf16_where_its_recipe_does():
    """msModelSlim's DeepSeek W8A8 recipes quantize MLA's projections but leave kv_b_proj in bf16, and the
    DeepSeek-V3.2 one the DSA indexer too (lab_practice/deepseek_v3_2/deepseek_w8a8_quarot.yaml): one more byte per
    parameter of each, kv_b split by TP, the indexer whole on every rank; read from a description's FLOAT tags."""
    from ascend_doctor.deploy.weights import estimate, float_layers_of, per_rank

    v32 = read_architecture(dict(C.DEEPSEEK_V3, model_type="deepseek_v32", index_topk=2048, index_head_dim=128,
                                 index_n_heads=64))
    plain, kept = estimate(v32, "w8a8"), estimate(v32, "w8a8", ("kv_b_proj", "indexer"))
    kv_b = 61 * 512 * 128 * (128 + 128)
    indexer = 61 * (1536 * 64 * 128 + 7168 * 128 + 7168 * 64)
    assert kept.total_bytes - plain.total_bytes == kv_b + indexer
    assert kept.replicated_bytes - plain.replicated_bytes == indexer
    assert per_rank(kept, v32, 8) - per_rank(plain, v32, 8) == pytest.approx(kv_b / 8 + indexer, abs=2)
    assert "kept in floating point: kv_b_proj, indexer" in kept.source
    assert estimate(v32, "bf16", ("kv_b_proj",)).total_bytes == estimate(v32, "bf16").total_bytes  # already float
    desc = {"model.layers.0.self_attn.kv_b_proj.weight": "FLOAT", "model.layers.0.self_attn.q_b_proj.weight": "W8A8",
            "model.layers.0.self_attn.indexer.wq_b.weight": "FLOAT", "lm_head.weight": "FLOAT"}
    assert float_layers_of(desc) == ("kv_b_proj", "indexer")
    assert float_layers_of({"model.layers.0.self_attn.kv_b_proj.weight": "W8A8"}) == ()


def test_an_mtp_layer_brings_its_input_projection_whole_or_sharded_as_vllm_builds_it():
    """DeepSeek's MTP layer projects embedding ‖ hidden with `nn.Linear` (vllm deepseek_mtp.py `eh_proj`): whole on
    every rank and in the model's dtype even in a W8A8 checkpoint (vLLM's quantization does not reach nn.Linear);
    Qwen3-Next's `fc` is a ColumnParallelLinear with the checkpoint's quantization (qwen3_next_mtp.py): split by TP."""
    from ascend_doctor.deploy.arch import with_mtp
    from ascend_doctor.deploy.weights import estimate, per_rank

    a = read_architecture(C.DEEPSEEK_V3)
    drafted = with_mtp(a, 1)
    assert (drafted.layers, drafted.moe_layers, drafted.mtp_run) == (62, 59, 1)
    eh_proj = 2 * 7168 * 7168
    plain = estimate(with_mtp(a, 1).model_copy(update={"mtp_run": 0}), "w8a8")
    ws = estimate(drafted, "w8a8")
    assert ws.total_bytes - plain.total_bytes == ws.replicated_bytes - plain.replicated_bytes == eh_proj * 2
    assert per_rank(ws, drafted, 8) - per_rank(plain, drafted, 8) == eh_proj * 2

    nxt = with_mtp(read_architecture(C.QWEN3_NEXT), 1)
    fc = 2 * 2048 * 2048
    base = estimate(nxt.model_copy(update={"mtp_run": 0}), "w8a8")
    split = estimate(nxt, "w8a8")
    assert split.total_bytes - base.total_bytes == fc and split.replicated_bytes == base.replicated_bytes
    assert per_rank(split, nxt, 4) - per_rank(base, nxt, 4) == fc // 4


@pytest.mark.parametrize("vision", [
    {"vt_hidden_size": 1152, "vt_num_hidden_layers": 27, "vt_intermediate_size": 4304, "merge_kernel_size": [2, 2],
     "patch_size": 14, "init_pos_emb_height": 10 ** 9, "init_pos_emb_width": 64},
    {"vt_hidden_size": 1152, "vt_num_hidden_layers": 27, "vt_intermediate_size": 4304, "merge_kernel_size": ["2", 2]},
    {"model_type": "clip_vision_model", "hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24,
     "patch_size": 14, "image_size": 336, "num_channels": 10 ** 6},
    {"model_type": "siglip_vision_model", "hidden_size": True, "intermediate_size": 4096, "num_hidden_layers": 24,
     "patch_size": 14, "image_size": 336},
])
def test_a_hand_edited_vision_config_is_not_counted_rather_than_counted_wrong(vision):
    from ascend_doctor.deploy.weights import estimate

    a = read_architecture({**C.QWEN3_8B, "vision_config": vision})
    assert a.vision_params == 0 and "the vision encoder not counted" in estimate(a, "bf16").source


def test_a_moe_without_expert_parallelism_holds_the_routed_rows_of_the_whole_batch():
    """vllm-ascend's all-gather dispatcher expands every token to top-k rows of hidden width and the experts return
    as many (two [tokens × top-k, hidden] tensors at the profile run's peak); with EP the rows are split, not counted;
    a dense model has none."""
    from ascend_doctor.deploy.budget import Layout, moe_routing

    nxt = read_architecture(C.QWEN3_NEXT, 32768)
    term = moe_routing(nxt, Layout(tp=4), 4096, 2)
    assert term.bytes == 2 * 4096 * 10 * 2048 * 2  # #6250's profile batch: 0.31 GiB
    assert "top-10" in str(term.inputs) and "hidden 2048" in str(term.inputs)
    assert moe_routing(nxt, Layout(tp=2, dp=2), 4096, 2).bytes == 2 * term.bytes  # gathered across DP first
    assert moe_routing(nxt, Layout(tp=4, ep=True), 4096, 2) is None
    assert moe_routing(nxt, Layout(tp=1, ep=True), 4096, 2) is not None  # an EP group of one rank is the same path
    assert moe_routing(read_architecture(C.QWEN3_8B, 32768), Layout(tp=1), 4096, 2) is None


def test_hccl_buffsize_sizes_every_group_only_before_vllm_ascend_gave_each_group_its_own():
    """From 0.11.0rc1 vllm-ascend passes hccl_buffer_size 200 MB for each group it creates and only the MC2 group
    follows HCCL_BUFFSIZE; before, every group did. With expert parallelism the TP group stays at HCCL_BUFFSIZE (what
    the DeepSeek-V3.2 logs fit), said in the budget's words as it is."""
    from ascend_doctor.deploy.budget import Layout
    from ascend_doctor.deploy.budget import hccl as hccl_term
    from ascend_doctor.deploy.hccl import group_mb

    def hccl(layout, mb, release):  # the term as plan and SERVE305 build it: the release's row of deploy/hccl-groups
        return hccl_term(layout, mb, group_mb(release, shipped().hccl_groups))

    mib = 2**20
    tp8 = Layout(tp=8)
    assert hccl(tp8, 1024, "0.13.0").bytes == 2 * 200 * mib
    assert "HCCL_BUFFSIZE sizes only the MC2 group" in str(hccl(tp8, 1024, "0.13.0").inputs)
    assert hccl(tp8, 1024, "0.10.2rc1").bytes == 2 * 1024 * mib
    assert hccl(tp8, 1024, None).bytes == 2 * 200 * mib  # a current release assumed
    assert hccl(tp8, 200, "0.13.0").inputs == "TP 2 × 200 MB (HCCL_BUFFSIZE=200)"
    ep = hccl(Layout(tp=8, dp=2, ep=True), 1024, "0.15.0rc1")
    assert ep.bytes == (2 * 1024 + 2 * 1024 + 2 * 50) * mib and "only the MC2" not in str(ep.inputs)
    assert hccl(Layout(tp=1), 1024, "0.13.0") is None
    assert hccl_term(tp8, 1024, None).bytes == 2 * 1024 * mib  # no row: every group takes HCCL_BUFFSIZE


@pytest.mark.parametrize("name, total, vision", [
    ("Qwen--Qwen2-VL-7B-Instruct", 8.29e9, 675_758_080),  # Qwen2-VL: blocks embed_dim wide, MLP mlp_ratio × that
    ("Qwen--Qwen2.5-VL-7B-Instruct", 8.29e9, 676_522_880),
    ("mistralai--Mistral-Small-3.1-24B-Instruct-2503", 24.0e9, 403_305_472),  # the Pixtral tower, projector aside
])
def test_qwen_vl_towers_are_counted_to_the_published_size(name, total, vision):
    """The model cards' sizes (8.29 B, 8.29 B, 24 B); Qwen2-VL's vision_config gives `embed_dim` and `mlp_ratio` and
    names the merger's output `hidden_size`, Mistral3's is a Pixtral tower (both had counted 0 before)."""
    from ascend_doctor.deploy.weights import estimate

    cfg = C.config(name)
    a = read_architecture(cfg)
    assert a.vision_params == vision
    assert estimate(a, "bf16").total_bytes / 2 == pytest.approx(total, rel=0.002)


def test_molmo_is_sized_as_vllm_builds_it_and_mllama_is_refused_with_its_reason():
    """Molmo's intermediate_size is gate + up together (vLLM's molmo.py halves it): 7.62 B for its language model,
    not 13.3 B, and its undescribed vision tower is said not counted. Mllama's cross-attention layers cache the
    image, which this model does not size: refused with the layers named, not sized as 40 text layers."""
    from ascend_doctor.deploy.weights import estimate

    molmo = read_architecture(C.config("allenai--Molmo-7B-D-0924"))
    assert molmo.intermediate == 18944
    assert estimate(molmo, "bf16").total_bytes / 2 == pytest.approx(7.62e9, rel=0.002)
    assert "the vision encoder not counted" in str(estimate(molmo, "bf16").source)
    mllama = {"model_type": "mllama", "architectures": ["MllamaForConditionalGeneration"],
              "text_config": {**_GQA, "model_type": "mllama_text_model", "cross_attention_layers": [1, 3]}}
    a = read_architecture(mllama)
    assert a.attention == "unknown" and "2 cross-attention layer(s)" in str(a.cannot_size[0])
