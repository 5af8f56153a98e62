"""FLEET107: Ray sees the NPUs. vLLM's Ray executor (`--distributed-executor-backend ray`, multi-node) places one
worker per rank on a Ray `NPU` resource; a node whose raylet did not advertise its NPUs gets no worker, and the serve
fails with `Current node has no NPU available` or waits on a placement group forever (vllm-ascend#3114, #8306;
ray#55137, #53044). Ray detects Ascend NPUs itself (ray PR #41256, resource name `NPU`) only when the raylet's
environment can load CANN; otherwise they must be declared with `ray start --resources`."""

from __future__ import annotations

from typing import Optional

from ascend_doctor.i18n import T
from ascend_doctor.plugin import check, ev


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


HEAD_RESOURCE = "node:__internal_head__"  # Ray's marker of the head node (ray/_common/constants.py)
NOT_RAY = ("mp", "uni", "external_launcher")


def _sizes(cmd) -> tuple[dict[str, int], list[str]]:
    """The parallel sizes that set how many `NPU` bundles vLLM's Ray executor asks for, and the options that are not
    integers. world_size = PP × TP × PCP (vllm/config/parallel.py); DP ranks multiply it only with
    `--data-parallel-backend ray`, each rank with its own placement group (vllm/v1/engine/utils.py)."""
    sizes, bad = {}, []
    for key, name in (("tp", "tensor_parallel_size"), ("pp", "pipeline_parallel_size"),
                      ("pcp", "prefill_context_parallel_size"), ("dp", "data_parallel_size")):
        try:
            sizes[key] = cmd.int_opt(name) or 1
        except ValueError:
            bad.append(cmd.source(name))
    return sizes, bad


def _uses_ray(cmd) -> Optional[str]:
    """Why the command does not use Ray's placement group, or None when it does. On a non-CUDA platform vLLM keeps
    its multiprocessing executor unless `--distributed-executor-backend ray` or `--data-parallel-backend ray` is
    given (vllm/config/parallel.py, the default-backend branch)."""
    backend = cmd.get("distributed_executor_backend")
    if backend == "ray" or (backend is None and cmd.get("data_parallel_backend") == "ray"):
        return None
    if backend is None:
        return T("the serve command gives no `--distributed-executor-backend`: on NPUs vLLM uses its multiprocessing "
                 "executor, not a Ray placement group")
    return T("the serve command uses the `{backend}` executor, not a Ray placement group", backend=backend)


@check("FLEET108", "ray-placement-fits", severity="error", needs=["fleet_nodes", "fleet_node"], stage="fleet")
def ray_placement_fits(ctx):
    """The Ray placement vLLM will ask for fits the NPUs the cluster advertises

    What it checks: for `fleet --ray-address … -- vllm serve …` with `--distributed-executor-backend ray`, the `NPU`
    bundles vLLM's Ray executor requests (one per worker: TP × PP × PCP, times DP with `--data-parallel-backend ray`)
    against the `NPU` resource each node advertises; that the head node, where `vllm serve` is assumed to run, has at
    least one NPU; and whether a tensor-parallel group fits on one node. Judged once, on the head node.

    Why it matters: vLLM creates a PACK placement group of `{"NPU": 1}` bundles and waits for it; with fewer NPUs in
    the cluster it waits and then fails (`The number of required NPUs exceeds the total number of available NPUs`),
    and the driver's node needs one itself (`Current node has no NPU available`, vllm-ascend#3114). A TP group spread
    over nodes runs every layer's all-reduce across the network (vLLM warns: `tensor_parallel_size=… is bigger than a
    reserved number of NPUs`).

    How to fix: declare the NPUs on every node (`ray start --resources='{"NPU": 8}'`), add nodes, or lower the
    parallel sizes; keep TP within a node and span nodes with `--pipeline-parallel-size`. Run `vllm serve` on a node
    that advertises NPUs.
    """
    nodes = ctx.fact("fleet_nodes")
    me = _me(ctx)
    cmd = getattr(nodes, "serve", None)
    if cmd is None:
        return ctx.skip(T("no `vllm serve` command was given (`ascend-doctor fleet --ray-address … -- vllm serve …`)"))
    if me.ray_resources is None:
        return ctx.skip(T("not a Ray fleet: snapshots carry no Ray resources"))
    heads = [n for n in nodes if n.ray_resources and HEAD_RESOURCE in n.ray_resources]
    judge_on = heads[0] if heads else next(n for n in nodes if n.ray_resources is not None)
    if me is not judge_on:
        return ctx.skip(T("judged once for the cluster, on {name}", name=judge_on.name))
    why_not = _uses_ray(cmd)
    if why_not:
        return ctx.skip(why_not)
    sizes, bad = _sizes(cmd)
    if bad:
        return ctx.unknown(T("the parallel sizes are not integers: {options}", options=", ".join(bad)),
                           [ev(T("serve command"), cmd.display)])
    return _judge_placement(ctx, nodes, heads, sizes, cmd)


