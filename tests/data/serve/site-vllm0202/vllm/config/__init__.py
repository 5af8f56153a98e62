from vllm.config.model import ModelConfig
