"""The `vllm serve` command line and environment of a plan, every option with the reason it was chosen."""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.deploy.arch import Architecture
from ascend_doctor.deploy.container import quote
from ascend_doctor.deploy.plan import Candidate, Want
from ascend_doctor.i18n import Localized, T

QUANTIZED = ("w8a8", "w4a8", "w8a16", "w4a16")  # msModelSlim formats, served with `--quantization ascend`


class NodeCommand(Model):
    """What one node of a multi-node plan runs: `before` (e.g. `ray start`), then the serve command (head) or the
    headless engine (workers)."""

    node: int
    role: str  # "head" | "worker"
    before: list[list[str]] = Field(default_factory=list)
    argv: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    docker: list[str] = Field(default_factory=list)

    def shell(self) -> str:
        env = " ".join(f"{k}={quote(v)}" for k, v in self.env.items())
        return (env + " " if env else "") + " ".join(quote(w) for w in self.argv)


class ServePlan(Model):
    argv: list[str]
    env: dict[str, str] = Field(default_factory=dict)
    docker: list[str] = Field(default_factory=list, description="`docker run` of the release's image, up to the "
                                                                "image (the serve command follows it)")
    why: list[Localized] = Field(default_factory=list, description="one line per choice: option and reason")
    nodes: list[NodeCommand] = Field(default_factory=list, description="a multi-node plan: one entry per node")

    def shell(self) -> str:
        env = " ".join(f"{k}={quote(v)}" for k, v in self.env.items())
        return (env + " " if env else "") + " ".join(quote(w) for w in self.argv)


# What every node of a multi-node deployment exports, as vllm-ascend's multi-node tutorials do
# (docs/source/tutorials/features/long_sequence_context_parallel_multi_node.md at v0.23.0: `export
# HCCL_IF_IP=$local_ip`, `GLOO_SOCKET_IFNAME`, `TP_SOCKET_IFNAME`, `HCCL_SOCKET_IFNAME=$nic_name`).
NODE_ENV = {"HCCL_IF_IP": "$LOCAL_IP", "GLOO_SOCKET_IFNAME": "$NIC", "TP_SOCKET_IFNAME": "$NIC",
            "HCCL_SOCKET_IFNAME": "$NIC"}
DP_RPC_PORT = "13389"
RAY_PORT = "6379"


def node_commands(serve: ServePlan, lay, nodes: int) -> list[Localized]:
    """Fill `serve.nodes` for a plan over `nodes` machines; returns the lines that say why (or why not). Data
    parallel over nodes: each node runs its share of DP ranks (`--data-parallel-size-local`), node 0 serves the API
    with `--data-parallel-address`, the others run `--headless` from their `--data-parallel-start-rank` — the form of
    vllm-ascend's multi-node tutorials (the file above: `--data-parallel-size-local 1 --data-parallel-start-rank 0
    --data-parallel-address $local_ip --data-parallel-rpc-port`). One pipeline stage per node: a Ray cluster
    (`ray start` on each node) and `--distributed-executor-backend ray` on the head."""
    if nodes <= 1:
        return []
    env = {**serve.env, **NODE_ENV}
    if lay.pp == 1 and lay.dp % nodes == 0:
        local = lay.dp // nodes
        common = serve.argv + ["--data-parallel-size-local", str(local), "--data-parallel-address", "$HEAD_IP",
                               "--data-parallel-rpc-port", DP_RPC_PORT]
        serve.nodes = [NodeCommand(node=0, role="head", argv=common + ["--data-parallel-start-rank", "0"], env=env)]
        serve.nodes += [NodeCommand(node=i, role="worker", env=env,
                                    argv=common + ["--data-parallel-start-rank", str(i * local), "--headless"])
                        for i in range(1, nodes)]
        return [T("{nodes} nodes: {local} data-parallel rank(s) of {dp} on each (--data-parallel-size-local); node 0 "
                  "serves the API at $HEAD_IP, the others run --headless from their --data-parallel-start-rank; export "
                  "HEAD_IP (node 0's address), LOCAL_IP and NIC (this node's address and interface) on every node",
                  nodes=nodes, local=local, dp=lay.dp)]
    if lay.pp == nodes and lay.dp == 1:
        head = NodeCommand(node=0, role="head", env=env, before=[["ray", "start", "--head", "--port", RAY_PORT]],
                           argv=serve.argv + ["--distributed-executor-backend", "ray"])
        serve.nodes = [head] + [NodeCommand(node=i, role="worker", env=env,
                                            before=[["ray", "start", "--address", f"$HEAD_IP:{RAY_PORT}"]])
                                for i in range(1, nodes)]
        return [T("{nodes} nodes, one pipeline stage each: start Ray on every node (the head first), then serve "
                  "from the head with --distributed-executor-backend ray; export HEAD_IP, LOCAL_IP and NIC on every "
                  "node", nodes=nodes)]
    return [T("no per-node commands for {layout} over {nodes} nodes: neither its data-parallel ranks nor its "
              "pipeline stages divide by node", layout=lay.label(), nodes=nodes)]


