"""Run options: what the CLI flags and the config file's [options] table can set."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.report import Severity


class RunOptions(Model, extra="forbid"):
    fail_on: Severity = Severity.ERROR
    fail_on_unknown: bool = Field(False, description="Exit 1 when a check of severity error/critical could not run")
    select: list[str] = Field(default_factory=list)
    ignore: list[str] = Field(default_factory=list)
    probe_timeout: float = Field(10.0, gt=0, le=7 * 24 * 3600, allow_inf_nan=False,
                                 description="Seconds each probe may take")
    python: Optional[str] = Field(None, description="Interpreter of the serving environment (default: found — "
                                                    "see probes/serving.py)")
    model_dir: Optional[str] = Field(None, description="Where the model weights live (disk-space check)")
    matrix: list[str] = Field(default_factory=list, description="Files layered over the shipped tables (each names "
                                                                "its table with `table = …`)")
    checks_dirs: list[str] = Field(default_factory=list)
    policy: Optional[str] = Field(None, description="Host thresholds layered over the shipped host policy")
    import_timeout: Optional[float] = Field(None, gt=0, le=7 * 24 * 3600, allow_inf_nan=False,
                                            description="Seconds the isolated `import torch, torch_npu` and vLLM "
                                                        "platform probes may take (default 90 and 120: a cold import "
                                                        "of torch_npu takes 10-30 s)")
    compute_ranks: Optional[int] = Field(None, ge=1, le=128, description="Ranks of the compute smoke (default: "
                                                                        "every NPU this server uses; 8 on the CPU "
                                                                        "path)")
    compute_timeout: Optional[float] = Field(None, gt=0, le=3600, allow_inf_nan=False,
                                             description="Seconds the whole compute smoke may take (default: "
                                                         "the `compute/compute-smoke` table, 180 on NPUs, 60 on "
                                                         "the CPU path)")
    redact_hostname: bool = False
    import_probe: bool = Field(True, description="Run `import torch, torch_npu` in a child of the serving python")
    serve_argv: list[str] = Field(default_factory=list, description="The `vllm serve …` command line `exec` and "
                                                                    "`collect --` judge (the `serve_cmd` fact)")
    lang: Optional[Literal["en", "zh"]] = Field(None, description="Language of the console and markdown outputs "
                                                                "(`[options] lang` of ascend-doctor.toml)")
