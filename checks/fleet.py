"""FLEET checks: what must agree (or must differ) across the nodes of one multi-node deployment.

They run only under `ascend-doctor fleet` (stage "fleet"), once per node, on two preset facts: `fleet_nodes` (every
node: its facts read on the driver from the snapshot it sent, its clock estimate, or why it did not answer) and
`fleet_node` (the name of the node being judged). Each finding is about one node (`node` set); a node that differs
from the others fails and the message names the value the other nodes have, so the odd node out is the one that fails.

Which value is "right": the one most nodes have (a strict plurality). When no value has a plurality (e.g. two nodes
that differ), every node that disagrees with another fails: nothing tells which one to change.
"""

from __future__ import annotations

from typing import Optional

from ascend_doctor.i18n import T, join
from ascend_doctor.plugin import check, ev

# FLEET102: versions that must be identical on every node (group, item in fleet.facts.summarize, label).
# One HCCL communicator spans all ranks: the driver/firmware/CANN (HCCL lives in CANN) and the Python stack
# (torch_npu builds the graphs, vLLM/vllm-ascend schedule them) must be the same build everywhere.
SAME_VERSIONS = (
    ("ascend", "driver", "driver"),
    ("ascend", "firmware", "firmware"),
    ("ascend", "CANN", "CANN"),
    ("packages", "Python", "Python"),
    ("packages", "torch", "torch"),
    ("packages", "torch-npu", "torch_npu"),
    ("packages", "vllm", "vllm"),
    ("packages", "vllm-ascend", "vllm-ascend"),
    ("packages", "transformers", "transformers"),
)

# FLEET106: environment variables that must have the same value (or be unset) on every node. Sources: HCCL env var
# reference (hiascend.com CANN docs, "环境变量参考 > 集合通信"): HCCL_BUFFSIZE, HCCL_OP_EXPANSION_MODE,
# HCCL_INTRA_ROCE_ENABLE / HCCL_INTRA_PCIE_ENABLE, HCCL_DETERMINISTIC, HCCL_ALGO are communicator-wide settings that
# every rank must share; HCCL_CONNECT_TIMEOUT / HCCL_EXEC_TIMEOUT differing makes one side give up while the other
# waits; HCCL_RDMA_TC / HCCL_RDMA_SL must match the switch's lossless queue on every port. vLLM data parallelism
# (vllm/envs.py): VLLM_DP_MASTER_IP/PORT/SIZE name one rendezvous; VLLM_ALL2ALL_BACKEND picks the MoE collective.
# VLLM_ASCEND_* (vllm_ascend/envs.py) switch kernels and graph modes, which must match across ranks.
MUST_AGREE = (
    "HCCL_BUFFSIZE", "HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT", "HCCL_OP_EXPANSION_MODE", "HCCL_INTRA_ROCE_ENABLE",
    "HCCL_INTRA_PCIE_ENABLE", "HCCL_DETERMINISTIC", "HCCL_ALGO", "HCCL_RDMA_TC", "HCCL_RDMA_SL",
    "HCCL_RDMA_TIMEOUT", "HCCL_RDMA_RETRY_CNT",
    "VLLM_VERSION", "VLLM_USE_V1", "VLLM_DP_MASTER_IP", "VLLM_DP_MASTER_PORT", "VLLM_DP_SIZE", "VLLM_ALL2ALL_BACKEND",
)
MUST_AGREE_PREFIXES = ("VLLM_ASCEND_",)
# Each node's own address: the same value on two nodes is a copied configuration (both claim one IP).
MUST_DIFFER = ("HCCL_IF_IP", "VLLM_HOST_IP")

# FLEET105: a node whose clock is surely (offset minus its uncertainty) more than this off the fleet's median.
SKEW_LIMIT_S = 1.0

NOT_SET = "(not set)"


def _me(ctx):
    """(this node, every node) from the preset facts."""
    nodes = ctx.fact("fleet_nodes")
    name = ctx.fact("fleet_node")
    me = _cached(nodes, ("by-name",), lambda: {n.name: n for n in nodes}).get(name)
    if me is None:
        raise KeyError(f"node {name!r} is not in fleet_nodes")
    return me, nodes


