"""SERVE311: combinations of `vllm serve` settings that the installed vllm-ascend release refuses at start, breaks on
at the first request, or quietly replaces — prefix caching, chunked prefill, the Ascend scheduler, torchair, LoRA.
The rows are the `serve/release-rules` table; their conditions are ascend_doctor/knowledge/release_rules.py."""

from __future__ import annotations

from ascend_doctor.i18n import T, join, known
from ascend_doctor.knowledge.release_rules import answer, rules_for
from ascend_doctor.plugin import FactUnavailable, check, ev

from ._hardware import host_families
from ._serve import ascend_release, cmd_or_skip, model_config

EFFECT = {"refuses": T("refuses it at start"), "breaks": T("fails on it at the first request"),
          "overrides": T("replaces the setting"), "unsupported": T("does not support it"),
          "may_hang": T("may hang on it at start-up")}
WHEEL = T(" (if installed from its PyPI package; an editable install of its source, as in the official images, is not "
          "affected)")


def _model(ctx):
    """config.json of the served model (with --hf-overrides), or None when it cannot be read here."""
    m = ctx.try_fact("serve_model")
    if m is None or m.path is None or not m.config:
        return None
    return model_config(ctx, m)


def _env(ctx, cmd):
    """The server's environment; where it is not known at all (a paste without one), one that knows only the command
    line's own `K=V`, so the rules that read no variable are still judged and the others say why not."""
    from ascend_doctor.facts.server_env import EnvListing, ListedEnv, ServerEnv

    env = ctx.try_fact("server_env")
    if env is not None:
        return env
    why = ctx.unread.get("server_env") or ctx.unread.get("env") or T("the server's environment is not known")
    return ServerEnv.of(ListedEnv({}, EnvListing(T("the server's environment"), (), why=str(why))), cmd.env)


def _without(ctx, package: str, said: tuple) -> tuple:
    """A rule that holds only while `package` is missing: still a hit when the serving python lacks it."""
    dist = ctx.fact("python").dist(package)
    if dist is not None:
        return False, {}, ""
    hit, fields, seen = said
    return hit, fields, T("{seen}; {package} is not installed in the serving python", seen=seen, package=package)


def _from_wheel(ctx, said: tuple) -> tuple:
    """A rule that holds only for an install from the release's PyPI package: no hit for an editable install of the
    source tree (the host's vllm_files say so) or where the paste names the official image (which installs it so);
    else a hit, whose message says what it assumes."""
    files = ctx.try_fact("vllm_files")
    paste = ctx.try_fact("paste")
    if getattr(files, "vllm_ascend_editable", None) or getattr(paste, "image", None) is not None:
        return False, {}, ""
    return said


@check("SERVE311", "serve-release-combos", severity="error", stage="serve",
       needs=["serve_cmd", "python", "server_env", "serve_model", "npu_smi", "npu_family", "paste", "vllm_files"])
