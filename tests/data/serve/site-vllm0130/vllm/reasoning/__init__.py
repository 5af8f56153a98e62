from vllm.reasoning.abs_reasoning_parsers import ReasoningParser, ReasoningParserManager

_REASONING_PARSERS_TO_REGISTER = {
    "deepseek_r1": ("deepseek_r1_reasoning_parser", "DeepseekR1ReasoningParser"),
    "deepseek_v3": ("deepseek_v3_reasoning_parser", "DeepseekV3ReasoningParser"),
    "ernie45": ("ernie45_reasoning_parser", "Ernie45ReasoningParser"),
    "glm45": ("glm45_reasoning_parser", "Glm45ReasoningParser"),
    "granite": ("granite_reasoning_parser", "GraniteReasoningParser"),
    "holo2": ("holo2_reasoning_parser", "Holo2ReasoningParser"),
    "hunyuan_a13b": ("hunyuan_a13b_reasoning_parser", "HunyuanA13BReasoningParser"),
    "kimi_k2": ("kimi_k2_reasoning_parser", "KimiK2ReasoningParser"),
    "minimax_m2": ("minimax_m2_reasoning_parser", "MinimaxM2ReasoningParser"),
    "minimax_m2_append_think": ("minimax_m2_append_think_reasoning_parser", "MinimaxM2AppendThinkReasoningParser"),
    "mistral": ("mistral_reasoning_parser", "MistralReasoningParser"),
    "olmo3": ("olmo3_reasoning_parser", "Olmo3ReasoningParser"),
    "openai_gptoss": ("openai_gptoss_reasoning_parser", "OpenaiGptossReasoningParser"),
    "qwen3": ("qwen3_reasoning_parser", "Qwen3ReasoningParser"),
    "seed_oss": ("seed_oss_reasoning_parser", "SeedOssReasoningParser"),
    "step3": ("step3_reasoning_parser", "Step3ReasoningParser"),
}