def _others_unreachable(nodes) -> str:
    def build() -> str:
        down = [n.name for n in nodes if not n.reachable]
        return T(" ({n_down} node(s) not compared, no answer: {down})", n_down=len(down),
                 down=', '.join(down)) if down else ""
    return _cached(nodes, ("unreachable",), build)


def _plurality(values: dict[str, str]) -> Optional[str]:
    """The value strictly more nodes have than any other, or None on a tie."""
    counts: dict[str, int] = {}
    for v in values.values():
        counts[v] = counts.get(v, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    if len(ranked) == 1 or ranked[0][1] > ranked[1][1]:
        return ranked[0][0]
    return None


def _nodes_with(values: dict[str, str], value: str) -> list[str]:
    return sorted(n for n, v in values.items() if v == value)


def _cached(nodes, key, build):
    """`build()` once per fleet: `fleet_nodes` carries a cache shared by the per-node runs (a plain list does not)."""
    cache = getattr(nodes, "cache", None)
    if cache is None:
        return build()
    if key not in cache:
        cache[key] = build()
    return cache[key]


def _item_values(nodes, label, get) -> tuple[dict[str, str], Optional[str], int]:
    """(node -> known value, the plurality value or None, number of distinct values) of one item."""
    values = {n.name: get(n) for n in nodes if n.reachable}
    values = {k: v for k, v in values.items() if v is not None}
    return values, _plurality(values) if values else None, len(set(values.values()))


def _compare(me, nodes, items, key: str = "") -> tuple[list[dict], list[str], list[str]]:
    """For each (label, per-node value getter): how this node differs. Returns (differences, unknown labels, odd)."""
    diffs, unknown, odd_elsewhere = [], [], []
    for label, get in items:
        mine = get(me)
        if mine is None:
            unknown.append(label)
            continue
        values, top, distinct = _cached(nodes, ("item", key, label), lambda: _item_values(nodes, label, get))
        if distinct <= 1:
            continue
        if top is not None and mine == top:
            others = {v for v in values.values() if v != top}
            odd_elsewhere += [f"{', '.join(_nodes_with(values, v))} ({label} {v})" for v in sorted(others)]
            continue
        d = {"item": label, "value": mine, "nodes_same": _nodes_with(values, mine)}
        if top is not None:
            d.update(majority=top, majority_nodes=_nodes_with(values, top))
        else:
            d["all"] = {v: _nodes_with(values, v) for v in sorted(set(values.values()))}
        diffs.append(d)
    return diffs, unknown, odd_elsewhere


def _describe(me_name: str, d: dict) -> str:
    if "majority" in d:
        n = len(d["majority_nodes"])
        return T("{item} {value} on {node}, but {majority} on {n} other node(s) ({nodes})", item=d["item"],
                 value=d["value"], node=me_name, majority=d["majority"], n=n, nodes=", ".join(d["majority_nodes"]))
    split = join("; ", [T("{value} on {nodes}", value=v, nodes=", ".join(ns)) for v, ns in d["all"].items()])
    return T("{item} differs with no majority to tell which is right: {split}", item=d["item"], split=split)


def _verdict(ctx, me, nodes, items, what: str, evidence_of):
    diffs, unknown, odd_elsewhere = _compare(me, nodes, items, key=what)
    evidence = [evidence_of(me)]
    suffix = _others_unreachable(nodes)
    if diffs:
        msg = join("; ", [_describe(me.name, d) for d in diffs])
        return ctx.fail(T("{differences}{suffix}", differences=msg, suffix=suffix), evidence, differences=diffs,
                        value=join(", ", [T("{item} {value}", item=d["item"], value=d["value"]) for d in diffs]))
    if unknown and len(unknown) == len(items):
        return ctx.unknown(T("{what} of {name} could not be read ({unknown}){suffix}", what=what, name=me.name,
                             unknown=', '.join(unknown), suffix=suffix), evidence)
    msg = T("{what} the same as on the other node(s)", what=what)
    if odd_elsewhere:
        msg += T("; differing: {differing}", differing=join("; ", dict.fromkeys(odd_elsewhere)))
    if unknown:
        msg += T("; not known here: {unknown}", unknown=", ".join(unknown))
    return ctx.ok(msg + suffix, evidence)


def _skip_unreachable(ctx, me):
    return ctx.skip(T("{name} did not answer (see FLEET101)", name=me.name))


@check("FLEET101", "node-reachable", severity="error", needs=["fleet_nodes", "fleet_node"], stage="fleet")
def node_reachable(ctx):
    """Every node of the fleet answered

    What it checks: the node's collect task came back with a snapshot. A node that Ray reports dead, that died during
    the run, that did not answer within the per-node timeout (`--node-timeout`), whose task failed, or whose snapshot
    file is unreadable fails, with the reason.

    Why it matters: a multi-node vLLM deployment needs every rank: one missing node makes the HCCL/Ray rendezvous of
    all the others wait until their timeout (HCCL_CONNECT_TIMEOUT, Ray placement groups) and then fail.

    How to fix: bring the node back (`ray status` on the head lists dead nodes; restart its raylet with `ray start
    --address=<head>:6379`), or remove it from the deployment; a timeout with a live node means a probe hangs there:
    run `ascend-doctor collect -o n.json` on that node to see which.
    """
    me, _ = _me(ctx)
    if me.reachable:
        t = me.timing
        took = T(" in {seconds}s", seconds=f"{t['round_trip_s']:.2f}") if t.get("round_trip_s") is not None else ""
        fake = T(" (served from a replayed snapshot: test/demo hook)") if me.fake else ""
        return ctx.ok(T("{name} answered{took}{fake}", name=me.name, took=took, fake=fake),
                      [ev(f"fleet: {me.source}", "")], **t)
    return ctx.fail(me.error or T("no answer"), [ev(f"fleet: {me.source}", me.error or "")],
                    kind=me.error_kind, value=me.error_kind or T("no answer"), **me.timing)


@check("FLEET102", "versions-identical", severity="error", needs=["fleet_nodes", "fleet_node"], stage="fleet")
def versions_identical(ctx):
    """Driver, firmware, CANN, Python and the vLLM stack are the same on every node

    What it checks: NPU driver, firmware, CANN toolkit, Python, torch, torch_npu, vllm, vllm-ascend and transformers
    versions against the other nodes. A package missing on some nodes counts as a difference.

    Why it matters: every rank joins one HCCL communicator and runs the same model graph. A node on another CANN
    (HCCL ships in CANN) or torch_npu fails the collective set-up (EI0006/EI0005 timeouts) or produces different
    kernels; another vLLM/vllm-ascend breaks the Ray/DP RPC between ranks. Such a node passes its own `check`: only the
    comparison shows it.

    How to fix: install the versions the other nodes have on the odd node (same container image everywhere, or the
    same `pip install vllm==… vllm-ascend==…` and CANN `.run` package), then re-run `ascend-doctor fleet`.
    """
    me, nodes = _me(ctx)
    if not me.reachable:
        return _skip_unreachable(ctx, me)
    items = [(label, lambda n, g=g, k=k: (n.item(g, k) or ("not installed" if g == "packages" and
                                                            n.summary.get("packages") else None)))
             for g, k, label in SAME_VERSIONS]

    def evidence(n):
        return ev(f"fleet: versions on {n.name}", "\n".join(f"{label}: {n.item(g, k) or '?'}"
                                                            for g, k, label in SAME_VERSIONS))
    return _verdict(ctx, me, nodes, items, T("versions"), evidence)


@check("FLEET103", "npu-inventory", severity="error", needs=["fleet_nodes", "fleet_node"], stage="fleet")
def npu_inventory(ctx):
    """Every node has the same number and model of NPUs

    What it checks: the chip count and the chip model(s) in `npu-smi info` against the other nodes.

    Why it matters: vLLM gives every node the same tensor-parallel share (`--tensor-parallel-size` × pipeline /
    data-parallel size over the nodes): a node with fewer visible chips (a failed card, a container started with
    fewer `--device`s) or another model (910B3 vs 910B4: other HBM size) cannot hold its share, and placement or
    KV-cache sizing fails on it.

    How to fix: on the odd node, `npu-smi info` shows which chip is missing; check `/dev/davinci*` in the container
    and ASCEND_RT_VISIBLE_DEVICES, or replace/reseat the card; use nodes of one model in one deployment.
    """
    me, nodes = _me(ctx)
    if not me.reachable:
        return _skip_unreachable(ctx, me)

    def count(n):
        v = n.item("devices", "NPU chips")
        return v
    # The labels are messages: they are said inside the finding ("NPU chips 16 on …"), in the run's language.
    items = [(T("NPU chips"), count), (T("NPU model"), lambda n: n.item("devices", "NPU model"))]

    def evidence(n):
        return ev(f"fleet: npu-smi info on {n.name}", f"chips: {count(n) or '?'}\nmodel: "
                                                      f"{n.item('devices', 'NPU model') or '?'}")
    return _verdict(ctx, me, nodes, items, T("NPU count and model"), evidence)


def _device_ips(n) -> dict[int, str]:
    """Device id -> RoCE IP as hccn_tool reports it, else as /etc/hccn.conf plans it (from the node's summary, which a
    node evaluated by its own Ray task sends instead of its facts)."""
    return {**n.planned_ips(), **n.live_ips()}


@check("FLEET104", "hccl-ips-unique", severity="error", needs=["fleet_nodes", "fleet_node"], stage="fleet")
def hccl_ips_unique(ctx):
    """NPU RoCE (HCCL) IPs are unique across the fleet and match each node's hccn.conf

    What it checks: every device IP `hccn_tool -i N -ip -g` reports (or `/etc/hccn.conf` plans, when hccn_tool gave
    none) is used by no other device of this or any other node, and equals `address_N` in this node's
    `/etc/hccn.conf`.

    Why it matters: HCCL addresses ranks by these IPs. Two devices with one IP (a cloned hccn.conf, an image built
    from another node) make inter-node traffic go to the wrong card: HCCL initialisation times out (EI0006) or hangs.
    A port whose live IP differs from hccn.conf loses its address at the next reboot or `hccn_tool -cfg recovery`.

    How to fix: give each device its own IP: `hccn_tool -i N -ip -s address <ip> netmask <mask>` on the odd node,
    and write the same `address_N=` into its `/etc/hccn.conf`.
    """
    me, nodes = _me(ctx)
    if not me.reachable:
        return _skip_unreachable(ctx, me)
    mine = _device_ips(me)
    if not mine:
        why = me.item("devices", "hccn_tool") or me.unavailable("hccn") or \
            "no device IPs from hccn_tool or /etc/hccn.conf"
        return ctx.unknown(T("no RoCE device IPs known on {name}: {why}{others_unreachable}", name=me.name, why=why,
                             others_unreachable=_others_unreachable(nodes)))
    def build_owners() -> dict[str, list[str]]:
        owners: dict[str, list[str]] = {}
        for n in nodes:
            if n.reachable:
                for dev_id, ip in _device_ips(n).items():
                    owners.setdefault(ip, []).append(f"{n.name} device {dev_id}")
        return owners
    owners = _cached(nodes, ("ip-owners",), build_owners)
    problems, dups = [], []
    for dev_id, ip in sorted(mine.items()):
        others = [o for o in owners.get(ip, []) if o != f"{me.name} device {dev_id}"]
        if others:
            dups.append({"device": dev_id, "ip": ip, "also": others})
    # Group by the node(s) sharing them: a cloned hccn.conf shares every port with one other node.
    by_nodes: dict[tuple, list[dict]] = {}
    for d in dups:
        by_nodes.setdefault(tuple(sorted({o.rsplit(" device ", 1)[0] for o in d["also"]})), []).append(d)
    for other_nodes, ds in by_nodes.items():
        if len(ds) == 1:
            problems.append(T("device {device} IP {ip} is also used by {others}", device=ds[0]["device"],
                              ip=ds[0]["ip"], others=", ".join(ds[0]["also"])))
        else:
            problems.append(T("{n} device IPs ({first} … {last}, devices {devices}) are also used by {other_nodes}",
                              n=len(ds), first=ds[0]["ip"], last=ds[-1]["ip"],
                              devices=", ".join(str(d["device"]) for d in ds), other_nodes=", ".join(other_nodes)))
    mismatch = []
    planned = me.planned_ips()
    for dev_id, live in sorted(me.live_ips().items()):
        if dev_id in planned and planned[dev_id] != live:
            mismatch.append({"device": dev_id, "live": live, "hccn_conf": planned[dev_id]})
            problems.append(T("device {dev_id} has IP {live} but /etc/hccn.conf says address_{dev_id}={planned}",
                              dev_id=dev_id, live=live, planned=planned[dev_id]))
    evidence = [ev(f"fleet: RoCE IPs on {me.name}", "\n".join(f"device {d}: {ip}" for d, ip in sorted(mine.items())))]
    if problems:
        shown = problems if len(problems) <= 4 else problems[:3] + [f"and {len(problems) - 3} more (details)"]
        return ctx.fail("; ".join(shown) + _others_unreachable(nodes), evidence, duplicates=dups,
                        conf_mismatch=mismatch,
                        value=T("dup {ips}", ips=",".join(d["ip"] for d in dups)) if dups else "≠ hccn.conf")
    return ctx.ok(T("{n_mine} device IP(s) on {name}, none used elsewhere in the fleet, all as in "
                    "hccn.conf{others_unreachable}", n_mine=len(mine), name=me.name,
                    others_unreachable=_others_unreachable(nodes)), evidence)


@check("FLEET105", "clock-skew", severity="warning", needs=["fleet_nodes", "fleet_node"], stage="fleet")
def clock_skew(ctx):
    """The node's clock agrees with the rest of the fleet

    What it checks: the node's wall clock against the median of the fleet's clocks, estimated from the collect task's
    own start/end times and the driver's send/receive times (NTP-style: the bound is half the round trip minus the
    task's duration, stated in the message). It fails only when the offset minus its uncertainty exceeds 1 s, and is
    unknown when the uncertainty is too large to tell. Snapshot files gathered at different times have no common clock
    reference: unknown.

    Why it matters: a node whose clock is off breaks what compares times across nodes: log and trace correlation
    when an HCCL timeout must be traced to its first failing rank, TLS/token validity (Ray with TLS, model downloads),
    and it shows that time synchronisation (HOST107) is not working there.

    How to fix: synchronise the node: `chronyc makestep` (or `systemctl restart chronyd`) and check `chronyc tracking`
    on it; point every node at the same NTP servers.
    """
    me, nodes = _me(ctx)
    if not me.reachable:
        return _skip_unreachable(ctx, me)

    def reference():
        """(median offset, the node that has it) over every measured node, once per fleet; None when none is."""
        measured = sorted((n for n in nodes if n.reachable and n.clock_offset_s is not None),
                          key=lambda n: n.clock_offset_s)
        if not measured:
            return None
        ref_node = measured[(len(measured) - 1) // 2]  # median_low
        return ref_node.clock_offset_s, ref_node

    median = _cached(nodes, ("clock-median",), reference)
    if median is None:
        return ctx.skip(T("clock skew is measured only by `fleet --ray-address` (snapshot files gathered at different "
                          "times have no common clock reference)"))
    if me.clock_offset_s is None:
        return ctx.unknown(T("no clock measurement for {name} (snapshot files have no common clock reference; run "
                             "`ascend-doctor fleet --ray-address` to measure)",
                             name=me.name))
    ref, ref_node = median
    dev = me.clock_offset_s - ref
    unc = (me.clock_uncertainty_s or 0.0) + (ref_node.clock_uncertainty_s or 0.0 if ref_node is not me else 0.0)
    text = T("{name} clock is {deviation} s (± {uncertainty} s) from the fleet median; against the driver's clock "
             "{offset} s ± {offset_uncertainty} s", name=me.name, deviation=f"{dev:+.3f}", uncertainty=f"{unc:.3f}",
             offset=f"{me.clock_offset_s:+.3f}", offset_uncertainty=f"{me.clock_uncertainty_s or 0.0:.3f}")
    evidence = [ev(f"fleet: clock of {me.name}", text)]
    details = {"offset_from_median_s": round(dev, 6), "uncertainty_s": round(unc, 6), "value": f"{dev:+.2f}s"}
    if abs(dev) - unc > SKEW_LIMIT_S:
        return ctx.fail(T("{text}: more than {skew_limit_s} s even at the edge of the uncertainty", text=text,
                          skew_limit_s=format(SKEW_LIMIT_S, "g")), evidence,
                        **details)
    if abs(dev) + unc <= SKEW_LIMIT_S:
        return ctx.ok(text, evidence, **details)
    return ctx.unknown(T("{text}: the measurement is too coarse to tell whether it exceeds {skew_limit_s} s",
                         text=text, skew_limit_s=format(SKEW_LIMIT_S, "g")),
                       evidence, **details)


def _agree_names(nodes) -> list[str]:
    names = set(MUST_AGREE)
    for n in nodes:
        for k in n.summary.get("env", {}):
            if k.startswith(MUST_AGREE_PREFIXES):
                names.add(k)
    return sorted(names)


@check("FLEET106", "env-consistent", severity="error", needs=["fleet_nodes", "fleet_node"], stage="fleet")
def env_consistent(ctx):
    """Collective-relevant environment variables agree across nodes; per-node addresses differ

    What it checks: HCCL_BUFFSIZE, HCCL_CONNECT_TIMEOUT, HCCL_EXEC_TIMEOUT, HCCL_OP_EXPANSION_MODE,
    HCCL_INTRA_ROCE_ENABLE, HCCL_INTRA_PCIE_ENABLE, HCCL_DETERMINISTIC, HCCL_ALGO, HCCL_RDMA_TC, HCCL_RDMA_SL,
    HCCL_RDMA_TIMEOUT, HCCL_RDMA_RETRY_CNT, VLLM_VERSION, VLLM_USE_V1, VLLM_DP_MASTER_IP, VLLM_DP_MASTER_PORT,
    VLLM_DP_SIZE, VLLM_ALL2ALL_BACKEND and every VLLM_ASCEND_* have the same value (or are unset) on every node; and
    HCCL_IF_IP and VLLM_HOST_IP, each node's own address, are not the same on two nodes. Values are those of the
    environment the node's collect ran in (the Ray worker's, under `fleet --ray-address`).

    Why it matters: these are communicator-wide settings: ranks with different HCCL_BUFFSIZE or expansion mode fail or
    hang in the first collective; different timeouts make one side give up while another waits; different
    VLLM_ASCEND_* switches build different graphs per rank; a copied HCCL_IF_IP/VLLM_HOST_IP makes two nodes
    announce one address.

    How to fix: set these variables in one place for all nodes (the container image, the Kubernetes pod spec, the
    Ray `runtime_env` `env_vars`, the systemd unit template) and the per-node address from the node itself (e.g.
    `HCCL_IF_IP=$(hostname -I | awk '{print $1}')`).
    """
    me, nodes = _me(ctx)
    if not me.reachable:
        return _skip_unreachable(ctx, me)
    if "env" not in me.summary or me.unavailable("env"):
        return ctx.unknown(T("the environment of {name} is not in its snapshot", name=me.name))
    names = _cached(nodes, ("env-names",), lambda: _agree_names(nodes))
    items = [(var, lambda n, v=var: (n.summary.get("env", {}).get(v) or NOT_SET) if "env" in n.summary else None)
             for var in names]
    diffs, unknown, odd_elsewhere = _compare(me, nodes, items, key="env")
    problems = [_describe(me.name, d) for d in diffs]
    shared = []
    def build_holders() -> dict[tuple[str, str], list[str]]:
        holders: dict[tuple[str, str], list[str]] = {}
        for n in nodes:
            for var in MUST_DIFFER:
                val = n.summary.get("env", {}).get(var) if n.reachable else None
                if val:
                    holders.setdefault((var, val), []).append(n.name)
        return holders
    holders = _cached(nodes, ("must-differ",), build_holders)
    for var in MUST_DIFFER:
        mine = me.summary.get("env", {}).get(var)
        if not mine:
            continue
        same = [name for name in holders.get((var, mine), []) if name != me.name]
        if same:
            shared.append({"var": var, "value": mine, "also": same})
            problems.append(T("{var}={mine} on {name} is also set on {same} (must be each node's own address)",
                              var=var, mine=mine, name=me.name, same=', '.join(same)))
    env = me.summary.get("env", {})
    evidence = [ev(f"fleet: env on {me.name}", "\n".join(f"{k}={env.get(k, NOT_SET)}" for k in names
                                                         + list(MUST_DIFFER) if k in env) or "(none set)")]
    if problems:
        value = ", ".join([f"{d['item']}={d['value']}" for d in diffs] + [f"{s['var']} shared" for s in shared])
        return ctx.fail(T("{problems}{others}", problems=join("; ", problems), others=_others_unreachable(nodes)),
                        evidence, differences=diffs,
                        shared=shared, value=value)
    msg = T("{n_names} collective-relevant variable(s) agree with the other node(s)", n_names=len(names))
    if odd_elsewhere:
        msg += T("; differing: {differing}", differing=join("; ", dict.fromkeys(odd_elsewhere)))
    return ctx.ok(msg + _others_unreachable(nodes), evidence)