def _spread_fix(world: int, widest: int):
    if widest >= 1 and world % widest == 0:
        return T("Keep TP within a node and span nodes with pipeline parallelism: `--tensor-parallel-size {widest} "
                 "--pipeline-parallel-size {pp}`.", widest=widest, pp=world // widest)
    return T("Keep TP within a node (at most {widest}) and span nodes with `--pipeline-parallel-size`.", widest=widest)


def _judge_placement(ctx, nodes, heads, sizes: dict[str, int], cmd):
    ray_dp = cmd.get("data_parallel_backend") == "ray"
    world = sizes["tp"] * sizes["pp"] * sizes["pcp"]
    need = world * (sizes["dp"] if ray_dp else 1)
    have = {n.name: float((n.ray_resources or {}).get("NPU", 0) or 0) for n in nodes if n.ray_resources is not None}
    total = sum(have.values())
    shape = f"TP {sizes['tp']} × PP {sizes['pp']}" + (f" × PCP {sizes['pcp']}" if sizes["pcp"] > 1 else "") + (
        f" × DP {sizes['dp']}" if ray_dp else "")
    per_node = ", ".join(f"{name} {npu:g}" for name, npu in sorted(have.items()))
    evidence = [ev(T("serve command"), cmd.display),
                ev("ray: NPU per node", per_node + (f" (head: {heads[0].name})" if heads else " (no head marked)"))]
    fix_declare = T("Declare the NPUs on every node (`ray start --address=HEAD:6379 --resources='{{\"NPU\": 8}}'`, "
                    "the chip count npu-smi shows), add nodes, or lower the parallel sizes; then check `ray status`.")
    if need > total:
        return ctx.fail(T("The serve command needs {need} NPU(s) from Ray ({shape}), but the cluster advertises "
                          "{total}: {per_node}; vLLM's placement group will never be ready", need=need, shape=shape,
                          total=f"{total:g}", per_node=per_node), evidence, remediation=fix_declare,
                        need=need, total=total)
    if not heads:
        return ctx.unknown(T("The cluster advertises {total} NPU(s) for the {need} the serve command needs ({shape}), "
                             "but Ray marks no head node, so whether the node running `vllm serve` has an NPU is not "
                             "known", total=f"{total:g}", need=need, shape=shape), evidence)
    head = heads[0].name
    if have.get(head, 0) < 1:
        return ctx.fail(T("The Ray head {head} advertises no NPU: `vllm serve` started there fails with `Current node "
                          "has no NPU available` ({shape} would fit on the other nodes)", head=head, shape=shape),
                        evidence, remediation=T("Run `vllm serve` on a node that advertises NPUs, or declare the "
                                                "head's NPUs: `ray start --head --resources='{{\"NPU\": 8}}'`."),
                        need=need, total=total)
    widest = max(have.values())
    if sizes["tp"] > widest:
        return ctx.warn(T("Tensor parallel size {tp} is larger than the most NPUs one node advertises ({widest}): "
                          "the TP group spans nodes, and every layer's all-reduce crosses the network",
                          tp=sizes["tp"], widest=f"{widest:g}"), evidence,
                        remediation=_spread_fix(world, int(widest)),
                        need=need, total=total)
    partial = T(" (the packing of each DP rank's group, VLLM_RAY_DP_PACK_STRATEGY, is not judged)") if ray_dp else ""
    return ctx.ok(T("The {need} NPU(s) the serve command asks Ray for ({shape}) fit the {total} the cluster "
                    "advertises, and the head {head} has {head_npus}{partial}", need=need, shape=shape,
                    total=f"{total:g}", head=head, head_npus=f"{have[head]:g}", partial=partial), evidence)
