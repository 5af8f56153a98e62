from collections import OrderedDict

CONFIG_MAPPING_NAMES = OrderedDict[str, str](
    [
        # Add configs here
        ("bert", "BertConfig"),
        ("deepseek_v2", "DeepseekV2Config"),
        ("deepseek_v3", "DeepseekV3Config"),
        ("kimi_k2", "KimiK2Config"),
        ("glm4_moe", "Glm4MoeConfig"),
        ("llama", "LlamaConfig"),
        ("qwen2", "Qwen2Config"),
        ("qwen2_moe", "Qwen2MoeConfig"),
        ("qwen3", "Qwen3Config"),
        ("qwen3_moe", "Qwen3MoeConfig"),
    ]
)

MODEL_NAMES_MAPPING = OrderedDict[str, str](
    [
        ("bert", "BERT"),
    ]
)
