class LazyConfigDict(dict):
    pass


_CONFIG_REGISTRY: dict[str, type] = LazyConfigDict(
    chatglm="ChatGLMConfig",
    deepseek_v32="DeepseekV3Config",
    kimi_vl="KimiVLConfig",
    deepseek_v4="DeepseekV4Config",
)
