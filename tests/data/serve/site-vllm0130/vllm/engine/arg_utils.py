# Fixture shaped like vllm/engine/arg_utils.py: EngineArgs fields become `--field-name` options.
import argparse
from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class EngineArgs:
    model: str = "Qwen/Qwen3-0.6B"
    served_model_name: Optional[str] = None
    tokenizer: Optional[str] = None
    tokenizer_mode: str = "auto"
    trust_remote_code: bool = False
    seed: int = 0
    max_model_len: Optional[int] = None
    distributed_executor_backend: Optional[str] = None
    pipeline_parallel_size: int = 1
    tensor_parallel_size: int = 1
    data_parallel_size: int = 1
    data_parallel_size_local: Optional[int] = None
    data_parallel_start_rank: Optional[int] = None
    data_parallel_address: Optional[str] = None
    data_parallel_rpc_port: Optional[int] = None
    nnodes: int = 1
    enable_expert_parallel: bool = False
    gpu_memory_utilization: float = 0.9
    max_num_batched_tokens: Optional[int] = None
    max_num_seqs: Optional[int] = None
    enable_prefix_caching: Optional[bool] = None
    quantization: Optional[str] = None
    enforce_eager: bool = False
    hf_overrides: Optional[dict] = None
    model_impl: str = "auto"
    reasoning_parser: str = ""
    compilation_config: Any = None
    additional_config: dict = None

    @staticmethod
    def add_cli_args(parser):
        parallel_group = parser.add_argument_group("ParallelConfig")
        parallel_group.add_argument("--tensor-parallel-size", "-tp", type=int)
        parallel_group.add_argument("--pipeline-parallel-size", "-pp", type=int)
        parallel_group.add_argument("--data-parallel-size", "-dp", type=int)
        model_group = parser.add_argument_group("ModelConfig")
        model_group.add_argument("--quantization", "-q")
        parser.add_argument("--disable-log-stats", action="store_true")
        return parser


@dataclass
class AsyncEngineArgs(EngineArgs):
    enable_log_requests: bool = False