def _layout(argv: list[str], why: list, a: Architecture, chosen: Candidate) -> None:
    lay = chosen.layout
    argv += ["--tensor-parallel-size", str(lay.tp)]
    why.append(T("--tensor-parallel-size {tp}: the fewest ranks whose budget holds the weights and the KV cache",
                 tp=lay.tp))
    if lay.pp > 1:
        argv += ["--pipeline-parallel-size", str(lay.pp)]
        why.append(T("--pipeline-parallel-size {pp}: one stage per node (TP stays within a node)", pp=lay.pp))
    if lay.dp > 1:
        argv += ["--data-parallel-size", str(lay.dp)]
        why.append(T("--data-parallel-size {dp}: attention replicated over the remaining ranks", dp=lay.dp))
    if lay.ep:
        argv.append("--enable-expert-parallel")
        why.append(T("--enable-expert-parallel: {experts} experts sharded over {ranks} ranks", experts=a.experts,
                     ranks=lay.tp * lay.dp))


def serve_plan(model: str, a: Architecture, chosen: Candidate, want: Want, chip_family: str,
               weight_format: Optional[str], tool_parser: Optional[str], reasoning_parser: Optional[str],
               remote_code: bool = False) -> ServePlan:
    """The `vllm serve` command of a plan and why each option; `remote_code`: the model's config is only loadable
    with its own code (SERVE201's rule), so the command carries --trust-remote-code and says to review it."""
    argv, why = ["vllm", "serve", model], []
    _layout(argv, why, a, chosen)
    if remote_code:
        argv.append("--trust-remote-code")
        why.append(T("--trust-remote-code: model_type {model_type} is neither in transformers nor in vLLM's config "
                     "registry, so vLLM loads it with the model's own code (auto_map); review its Python files "
                     "first", model_type=repr(a.model_type)))
    argv += ["--max-model-len", str(chosen.max_len), "--max-num-batched-tokens", str(want.batched_tokens),
             "--gpu-memory-utilization", f"{want.gmu:g}"]
    why.append(T("--max-model-len {max_len}: fits {n} request(s) in the KV cache", max_len=chosen.max_len,
                 n=want.concurrency))
    env: dict[str, str] = {"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True"}
    why.append(T("PYTORCH_NPU_ALLOC_CONF=expandable_segments:True: against fragmentation (vllm-ascend FAQ)"))
    if chip_family == "310P":
        argv += ["--dtype", "float16"]
        why.append(T("--dtype float16: the 310P runs float16 only"))
    if weight_format in QUANTIZED and chip_family != "310P":
        argv += ["--quantization", "ascend"]
        why.append(T("--quantization ascend: an msModelSlim {fmt} checkpoint", fmt=weight_format.upper()))
    if chosen.layout.ep or chosen.layout.dp > 1:
        env["HCCL_BUFFSIZE"] = str(want.hccl_buffsize_mb)
        why.append(T("HCCL_BUFFSIZE={mb}: the MB per communicator this budget counts (2 × it per group)",
                     mb=want.hccl_buffsize_mb))
    if tool_parser:
        argv += ["--enable-auto-tool-choice", "--tool-call-parser", tool_parser]
        why.append(T("--tool-call-parser {parser}: the parser of model_type {model_type}'s tool-call markup "
                     "(the matrix's model-families.toml)", parser=tool_parser, model_type=a.model_type))
    else:
        why.append(T("no --tool-call-parser: the matrix's model-families.toml has no family for model_type "
                     "{model_type}; "
                     "pick the parser of the model's chat template", model_type=repr(a.model_type)))
    if reasoning_parser:
        argv += ["--reasoning-parser", reasoning_parser]
        why.append(T("--reasoning-parser {parser}: the family's reasoning markup", parser=reasoning_parser))
    return ServePlan(argv=argv, env=env, why=why)
