import os
from typing import Any, Callable

environment_variables: dict[str, Callable[[], Any]] = {
    "VLLM_HOST_IP": lambda: os.getenv("VLLM_HOST_IP"),
    "VLLM_PORT": lambda: os.getenv("VLLM_PORT"),
    "VLLM_USE_MODELSCOPE": lambda: os.getenv("VLLM_USE_MODELSCOPE"),
    "VLLM_WORKER_MULTIPROC_METHOD": lambda: os.getenv("VLLM_WORKER_MULTIPROC_METHOD"),
    "VLLM_LOGGING_LEVEL": lambda: os.getenv("VLLM_LOGGING_LEVEL"),
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN": lambda: os.getenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN"),
    "VLLM_TARGET_DEVICE": lambda: os.getenv("VLLM_TARGET_DEVICE"),
    "VLLM_API_KEY": lambda: os.getenv("VLLM_API_KEY"),
    "VLLM_PLUGINS": lambda: os.getenv("VLLM_PLUGINS"),
    "MAX_JOBS": lambda: os.getenv("MAX_JOBS"),
}