def release_combos(ctx):
    """The installed vllm-ascend release accepts this combination of cache, scheduler, graph and LoRA settings

    What it checks: each row of the `serve/release-rules` table whose release range holds the installed
    vllm-ascend: `--block-size` with prefix caching (refused in 0.7.3, replaced by 128 from 0.9.0rc1), prefix
    caching or chunked prefill on the V0 engine (#133), the Ascend scheduler with another `--scheduling-policy` or
    with `--max-num-batched-tokens` below the model length, torchair with `--enforce-eager`, Qwen3-Next with prefix
    caching or, on 0.11.x, with ACL graphs (#5005), a checkpoint quantized in a format the release does not run
    (AWQ, GPTQ, MXFP4; FP8 before 0.21.0rc1; #7131) or does not run on this host's chips (rows with `families`:
    FP8 on A2/A3/310P in 0.21.0rc1-0.26.0rc1 and DeepSeek-V4's native or MXFP8 weights in every release, Ascend 950
    kernels only, #12675; from 0.27.1rc1 FP8 without block scales is refused and block-wise FP8 is converted to BF16
    on A2/A3, twice the memory: a warning), LoRA on the releases without it (0.7.3 V1, 0.8.x V1, the
    0.8.4rc1 wheel without `vllm_ascend.lora`, 0.10.2rc1, `--fully-sharded-loras` with TP > 1 before 0.17.0rc1,
    expert parallelism on 0.23-0.24), Qwen3-Next without triton-ascend (its tutorials' required step from
    0.10.2rc1), FlashComm with a VL model (0.11.0rc2-0.13.0rc1, 0.14.0rc1), the engine itself: with
    VLLM_USE_V1 unset, vLLM 0.8.0-0.9.1 run V0 on NPU (vllm-ascend 0.8.4rc1-0.9.1; 0.9.1 does not support V0 at
    all, vllm-ascend#1305), and a subpackage the release's own wheel leaves out where the deployment imports it
    (0.9.0rc1 `vllm_ascend.compilation` under V1 graphs, #1156; 0.13.0rc3 `vllm_ascend.models.layer`;
    0.19.1rc1 with the model runner v2: a warning, since the official images' editable install has them).

    Why it matters: each of these stops the start after the model has loaded, fails the first request that hits
    the cache, or changes what the user asked for without saying so (vllm-ascend#7563: `--block-size 16` ran as
    128). The rules changed release by release, so the same command line works on one image and fails on the next.

    How to fix: the message names the rule, vllm-ascend's own words and the change: drop or change the flag, or
    move to the release the row names.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    dist, out = ascend_release(ctx, T("the release rules"))
    if out:
        return out
    rules = rules_for(ctx.knowledge.release_rules, dist.version)
    env, model = _env(ctx, cmd), _model(ctx)
    fams = host_families(ctx) or {}  # npu-smi's; a paste without its table: the family its image's suffix names
    hits, unjudged, unchipped, unseen, evidence = [], [], [], {}, [ev(T("command line"), cmd.display)]
    for rule in rules:
        if rule.families and set(fams) - {"?"} and not set(fams) & set(rule.families):
            continue  # a rule of other chips than this host's (known) ones
        try:
            said = answer(rule, cmd, env, model)
            if said is not None and said[0] and rule.missing_package:
                said = _without(ctx, rule.missing_package, said)
            if said is not None and said[0] and rule.wheel_only:
                said = _from_wheel(ctx, said)
        except FactUnavailable as exc:  # a variable or package its source does not show: this rule only
            unseen[rule.id] = exc.reason
            ctx.unread.setdefault(exc.fact, exc.reason)
            continue
        if said is None:
            unjudged.append(rule.id)
            continue
        hit, fields, seen = said
        if hit and rule.families:  # a rule of some chips only: this host's must be known and among them
            chips = {f: names for f, names in fams.items() if f in rule.families}
            if not set(fams) - {"?"}:
                unchipped.append(rule.id)
            if not chips:
                continue
            fields = {**fields, "chips": ", ".join(f"{f} ({', '.join(sorted(set(n)))})" if n else f
                                                   for f, n in chips.items())}
        if hit:
            says = rule.says.format(**fields) if fields else rule.says
            hits.append((rule, says))
            evidence.append(ev(f"{rule.id} (vllm-ascend {rule.vllm_ascend})", f"{seen}\n{says}\n{rule.source[0]}",
                               ok=False))
    if hits:
        parts = [T("{rule}: vllm-ascend {version} {effect} — \"{says}\"", rule=r.id, version=dist.version,
                   effect=EFFECT[r.effect], says=says) + (WHEEL if r.wheel_only else "") for r, says in hits]
        fix = join(" ", [known(r.fix) for r, _ in hits])
        # what a report contradicts only warns; so does what only a wheel install meets (the install's kind is not
        # known here: an editable one was ruled out above)
        if all(r.effect in ("overrides", "may_hang") or r.wheel_only for r, _ in hits):
            return ctx.warn(join("; ", parts), evidence, remediation=fix)
        return ctx.fail(join("; ", parts), evidence, remediation=fix)
    if unchipped:
        only = dict.fromkeys(f for r in rules if r.id in unchipped for f in r.families)  # in the rows' order
        return ctx.unknown(T("rule(s) {rules} of vllm-ascend {version} hold on {fams} only, and which NPUs this host "
                             "has is not known (npu-smi gave no table)", rules=", ".join(unchipped),
                             version=dist.version, fams="/".join(only)), evidence)
    if unjudged:
        return ctx.unknown(T("rule(s) {rules} of vllm-ascend {version} need the model's config.json, which is not "
                             "readable here", rules=", ".join(unjudged), version=dist.version), evidence)
    if unseen:
        return ctx.unknown(T("rule(s) {rules} of vllm-ascend {version} read what is not shown here: {why}",
                             rules=", ".join(unseen), version=dist.version,
                             why="; ".join(dict.fromkeys(unseen.values()))), evidence)
    return ctx.ok(T("none of the {n} rule(s) for vllm-ascend {version} applies to this command",
                    n=len(rules), version=dist.version), evidence)
