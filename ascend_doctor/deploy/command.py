"""The `vllm serve` command line and environment of a plan, every option with the reason it was chosen."""

from __future__ import annotations

import shlex
from typing import Optional

from pydantic import Field

from ascend_doctor.deploy.arch import Architecture
from ascend_doctor.deploy.plan import Candidate, Want
from ascend_doctor.model import Model


class ServePlan(Model):
    argv: list[str]
    env: dict[str, str] = Field(default_factory=dict)
    why: list[str] = Field(default_factory=list, description="one line per choice: option and reason")

    def shell(self) -> str:
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        return (env + " " if env else "") + " ".join(shlex.quote(w) for w in self.argv)


def serve_plan(model: str, a: Architecture, chosen: Candidate, want: Want, chip_family: str,
               weight_format: Optional[str], tool_parser: Optional[str], reasoning_parser: Optional[str]) -> ServePlan:
    lay = chosen.layout
    argv = ["vllm", "serve", model, "--tensor-parallel-size", str(lay.tp)]
    why = [f"--tensor-parallel-size {lay.tp}: the fewest ranks whose budget holds the weights and the KV cache"]
    if lay.pp > 1:
        argv += ["--pipeline-parallel-size", str(lay.pp)]
        why.append(f"--pipeline-parallel-size {lay.pp}: one stage per node (TP stays within a node)")
    if lay.dp > 1:
        argv += ["--data-parallel-size", str(lay.dp)]
        why.append(f"--data-parallel-size {lay.dp}: attention replicated over the remaining ranks")
    if lay.ep:
        argv.append("--enable-expert-parallel")
        why.append(f"--enable-expert-parallel: {a.experts} experts sharded over {lay.tp * lay.dp} ranks")
    argv += ["--max-model-len", str(chosen.max_len), "--max-num-batched-tokens", str(want.batched_tokens),
             "--gpu-memory-utilization", f"{want.gmu:g}"]
    why.append(f"--max-model-len {chosen.max_len}: fits {want.concurrency} request(s) in the KV cache")
    env: dict[str, str] = {"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True"}
    why.append("PYTORCH_NPU_ALLOC_CONF=expandable_segments:True: against fragmentation (vllm-ascend FAQ)")
    if chip_family == "310P":
        argv += ["--dtype", "float16"]
        why.append("--dtype float16: the 310P runs float16 only")
    if weight_format in ("w8a8", "w4a8", "w8a16", "w4a16") and chip_family != "310P":
        argv += ["--quantization", "ascend"]
        why.append(f"--quantization ascend: an msModelSlim {weight_format.upper()} checkpoint")
    if lay.ep or lay.dp > 1:
        env["HCCL_BUFFSIZE"] = str(want.hccl_buffsize_mb)
        why.append(f"HCCL_BUFFSIZE={want.hccl_buffsize_mb}: the MB per communicator this budget counts (2 × it "
                   "per group)")
    if tool_parser:
        argv += ["--enable-auto-tool-choice", "--tool-call-parser", tool_parser]
        why.append(f"--tool-call-parser {tool_parser}: the parser of model_type {a.model_type}'s tool-call markup "
                   "(matrices/model-families.toml)")
    if not tool_parser:
        why.append(f"no --tool-call-parser: matrices/model-families.toml has no family for model_type "
                   f"{a.model_type!r}; pick the parser of the model's chat template")
    if reasoning_parser:
        argv += ["--reasoning-parser", reasoning_parser]
        why.append(f"--reasoning-parser {reasoning_parser}: the family's reasoning markup")
    return ServePlan(argv=argv, env=env, why=why)
