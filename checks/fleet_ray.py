"""FLEET107: Ray sees the NPUs. vLLM's Ray executor (`--distributed-executor-backend ray`, multi-node) places one
worker per rank on a Ray `NPU` resource; a node whose raylet did not advertise its NPUs gets no worker, and the serve
fails with `Current node has no NPU available` or waits on a placement group forever (vllm-ascend#3114, #8306;
ray#55137, #53044). Ray detects Ascend NPUs itself (ray PR #41256, resource name `NPU`) only when the raylet's
environment can load CANN; otherwise they must be declared with `ray start --resources`."""

from __future__ import annotations

from typing import Optional

from ascend_doctor.evaluator import ev
from ascend_doctor.i18n import T
from ascend_doctor.registry import check


def _me(ctx):
    """This node's FleetNode (check files are loaded one by one: they do not import each other)."""
    name = ctx.fact("fleet_node")
    return next(n for n in ctx.fact("fleet_nodes") if n.name == name)


def _count(value: Optional[str]) -> Optional[int]:
    try:
        return int(str(value).rstrip("+")) if value not in (None, "") else None
    except ValueError:
        return None


def _resources_text(res: dict) -> str:
    shown = {k: v for k, v in res.items() if not k.startswith(("node:", "bundle_group", "NPU_group"))}
    return ", ".join(f"{k} {v:g}" if isinstance(v, (int, float)) else f"{k} {v}" for k, v in sorted(shown.items()))


@check("FLEET107", "ray-advertises-npus", severity="error", needs=["fleet_nodes", "fleet_node"], stage="fleet")
def ray_advertises_npus(ctx):
    """Ray advertises each node's NPUs as its `NPU` resource

    What it checks: under `fleet --ray-address`, the `NPU` resource Ray reports for the node (`ray.nodes()`, what
    `ray status` sums) against the chips `npu-smi info` lists on it.

    Why it matters: vLLM's Ray executor asks Ray for one `NPU` per worker; a node that advertises none (or advertises
    its NPUs as `GPU`) gets no worker: `ValueError: Current node has no NPU available`, or a placement group that
    never becomes ready. More `NPU` than chips places workers on devices that do not exist.

    How to fix: start the node's Ray with the NPUs declared, e.g. `ray start --address=HEAD:6379
    --resources='{"NPU": 8}'` (the chip count npu-smi shows), or make CANN loadable in the raylet's environment
    (`source /usr/local/Ascend/ascend-toolkit/set_env.sh` before `ray start`) so Ray detects them.
    """
    me = _me(ctx)
    if me.ray_resources is None:
        return ctx.skip(T("not a Ray fleet: snapshots carry no Ray resources"))
    if not me.reachable:
        return ctx.skip(T("{name} did not answer (see FLEET101)", name=me.name))
    chips = _count(me.item("devices", "NPU chips"))
    res = me.ray_resources
    npu = res.get("NPU", 0) or 0
    evidence = [ev(f"ray: resources of {me.name}", _resources_text(res) or "(none)"),
                ev(f"fleet: npu-smi info on {me.name}", f"chips: {chips if chips is not None else '?'}")]
    if chips is None:
        return ctx.unknown(T("Ray advertises {npu} NPU(s) on {name}, but how many chips npu-smi lists there is not "
                             "known", npu=f"{npu:g}", name=me.name), evidence)
    fix = T('Start Ray on {name} with its NPUs declared: `ray start --address=HEAD:6379 --resources=\'{{"NPU": '
            '{chips}}}\'` (or source CANN\'s set_env.sh before `ray start` so Ray detects them), then check '
            '`ray status`.', name=me.name, chips=chips)
    if npu == 0 and chips > 0:
        gpu = res.get("GPU")
        also = T(" (it advertises {gpu} GPU instead)", gpu=f"{gpu:g}") if gpu else ""
        return ctx.fail(T("Ray on {name} advertises no NPU resource{also}, but npu-smi lists {chips} chip(s): vLLM's "
                          "Ray executor will place no worker there", name=me.name, also=also, chips=chips), evidence,
                        remediation=fix, npu=0, chips=chips)
    if npu > chips:
        return ctx.fail(T("Ray on {name} advertises {npu} NPU(s) but npu-smi lists {chips} chip(s): workers would be "
                          "placed on devices that do not exist", name=me.name, npu=f"{npu:g}", chips=chips), evidence,
                        remediation=fix, npu=npu, chips=chips)
    if npu < chips:
        return ctx.warn(T("Ray on {name} advertises {npu} of the {chips} NPU chip(s) npu-smi lists: the rest get no "
                          "worker", name=me.name, npu=f"{npu:g}", chips=chips), evidence, remediation=fix,
                        npu=npu, chips=chips)
    return ctx.ok(T("Ray advertises the {chips} NPU chip(s) npu-smi lists on {name}", chips=chips, name=me.name),
                  evidence)
