"""SERVE310: the LoRA flags and the static adapters of a `vllm serve` command, by vLLM's own rules
(the `serve/lora` table) — what stops the start after the base model has loaded."""

from __future__ import annotations

from ascend_doctor.i18n import T, join
from ascend_doctor.knowledge.lora import LoraRules
from ascend_doctor.plugin import check, ev

from ._serve import cmd_or_skip

REQUIRED = ("r", "lora_alpha", "target_modules")  # PEFTHelper's fields without a default (vllm/lora/peft_helper.py)


def _flag_problems(cmd, rules: LoraRules) -> tuple[list, int]:
    """(problems with the LoRA flags, the max rank vLLM will use)."""
    problems = []
    if cmd.has("lora_modules") and not cmd.flag("enable_lora"):
        problems.append(T("--lora-modules without --enable-lora: vLLM stops with \"LoRA is not enabled. Use "
                          "--enable-lora to enable LoRA.\""))
    try:
        rank = cmd.int_opt("max_lora_rank")
        loras = cmd.int_opt("max_loras")
        cpu = cmd.int_opt("max_cpu_loras")
    except ValueError as exc:
        return [T("a LoRA size is not an integer: {exc}", exc=exc)], rules.default_max_lora_rank
    if rank is not None and rank not in rules.max_lora_ranks:
        problems.append(T("--max-lora-rank {rank} is not one vLLM accepts (choose from {allowed})", rank=rank,
                          allowed=", ".join(map(str, rules.max_lora_ranks))))
    if loras is not None and loras < 1:
        problems.append(T("--max-loras {n} is below 1", n=loras))
    loras = loras if loras is not None and loras >= 1 else rules.default_max_loras
    if cpu is not None and 0 < cpu < loras:
        problems.append(T("max_cpu_loras ({cpu}) must be >= max_loras ({loras}).", cpu=cpu, loras=loras))
    return problems, rank if rank is not None else rules.default_max_lora_rank


def _adapter_problems(a, max_rank: int) -> list:
    """vLLM's words for what stops this adapter's load (vllm/lora/peft_helper.py validate_legal)."""
    name = a.name or a.text
    if a.error:
        return [a.error]
    if a.where == "missing" or (a.where == "local" and a.config_error == "no adapter_config.json"):
        return [T("Loading lora {name} failed: No adapter found for {path} ({why})", name=name, path=a.path,
                  why=a.why or a.config_error)]
    if a.where in ("hub", "unrecorded"):
        return []  # not here to read: judged unknown by the caller
    if a.config_error:
        return [T("adapter {name}: {error}", name=name, error=a.config_error)]
    cfg = a.config or {}
    missing = [k for k in REQUIRED if k not in cfg]
    if missing:
        return [T("adapter {name}: Missing required configuration fields: {fields}", name=name,
                  fields=", ".join(missing))]
    out = []
    ranks = [cfg.get("r")] + list((cfg.get("rank_pattern") or {}).values())
    ranks = [r for r in ranks if isinstance(r, int) and not isinstance(r, bool)]
    if ranks and max(ranks) > max_rank:
        out.append(T("adapter {name}: LoRA rank {rank} is greater than max_lora_rank {max_rank}.", name=name,
                     rank=max(ranks), max_rank=max_rank))
    if cfg.get("use_dora"):
        out.append(T("adapter {name}: vLLM does not yet support DoRA.", name=name))
    if cfg.get("bias", "none") != "none":
        out.append(T("adapter {name}: Adapter bias is not supported.", name=name))
    if cfg.get("lora_bias"):
        out.append(T("adapter {name}: vLLM does not support LoRA bias (lora_bias).", name=name))
    return out


@check("SERVE310", "serve-lora-adapters", severity="error", stage="serve", needs=["serve_cmd", "serve_lora"])
def lora_adapters(ctx):
    """The LoRA flags and every --lora-modules adapter are ones vLLM will load

    What it checks: with `--enable-lora` or `--lora-modules`: that `--lora-modules` comes with `--enable-lora`,
    `--max-lora-rank` is a value vLLM accepts (1, 8, 16, 32, 64, 128, 256, 320, 512; default 16), `--max-cpu-loras`
    is not below `--max-loras`; and for each adapter (`name=path` or a JSON object) that vLLM can read the value,
    the directory exists with an `adapter_config.json` holding `r`, `lora_alpha` and `target_modules`, its rank (and
    every `rank_pattern` rank) is within `--max-lora-rank`, and it uses no feature vLLM refuses (DoRA, bias).

    Why it matters: vLLM loads the static adapters at start, after the base model: an adapter of rank 64 with the
    default `--max-lora-rank 16` stops the server with `LoRA rank 64 is greater than max_lora_rank 16.` minutes into
    the start, a path that is not there with `No adapter found for …`, and `--lora-modules` alone with `LoRA is not
    enabled. Use --enable-lora to enable LoRA.` (vllm/lora/peft_helper.py, worker_manager.py; vllm-ascend#2001,
    #6143 are LoRA starts that failed).

    How to fix: raise `--max-lora-rank` to the adapter's rank (one of the accepted values), add `--enable-lora`,
    point `--lora-modules name=/path` at the directory holding `adapter_config.json`, or retrain/convert an adapter
    that uses DoRA or a bias.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    if not cmd.flag("enable_lora") and not cmd.has("lora_modules"):
        return ctx.skip(T("LoRA is not enabled (no --enable-lora, no --lora-modules)"))
    rules = ctx.knowledge.lora
    problems, max_rank = _flag_problems(cmd, rules)
    evidence = [ev(T("command line"), " ".join(cmd.source(o) for o in ("enable_lora", "lora_modules", "max_lora_rank",
                                                                    "max_loras", "max_cpu_loras") if cmd.has(o)))]
    fact = ctx.fact("serve_lora")
    unseen, seen = [], []
    for a in fact.adapters:
        found = _adapter_problems(a, max_rank)
        problems += found
        if not found and a.where in ("hub", "unrecorded"):
            unseen.append(a)
        elif not found:
            seen.append(f"{a.name} r={(a.config or {}).get('r')}")
        state = False if found else (None if a.where in ("hub", "unrecorded") else True)
        evidence.append(ev(f"adapter {a.name or a.text}", a.path or a.text, ok=state))
    if problems:
        return ctx.fail(T("vLLM would stop at start: {what}", what=join("; ", problems)), evidence,
                        remediation=T("Set --max-lora-rank to at least the adapter's rank (one of {allowed}), give "
                                      "--enable-lora with --lora-modules, and point each adapter at the directory "
                                      "holding its adapter_config.json.",
                                      allowed=", ".join(map(str, rules.max_lora_ranks))))
    if unseen:
        return ctx.unknown(T("adapter(s) {names} are not on this machine: vLLM will try them as Hugging Face repo "
                             "ids at start, so their rank was not checked", names=", ".join(
                                 a.name or a.text for a in unseen)), evidence)
    if not seen:
        return ctx.ok(T("LoRA enabled with --max-lora-rank {rank}; no static adapter to check", rank=max_rank),
                      evidence)
    return ctx.ok(T("{n} adapter(s) within --max-lora-rank {rank}: {adapters}", n=len(seen), rank=max_rank,
                    adapters=", ".join(seen)), evidence)
