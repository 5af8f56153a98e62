"""The calibration set (tests/data/calibration/startup-logs.toml) run through the deployment model: for each real
start-up log, what `plan`/SERVE305 would have predicted for the same model, chip, layout and options.

Three figures per row, each against what vllm-ascend logged:
- `exact_tokens`: the KV tokens from the logged available bytes — the KV arithmetic alone (bytes per token, blocks);
- `weights_gib`: the weights per rank estimated from config.json;
- `tokens`: the KV tokens end to end, from the chip table's device total (what `plan --chip` uses) and every
  estimated term;
- `host_tokens`: the same on the host, where npu-smi shows the die's own memory (what SERVE305 and `plan --replay`
  use: Chip.with_total) — the logged total stands for npu-smi's.
`python -m tests.deploy.calibration` prints the table and the median and worst error of each split.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Optional

from ascend_doctor.deploy.arch import derived_max_len, read_architecture, text_config, with_mtp
from ascend_doctor.deploy.budget import Layout, Term
from ascend_doctor.deploy.catalogue import catalogue_files, find_model
from ascend_doctor.deploy.chips import find_chip
from ascend_doctor.deploy.kv import capacity, kv_per_token
from ascend_doctor.deploy.plan import Want, size
from ascend_doctor.deploy.weights import estimate, per_rank
from ascend_doctor.knowledge.tomlread import read_toml
from tests.deploy import configs as C
from tests.helpers import shipped

DATA = Path(__file__).resolve().parents[1] / "data" / "calibration" / "startup-logs.toml"
GIB = 2**30
DEFAULT_BATCHED = 2048  # vLLM's serve default on a device it cannot size (vllm-ascend: get_device_total_memory raises)
DEFAULT_SEQS = 256


def rows() -> list[dict]:
    return read_toml(DATA, "calibration set")["row"]


def _arch_weights(row: dict):
    if "config" in row:
        cfg = getattr(C, row["config"])
        arch = read_architecture(cfg, derived_max_len(text_config(cfg))[0])
        return arch, estimate(arch, "bf16")
    files = catalogue_files(find_model(row["model"], shipped().catalogue), row.get("format"))
    return files.arch, files.weights


def _float_layers(row: dict) -> list:
    """The layers the row's catalogue checkpoint keeps in floating point (matrices/deploy/models.toml)."""
    if "model" not in row:
        return []
    fmt = row.get("format")
    m = find_model(row["model"], shipped().catalogue)
    chosen = next((c for c in m.checkpoints if c.format == fmt), None) if fmt else m.checkpoints[0]
    return list(chosen.float_layers) if chosen is not None else []


def _with_drafts(arch, n: int, mtp: int = 0):
    """An EAGLE draft model's decoder layers share the target's KV cache (vllm-ascend#2667: 33 layers' worth); the
    MTP layers of an MTP --speculative-config run beside the model like its own (MoE) decoder layers, weights and KV
    (as SERVE305 counts them)."""
    if n:
        arch = arch.model_copy(update={"layers": arch.layers + n, "full_layers": arch.full_layers + n})
    return with_mtp(arch, mtp) if mtp else arch


def _kept_whole(row: dict, arch):
    """The budget term of what the row's features keep whole per rank (deploy/replication.py), as SERVE305 counts
    it; a zero term for a row without `env`."""
    from ascend_doctor.deploy.replication import kept_whole

    kept = kept_whole(arch, row.get("format", "bf16"), row.get("tp", 1), (row.get("env", {}), None, None),
                      row["release"], shipped().replication)
    if kept is None:
        raise ValueError(f"{row['url']}: the replication rows do not cover release {row['release']}")
    return Term(name="kept whole", bytes=kept.bytes, inputs=kept.words)


def _tokens(row: dict, arch, ws, chip) -> Optional[int]:
    tp, pp, dp = row.get("tp", 1), row.get("pp", 1), row.get("dp", 1)
    layout = Layout(tp=tp, pp=pp, dp=dp, ep=bool(row.get("ep")) and tp * dp > 1)
    want = Want(ranks=tp * pp * dp, gmu=row["gmu"], max_len=row["max_model_len"],
                batched_tokens=row.get("max_num_batched_tokens", DEFAULT_BATCHED),
                max_seqs=row.get("max_num_seqs", DEFAULT_SEQS), vllm_ascend=row["release"],
                page_rules=shipped().hybrid_pages, dsa_rules=shipped().dsa_pages,
                reserve_rules=shipped().runtime_reserve, reserve_release=row.get("profiling_release"),
                hccl_rules=shipped().hccl_groups,
                hccl_buffsize_mb=row.get("hccl_buffsize_mb", 200),
                kv_halved_by=chip.kv_halved_by(row["release"]))
    cand = size(arch, ws, chip, want, layout, row["max_model_len"], extra=[_kept_whole(row, arch)])
    return cand.capacity.tokens if cand.capacity else None


