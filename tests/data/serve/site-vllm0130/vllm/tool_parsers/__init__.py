# Fixture shaped like vllm/tool_parsers/__init__.py (vLLM >= 0.13.0): a lazy registry dict.
from vllm.tool_parsers.abstract_tool_parser import (
    ToolParser,
    ToolParserManager,
)

__all__ = ["ToolParser", "ToolParserManager"]

_TOOL_PARSERS_TO_REGISTER = {
    "deepseek_v3": (
        "deepseek_v3_tool_parser",
        "DeepseekV3ToolParser",
    ),
    "deepseek_v31": (
        "deepseek_v31_tool_parser",
        "DeepseekV31ToolParser",
    ),
    "deepseek_v32": (
        "deepseek_v32_tool_parser",
        "DeepseekV32ToolParser",
    ),
    "ernie45": (
        "ernie45_tool_parser",
        "Ernie45ToolParser",
    ),
    "gigachat3": (
        "gigachat3_tool_parser",
        "Gigachat3ToolParser",
    ),
    "glm45": (
        "glm45_tool_parser",
        "Glm45ToolParser",
    ),
    "granite": (
        "granite_tool_parser",
        "GraniteToolParser",
    ),
    "granite-20b-fc": (
        "granite_20b_fc_tool_parser",
        "Granite-20B-FcToolParser",
    ),
    "hermes": (
        "hermes_tool_parser",
        "HermesToolParser",
    ),
    "hunyuan_a13b": (
        "hunyuan_a13b_tool_parser",
        "HunyuanA13BToolParser",
    ),
    "internlm": (
        "internlm_tool_parser",
        "InternlmToolParser",
    ),
    "jamba": (
        "jamba_tool_parser",
        "JambaToolParser",
    ),
    "kimi_k2": (
        "kimi_k2_tool_parser",
        "KimiK2ToolParser",
    ),
    "llama3_json": (
        "llama3_json_tool_parser",
        "Llama3JsonToolParser",
    ),
    "llama4_json": (
        "llama4_json_tool_parser",
        "Llama4JsonToolParser",
    ),
    "llama4_pythonic": (
        "llama4_pythonic_tool_parser",
        "Llama4PythonicToolParser",
    ),
    "longcat": (
        "longcat_tool_parser",
        "LongcatToolParser",
    ),
    "minimax": (
        "minimax_tool_parser",
        "MinimaxToolParser",
    ),
    "minimax_m2": (
        "minimax_m2_tool_parser",
        "MinimaxM2ToolParser",
    ),
    "mistral": (
        "mistral_tool_parser",
        "MistralToolParser",
    ),
    "olmo3": (
        "olmo3_tool_parser",
        "Olmo3ToolParser",
    ),
    "openai": (
        "openai_tool_parser",
        "OpenaiToolParser",
    ),
    "phi4_mini_json": (
        "phi4_mini_json_tool_parser",
        "Phi4MiniJsonToolParser",
    ),
    "pythonic": (
        "pythonic_tool_parser",
        "PythonicToolParser",
    ),
    "qwen3_coder": (
        "qwen3_coder_tool_parser",
        "Qwen3CoderToolParser",
    ),
    "qwen3_xml": (
        "qwen3_xml_tool_parser",
        "Qwen3XmlToolParser",
    ),
    "seed_oss": (
        "seed_oss_tool_parser",
        "SeedOssToolParser",
    ),
    "step3": (
        "step3_tool_parser",
        "Step3ToolParser",
    ),
    "xlam": (
        "xlam_tool_parser",
        "XlamToolParser",
    ),
}


def register_lazy_tool_parsers():
    for name, (file_name, class_name) in _TOOL_PARSERS_TO_REGISTER.items():
        module_path = f"vllm.tool_parsers.{file_name}"
        ToolParserManager.register_lazy_module(name, module_path, class_name)


register_lazy_tool_parsers()
