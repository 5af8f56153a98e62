import os
from typing import Any, Callable, Dict

env_variables: Dict[str, Callable[[], Any]] = {
    "MAX_JOBS": lambda: os.getenv("MAX_JOBS", None),
    "ASCEND_HOME_PATH": lambda: os.getenv("ASCEND_HOME_PATH", None),
    "VLLM_VERSION": lambda: os.getenv("VLLM_VERSION", None),
    "VLLM_ASCEND_ENABLE_NZ": lambda: int(os.getenv("VLLM_ASCEND_ENABLE_NZ", 1)),
    "VLLM_ASCEND_ENABLE_MLAPO": lambda: bool(int(os.getenv("VLLM_ASCEND_ENABLE_MLAPO", "1"))),
    "VLLM_ASCEND_ENABLE_FLASHCOMM1": lambda: bool(int(os.getenv("VLLM_ASCEND_ENABLE_FLASHCOMM1", "0"))),
}