def _npu_smi_total(chip, logged_total: int) -> int:
    """What npu-smi shows for the die whose torch_npu total was logged: the logged total plus the table's reserve
    (npu-smi's total less torch_npu's), so a 910B's 60.96 GiB is its 65,536 MB and a 310P3 die keeps its own; the
    table's memory where its torch_npu total is only an estimate (no reserve known to add back)."""
    if not chip.visible_mib:
        return chip.memory_mib
    return logged_total // 2**20 + chip.memory_mib - chip.visible_mib


def predict(row: dict) -> dict:
    arch, ws = _arch_weights(row)
    arch = _with_drafts(arch, row.get("draft_layers", 0), row.get("mtp_layers", 0))
    if row.get("mtp_layers"):  # the MTP layers are loaded with the model
        ws = estimate(arch, row.get("format", "bf16"), _float_layers(row))
    tp, pp, dp = row.get("tp", 1), row.get("pp", 1), row.get("dp", 1)
    ep = tp * dp if row.get("ep") else 1
    chip = find_chip(row["chip"], shipped().chips)
    kept = _kept_whole(row, arch).bytes  # loaded with the weights: vllm-ascend logs them in the same figure
    out = {"tokens": None, "host_tokens": None, "weights_gib": (per_rank(ws, arch, tp, pp, ep) + kept) / GIB}
    if "gmu" in row:  # a row whose --gpu-memory-utilization the thread does not give checks the arithmetic only
        out["tokens"] = _tokens(row, arch, ws, chip)
        seen = chip.with_total(_npu_smi_total(chip, row["total_bytes"])) if "total_bytes" in row else chip
        out["host_tokens"] = _tokens(row, arch, ws, seen)
    if "available_bytes" in row:
        kv = kv_per_token(arch, tp, pp, None, row["release"], page_rules=shipped().hybrid_pages,
                          dsa_rules=shipped().dsa_pages)
        out["exact_tokens"] = capacity(kv, row["available_bytes"], row["max_model_len"], 128).tokens
    return out


def error(pred: Optional[float], real: float) -> Optional[float]:
    return None if pred is None else (pred - real) / real


def table() -> list[dict]:
    out = []
    for r in rows():
        p = predict(r)
        out.append({"row": r, "pred": p, "tokens": error(p["tokens"], r["kv_tokens"]),
                    "host": error(p["host_tokens"], r["kv_tokens"]),
                    "exact": error(p.get("exact_tokens"), r["kv_tokens"]) if "exact_tokens" in p else None,
                    "weights": error(p["weights_gib"], r["weights_gib"]) if "weights_gib" in r else None})
    return out


def summary(t: list[dict], split: str, key: str = "tokens") -> tuple[float, float]:
    errs = [abs(x[key]) for x in t if x["row"]["split"] == split and x[key] is not None]
    return statistics.median(errs), max(errs)


def _pct(e: Optional[float]) -> str:
    return "   -   " if e is None else f"{e:+7.2%}"


def main() -> None:
    t = table()
    fmt = _pct
    for x in t:
        r = x["row"]
        print(f"{r['split']:8} {r['kind']:7} {r['url'].rsplit('/', 1)[-1]:>6} {r.get('model', r.get('config')):34} "
              f"tokens {x['pred']['tokens']} vs {r['kv_tokens']} {fmt(x['tokens'])}  on the host {fmt(x['host'])}  "
              f"exact {fmt(x['exact'])}  weights {fmt(x['weights'])}")
    for split in ("dev", "holdout"):
        for key, what in (("tokens", "chip table"), ("host", "on the host")):
            med, worst = summary(t, split, key)
            print(f"{split} ({what}): KV tokens median error {med:.1%}, worst {worst:.1%}")


if __name__ == "__main__":
    sys.exit(main())
