"""The isolated import probe: `import torch, torch_npu` in a child of the serving interpreter, with a timeout.

The doctor never imports torch or torch_npu itself: the import takes seconds and, when CANN and the driver disagree,
it segfaults. In a child process a crash is just a fact: the signal, the last lines of stderr, or the ImportError's
message, which the TORCH checks map to a likely cause.
"""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.probes import probe
from ascend_doctor.probes.childscript import run_child
from ascend_doctor.probes.serving import serving_executable

IMPORT_TIMEOUT = 90.0  # torch_npu's first import on a cold page cache takes 10-30 s on real Atlas hosts

# Runs in the serving interpreter. Prints one JSON line; faulthandler writes a Python traceback on SIGSEGV/SIGABRT.
IMPORT_SCRIPT = r"""
# ascend-doctor-script: import-probe
import sys
sys.path[:] = [p for p in sys.path if p not in ("", ".")]
import faulthandler, json, time
faulthandler.enable()
out = {}
t0 = time.time()
def stage(name):
    # One line per step, flushed: if the next step segfaults, the parent still knows how far it got.
    out["stage"] = name
    print("ASCEND_DOCTOR_STAGE " + name, flush=True)
try:
    stage("torch")
    import torch
    out["torch"] = torch.__version__
    stage("torch_npu")
    import torch_npu
    out["torch_npu"] = getattr(torch_npu, "__version__", "?")
    stage("device")
    out["npu_available"] = bool(torch.npu.is_available())
    out["device_count"] = int(torch.npu.device_count())
    stage("done")
except BaseException as exc:
    out["error_type"] = type(exc).__name__
    out["error"] = str(exc)[:4000]
out["seconds"] = round(time.time() - t0, 3)
print("ASCEND_DOCTOR_IMPORT " + json.dumps(out), flush=True)
"""


class ImportProbeFact(Model):
    ran: bool = Field(description="False when skipped (torch not installed, or --no-import-probe)")
    skipped_reason: str = ""
    python: str = ""
    stage: Optional[str] = Field(None, description="torch | torch_npu | device | done: how far the import got")
    torch: Optional[str] = None
    torch_npu: Optional[str] = None
    npu_available: Optional[bool] = None
    device_count: Optional[int] = None
    error_type: Optional[str] = None
    error: Optional[str] = None
    returncode: Optional[int] = None
    signal: Optional[str] = None
    timed_out: bool = False
    stderr_tail: str = ""
    seconds: Optional[float] = None
    limit_s: Optional[float] = Field(None, description="The child's time limit (--import-timeout, default 90 s)")
    default_limit_s: float = Field(IMPORT_TIMEOUT, description="The limit without --import-timeout")


def import_timeout(options) -> float:
    """The child's own limit: --import-timeout, else IMPORT_TIMEOUT (may be lower than --probe-timeout too)."""
    return options.import_timeout or IMPORT_TIMEOUT


@probe("import_probe", reads=("python", "serving_python"),
       min_timeout=lambda store: import_timeout(store.options) + 5)
def import_probe(host, ctx) -> ImportProbeFact:
    """`import torch, torch_npu` in a child of the serving python, bounded in time."""
    if not ctx.options.import_probe:
        return ImportProbeFact(ran=False, skipped_reason="disabled with --no-import-probe")
    py = ctx.fact("python")
    exe = serving_executable(ctx)
    if py.dist("torch") is None or py.dist("torch-npu") is None:
        missing = [n for n in ("torch", "torch-npu") if py.dist(n) is None]
        return ImportProbeFact(ran=False, python=exe, skipped_reason=f"not installed: {', '.join(missing)}")
    run = run_child(host, exe, IMPORT_SCRIPT, timeout=import_timeout(ctx.options), marker="ASCEND_DOCTOR_IMPORT",
                    fact="import_probe")
    fact = ImportProbeFact(ran=True, python=exe, returncode=run.returncode, timed_out=run.timed_out,
                           stderr_tail=run.stderr_tail, signal=run.signal, stage=run.stage,
                           limit_s=import_timeout(ctx.options))
    for k, v in run.data.items():
        if k in ImportProbeFact.model_fields:
            setattr(fact, k, v)
    return fact
