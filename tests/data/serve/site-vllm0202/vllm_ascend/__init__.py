def register():
    return "vllm_ascend.platform.NPUPlatform"


def register_model():
    from vllm import ModelRegistry

    ModelRegistry.register_model("PanguProMoEForCausalLM", "vllm_ascend.models.pangu_moe:PanguProMoEForCausalLM")
