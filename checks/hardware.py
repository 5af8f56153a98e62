"""HW checks: what vllm-ascend's documentation requires of this hardware family, read from the matrix.

The rules are data (the matrix's hardware-rules.toml, `[[serve_rule]]`, one sourced row per hardware family and range of
vllm-ascend releases): these checks only find the family (npu-smi's chip names, `ascend_doctor.knowledge.hardware`), the
installed vllm-ascend and what the command line or the environment does, and quote the row that applies. A family or
release no row covers is not judged (skip, naming what was looked for).

  HW101-103  serve stage (`ascend-doctor exec -- vllm serve …`): dtype, eager mode, flags that must be given
  HW104-105  static: packages that must not be installed, the container image
  HW106      serve stage: MLA heads per rank in graph mode
  HW107      static: the chips are hardware the release runs on at all
  HW108      serve stage: the KV cache dtype (hardware_kv.py)
  HW109      serve stage: a one-server family not deployed across nodes (hardware_nodes.py)
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.i18n import T, join, known
from ascend_doctor.plugin import check, ev, step

from ._hardware import chip_names, host_families, rules_of_kind, serve_or_skip, serve_rules, violated
from ._serve import model_config, unreadable

DTYPES = {"half": "float16", "float16": "float16", "fp16": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16",
          "float": "float32", "float32": "float32"}


def _for_quant_type(ctx, rules, evidence):
    """Keep the dtype rules that apply to this checkpoint: a rule with `quant_types` only for a checkpoint of that
    ModelSlim type (quant_model_description.json), unknown when the checkpoint cannot be read."""
    quant = [r for r in rules if r.quant_types]
    if not quant:
        return rules, evidence, None
    m = ctx.try_fact("serve_model")
    plain = [r for r in rules if not r.quant_types]
    if m is None or m.path is None:
        if plain:
            return plain, evidence, None
        why = unreadable(m)
        return [], evidence, ctx.unknown(T("{rules} apply only to {types} checkpoints, and the model directory cannot "
                                           "be read ({why})", rules=", ".join(r.id for r in quant), why=why,
                                           types=" / ".join(sorted({t for r in quant for t in r.quant_types}))),
                                         evidence, cause=why)
    kind = (m.quant_type or "").upper()
    hit = [r for r in quant if kind in r.quant_types]
    if hit:
        evidence.insert(0, ev(f"file: {m.path}/{m.quant_description_files[0]}", f"model_quant_type: {m.quant_type}"))
    kept = plain + hit
    if not kept:
        return [], evidence, ctx.skip(T("no dtype rule for this checkpoint ({kind}) on this hardware and release",
                                        kind=m.quant_type or T("not quantized")), evidence)
    return kept, evidence, None


def _effective_dtype(ctx, cmd) -> Tuple[Optional[str], str]:
    """(dtype vLLM will run in, how it was decided) — `--dtype`, or the model config's when it is auto."""
    given = cmd.get("dtype")
    if isinstance(given, str) and given.strip().lower() != "auto":
        return DTYPES.get(given.strip().lower(), given.strip().lower()), cmd.source("dtype")
    m = ctx.try_fact("serve_model")
    cfg = (m.config or {}) if m is not None else {}
    declared = cfg.get("torch_dtype") or cfg.get("dtype")
    how = ("--dtype auto" if given else "no --dtype (auto)")
    if isinstance(declared, str):
        return DTYPES.get(declared.lower(), declared.lower()), f"{how}: config.json torch_dtype {declared}"
    why = m.why_not if m is not None and m.path is None else "config.json has no torch_dtype"
    return None, f"{how}, and the model's dtype is unknown ({why})"


@check("HW101", "hw-serve-dtype", severity="error", stage="serve", needs=["serve_cmd", "serve_model", "python",
                                                                            "npu_smi", "npu_family"])
def serve_dtype(ctx):
    """The serving dtype is one this hardware supports

    What it checks: on a family the matrix has dtype rules for (Atlas 300I Duo / 310P, the first-generation 910,
    and on A2/A3 for W8A8_DYNAMIC checkpoints), the dtype vLLM will run in — `--dtype`, or with `--dtype auto` the
    `torch_dtype` of the model's config.json — against the rule for the installed vllm-ascend release.

    Why it matters: the vllm-ascend 310P tutorials say the 300I series only supports float16 (v0.10.0rc1-v0.18.0rc1,
    v0.19.1rc1: "only supports eager mode and the float16 data type"; "some ATB ops cannot support bf16 on 300I
    series"; v0.27.1rc1+: "Use float16"). A bfloat16 checkpoint served with `--dtype auto` runs in bfloat16. On
    A2/A3 the opposite holds for W8A8_DYNAMIC checkpoints: in float16 the quantized matmul refuses its scale
    (`Tensor scale not implemented for DT_FLOAT16`, error 161002, vllm-ascend#12907).

    How to fix: `--dtype float16`.
    """
    cmd, rules, evidence, out = serve_rules(ctx, "dtype")
    if out:
        return out
    rules, evidence, out = _for_quant_type(ctx, rules, evidence)
    if out:
        return out
    dtype, how = _effective_dtype(ctx, cmd)
    evidence.insert(0, ev("dtype", how))
    if dtype is None:
        return ctx.unknown(T("cannot tell the dtype vLLM will use: {how}", how=how), evidence)
    broken = [r for r in rules if dtype not in r.values]
    if not broken:
        return ctx.ok(T("dtype {dtype} ({how}) is what the {value} rules allow", dtype=dtype, how=how,
                        value=', '.join(sorted({h for r in rules for h in r.hardware}))), evidence)
    allowed = sorted({v for r in broken for v in r.values})
    hw = ", ".join(sorted({h for r in broken for h in r.hardware}))
    quant = sorted({t for r in broken for t in r.quant_types})
    if quant:
        hw = join("", [hw, T(" with a {types} checkpoint", types=" / ".join(quant))])
    return violated(ctx, broken, T("{hw} supports only {allowed} with this vllm-ascend release, but vLLM will run in "
                                 "{dtype} ({how})", hw=hw, allowed=', '.join(allowed),
                                 dtype=dtype, how=how), evidence,
                  remediation=known(broken[0].fix), dtype=dtype, allowed=allowed)


@check("HW102", "hw-serve-eager", severity="warning", stage="serve",
       needs=["serve_cmd", "python", "npu_smi", "npu_family"])
def serve_eager(ctx):
    """Eager mode is used where the hardware supports only eager mode

    What it checks: on a family and release whose documentation says "only supports eager mode" (Atlas 300I Duo
    with vllm-ascend v0.10.0rc1-v0.18.0rc1 and v0.19.1rc1), that `--enforce-eager` is given.

    Why it matters: without it vLLM captures graphs at start-up, which those releases do not support on the 310P.

    How to fix: add `--enforce-eager`.
    """
    cmd, rules, evidence, out = serve_rules(ctx, "eager")
    if out:
        return out
    evidence.insert(0, ev(T("command line"), cmd.source("enforce_eager") if cmd.has("enforce_eager")
                          else "no --enforce-eager"))
    if cmd.flag("enforce_eager"):
        return ctx.ok(T("--enforce-eager is given, as the documentation requires here"), evidence)
    hw = ", ".join(sorted({h for r in rules for h in r.hardware}))
    return violated(ctx, rules, T("{hw} supports only eager mode with this vllm-ascend release, and --enforce-eager is "
                                "not given", hw=hw), evidence, remediation=known(rules[0].fix))


def _int_flag(cmd, name: str):
    try:
        return cmd.int_opt(name)
    except ValueError:
        return None


@check("HW103", "hw-serve-required-flags", severity="warning", stage="serve",
       needs=["serve_cmd", "python", "npu_smi", "npu_family", "serve_model"])
def serve_required_flags(ctx):
    """The flags this hardware's documentation requires are given

    What it checks: flags a rule requires for the family and release, e.g. `--max-model-len` on Atlas 300I Duo with
    vllm-ascend v0.16.0rc1-v0.23.0rc1, and on A2 for a model whose derived context length (config.json, as vLLM
    derives it without the flag) is above 65536.

    Why it matters: the 310P attention path builds a full float16 `[max_model_len, max_model_len]` causal mask; left
    to auto-detection, a long context length allocates it out of NPU memory (the tutorial: "do not omit the
    --max-model-len argument, or OOM may occur"). On A2 the engine gets stuck at start-up above 65536 (vLLM PR
    #27556: `Using max model len 262144`, then nothing), and no vllm-ascend release caps the default.

    How to fix: give the flag the finding names (the 310P tutorial uses `--max-model-len 16384`; on A2 at most
    65536 for a long-context model — the A2 report is of the derived default, so a longer length given explicitly
    passes, named in the message, and the release's own tutorials are cited when they run that length).
    """
    cmd, rules, evidence, out = serve_rules(ctx, "required_flag")
    if out:
        return out
    missing = [r for r in rules if not cmd.has(r.flag.lstrip("-").replace("-", "_"))]
    length, how = _derived_len(ctx)
    long_ = [r for r in missing if r.above_model_len and length is not None and length > r.above_model_len]
    unjudged = [r for r in missing if r.above_model_len and length is None]
    missing = [r for r in missing if not r.above_model_len] + long_
    if long_:
        evidence.insert(0, ev(T("derived context length"), how))
    over = [(r, v) for r in rules if r.above_model_len and r.flag == "--max-model-len"
            for v in [_int_flag(cmd, "max_model_len")] if v is not None and v > r.above_model_len]
    if not missing and over:  # given, but longer than the documented start-up limit
        r, v = over[0]
        evidence.insert(0, ev(T("command line"), cmd.source("max_model_len")))
        shown, where, release = _tutorial_length(ctx, r.hardware)
        if shown >= v:  # the rule and the release's own tutorials disagree: the release's documented run stands
            evidence.append(ev(T("the release's tutorials"), f"{shown} {where}"))
            return ctx.ok(T("--max-model-len {value} is above the {limit} of {rule} ({says}), but vllm-ascend "
                            "{release}'s own tutorials run {shown} on {hw} ({where}): a length the release documents",
                            value=v, limit=r.above_model_len, rule=r.id, says=r.says, release=release, shown=shown,
                            hw=", ".join(r.hardware), where=where), evidence)
        # The rule's one report is of the derived default (no --max-model-len; h38g: a stack ran an explicit longer
        # length): a length the user chose is theirs, named here, not warned.
        return ctx.ok(T("--max-model-len {value} is given explicitly, above the {limit} of {rule} on {hw} ({says}); "
                        "that report is of the derived default, and an explicit length is not judged by it",
                        value=v, limit=r.above_model_len, rule=r.id, hw=", ".join(r.hardware), says=r.says), evidence)
    if not missing:
        if unjudged:
            return ctx.unknown(T("{flags} not given, and whether the model needs it ({rules}: above a context "
                                 "length of {limit}) is not known: {how}", flags=unjudged[0].flag,
                                 rules=", ".join(r.id for r in unjudged), limit=unjudged[0].above_model_len, how=how),
                               evidence, cause=unreadable(ctx.try_fact("serve_model")))
        short = [r for r in rules if r.above_model_len and not cmd.has(r.flag.lstrip("-").replace("-", "_"))]
        if short:  # the flag is required only above a length this model does not reach
            return ctx.ok(T("{flag} not given, and not needed: the model's context length {how} is within the "
                            "{limit} of {rules}", flag=short[0].flag, how=how, limit=short[0].above_model_len,
                            rules=", ".join(r.id for r in short)), evidence)
        return ctx.ok(T("{value} given", value=', '.join(sorted({r.flag for r in rules}))), evidence)
    flags = ", ".join(sorted({r.flag for r in missing}))
    hw = ", ".join(sorted({h for r in missing for h in r.hardware}))
    if cmd.partial:  # a paste that shows part of the command: not seen is not "not given"
        return ctx.unknown(T("{flags} not seen, but the source shows only part of the command; the {hw} "
                             "documentation for this release requires it", flags=flags, hw=hw), evidence)
    text = T("{flags} not given; the {hw} documentation for this release requires it", flags=flags, hw=hw)
    if long_:
        text = T("{flags} not given, so vLLM uses the model's {how}, above the {limit} the {hw} rule allows",
                 flags=flags, how=how, limit=long_[0].above_model_len, hw=hw)
    return violated(ctx, missing, text, evidence, remediation=known(missing[0].fix),
                  missing=sorted({r.flag for r in missing}))


def _tutorial_length(ctx, hardware) -> Tuple[int, str, str]:
    """(the longest --max-model-len the installed release's own tutorials run on one of `hardware`, where, the
    release's version), or (0, "", "") — from the `serve/support-matrix` row matrix sync read from its sdist."""
    py = ctx.try_fact("python")
    va = py.dist("vllm-ascend") if py is not None else None
    if va is None:
        return 0, "", ""
    row, how = ctx.knowledge.support_matrix.row_for(va.version)
    if row is None or how != "exact":
        return 0, "", ""
    best = max((row.tutorial_length(fam) for fam in hardware), default=(0, ""))
    return best[0], best[1], row.version


def _derived_len(ctx) -> Tuple[Optional[int], str]:
    """(context length vLLM derives from the served model's config.json when --max-model-len is absent, how)."""
    from ascend_doctor.deploy.arch import derived_max_len, text_config

    m = ctx.try_fact("serve_model")
    if m is None or not m.config:
        return None, T("the model's config.json cannot be read ({why})", why=unreadable(m))
    length, key, rope = derived_max_len(text_config(model_config(ctx, m)))  # --hf-overrides applied, as vLLM does
    if length is None:
        return None, T("config.json gives no context length")
    return length, f"{length} ({', '.join([key, *rope])})"


@check("HW104", "hw-forbidden-packages", severity="error", needs=["python", "npu_smi", "npu_family"])
def forbidden_packages(ctx):
    """No package this hardware's documentation forbids is installed

    What it checks: distributions a rule says must not be installed for the family and release, e.g. `triton` and
    `triton-ascend` on Atlas 300I Duo (a warning for vllm-ascend v0.17.0rc1-v0.18.0, whose -310p images ship
    triton-ascend; an error from v0.19.1rc1, whose images remove it).

    Why it matters: "Atlas 300I DUO does not support triton or triton-ascend", but installing vllm and vllm-ascend
    from source pulls both in, "which may cause unexpected issues" (vllm-ascend 310P tutorial; release notes v0.23.0).

    How to fix: `pip uninstall -y triton triton-ascend`, then remove any leftover site-packages/triton directory.
    """
    py = ctx.fact("python")
    anywhere = sorted({v for r in ctx.matrix.serve_rules if r.kind == "forbidden_package" for v in r.values})
    if not any(py.listed(name) is not None for name in anywhere) and not any(  # one installed is enough to judge
            py.dist(name) is not None for name in anywhere):
        return ctx.ok(T("none of {anywhere} is installed (no hardware rule can apply)", anywhere=', '.join(anywhere)),
                      [ev(f"installed in {py.executable}", "none of: " + ", ".join(anywhere))])
    rules, evidence, out = rules_of_kind(ctx, "forbidden_package")
    if out:
        return out
    found: List[str] = []
    unseen = None  # a package a partial list cannot place: judged only when no other one is installed
    for r in rules:
        for name in r.values:
            try:
                d = py.dist(name)
            except FactUnavailable as exc:
                unseen = unseen or exc
                continue
            if d is not None:
                found.append(f"{d.name} {d.version}")
    if not found and unseen is not None:
        raise unseen
    evidence.insert(0, ev(f"installed in {py.executable}", ", ".join(found) or "none of: " + ", ".join(
        sorted({v for r in rules for v in r.values}))))
    if not found:
        return ctx.ok(T("none of {value} is installed", value=', '.join(sorted({v for r in rules for v in r.values}))),
                      evidence)
    hw = ", ".join(sorted({h for r in rules for h in r.hardware}))
    return violated(ctx, rules, T("{set} installed, which {hw} does not support", set=', '.join(sorted(set(found))),
                                hw=hw), evidence,
                  remediation=known(rules[0].fix), installed=sorted(set(found)), fix=_removals(ctx, py, rules))


def _removals(ctx, py, rules) -> list:
    """One pip-remove step per rule, for the family of this host it covers (the renderer checks the rule again)."""
    told = ctx.try_fact("npu_family")  # npu-smi's, or the family a pasted image's suffix names
    fams = told.families if told is not None else {}
    va = py.dist("vllm-ascend")
    out = []
    for r in rules:
        fam = next((f for f in sorted(fams) if f in r.hardware), None)
        there = [py.listed(n) for n in r.values if py.listed(n) is not None]
        if fam and va and there:
            out.append(step("pip-remove", rule=r.id, family=fam, vllm_ascend=va.version,
                            packages=[d.name for d in there], was={d.name: d.version for d in there}))
    return out


@check("HW105", "hw-container-image", severity="warning",
       needs=["python", "npu_smi", "npu_family", "container"])
def container_image(ctx):
    """Inside a container, the vllm-ascend image is the one built for this hardware

    What it checks: when the container runtime says which image runs (podman's /run/.containerenv), that a
    quay.io/ascend/vllm-ascend image on an Atlas 300I Duo host has the `-310p` tag suffix.

    Why it matters: the untagged vllm-ascend image is built for A2 (910B); the 300I Duo needs the `-310p` build
    (the vllm-ascend 310P tutorials and quick start).

    How to fix: run quay.io/ascend/vllm-ascend:v<version>-310p (or -310p-openeuler).
    """
    ctr = ctx.try_fact("container")
    if ctr is None or not ctr.in_container:
        return ctx.skip(T("not in a container"))
    rules, evidence, out = rules_of_kind(ctx, "image_suffix")
    if out:
        return out
    image = getattr(ctr, "image", None)
    if not image:
        return ctx.unknown(T("the container runtime ({runtime}) does not say which image runs (docker does not expose "
                             "it inside the container)", runtime=ctr.runtime or 'unknown'), evidence)
    evidence.insert(0, ev(T("container image"), image))
    if "vllm-ascend" not in image:
        return ctx.skip(T("{image} is not a vllm-ascend image: its build is not judged", image=image), evidence)
    suffixes = sorted({v for r in rules for v in r.values})
    if any(image.split("@")[0].endswith(s) for s in suffixes):
        return ctx.ok(T("{image} is the {suffixes} build", image=image, suffixes=', '.join(suffixes)), evidence)
    hw = ", ".join(sorted({h for r in rules for h in r.hardware}))
    return violated(ctx, rules, T("{image} is not the {hw} build (tag suffix {suffixes})", image=image, hw=hw,
                                suffixes=' / '.join(suffixes)), evidence,
                  remediation=known(rules[0].fix), image=image)


@check("HW106", "hw-mla-graph-heads", severity="warning", stage="serve", needs=["serve_cmd", "serve_model", "python",
                                                                               "npu_smi", "npu_family"])
def mla_graph_heads(ctx):
    """An MLA model in graph mode keeps a head count per TP rank the NPU kernel accepts

    What it checks: for a model with Multi-Head Latent Attention (DeepSeek-V2/V3/R1, Kimi-K2: `kv_lora_rank` in
    config.json) served with graph capture on, `num_attention_heads` / `--tensor-parallel-size` against the values
    the vllm-ascend FAQ gives (32, 64 or 128; matrix rule HW-MLA-001).

    Why it matters: the capture stops with `EZ9999: … numHeads / numKvHeads = 8, MLA only support {32, 64, 128}.
    [FUNC:CheckMlaAttrs]` (FAQ 13: DeepSeek-V3 at TP 16); DeepSeek-V2-Lite's 16 heads are refused at any TP
    (vllm-ascend#1451, PR #933). The FAQ has said so from v0.9.0rc2 on, but it dates from the torchair graph mode
    and was not revised for ACL graph: a warning of medium confidence.

    How to fix: a TP size that leaves 32, 64 or 128 heads per rank (DeepSeek-V3/R1: TP 1, 2 or 4 — with
    data/pipeline parallelism for the rest), or `--enforce-eager`.
    """
    from ascend_doctor.deploy.arch import read_architecture

    cmd, skip = serve_or_skip(ctx)
    if skip:
        return skip
    m = ctx.try_fact("serve_model")
    if m is None or m.config is None:
        why = unreadable(m)
        return ctx.unknown(T("the model's config.json cannot be read: {why}", why=why), cause=why)
    arch = read_architecture(m.config)
    if arch.attention != "mla":
        return ctx.skip(T("{path} does not use MLA attention", path=m.path))
    graph, how = cmd.graph_capture()
    if not graph:
        return ctx.skip(T("graph capture is off ({how})", how=how))
    rules, evidence, out = rules_of_kind(ctx, "mla_graph_heads")
    if out:
        return out
    try:
        tp = cmd.int_opt("tensor_parallel_size") or 1
    except ValueError:
        return ctx.unknown(T("--tensor-parallel-size is not an integer"), evidence)
    per_rank = arch.heads // tp if tp and arch.heads % tp == 0 else None
    evidence.insert(0, ev(f"file: {m.path}/config.json", f"num_attention_heads: {arch.heads}, kv_lora_rank (MLA)"))
    evidence.insert(1, ev(T("command line"), f"TP {tp}; {how}"))
    if per_rank is None:
        return ctx.skip(T("TP {tp} does not divide {heads} heads (SERVE302)", tp=tp, heads=arch.heads), evidence)
    broken = [r for r in rules if str(per_rank) not in r.values]
    if not broken:
        return ctx.ok(T("{heads} heads / TP {tp} = {per_rank} per rank, which MLA graph mode accepts",
                        heads=arch.heads, tp=tp, per_rank=per_rank), evidence)
    fits = [t for t in (1, 2, 4, 8, 16, 32) if arch.heads % t == 0 and str(arch.heads // t) in broken[0].values]
    return violated(ctx, broken, T("{heads} heads / TP {tp} = {per_rank} per rank, but the vllm-ascend FAQ says MLA "
                                 "with graph mode accepts only {allowed} (the capture stops with `MLA only support "
                                 "{{32, 64, 128}}`)",
                                 heads=arch.heads, tp=tp, per_rank=per_rank, allowed=", ".join(broken[0].values)),
                  evidence, remediation=T("Use {fits}, or add `--enforce-eager`.", fits=T("TP {tps}", tps=" or ".join(
                      str(t) for t in fits)) if fits else T("no TP size (this model needs eager mode)")),
                  per_rank=per_rank)


@check("HW107", "hw-chip-supported", severity="error", needs=["python", "npu_smi", "npu_family"])
def chip_supported(ctx):
    """Every NPU is a chip the installed vllm-ascend release runs on

    What it checks: each chip npu-smi lists, by family (`ascend_doctor.knowledge.hardware`): against the rows of
    the matrix's hardware-rules.toml that say a family does not run a release (`kind = "unsupported"`: the
    first-generation Ascend 910 — 910A, 910ProB, 910PremiumA — on every release; the Ascend 950 before v0.21.0rc1;
    a warning for the 300I Duo on v0.11.0rc1-0.13.0, whose own 310P guide says to use v0.10.0rc1 first), then
    against the hardware the release's row in the matrix's vllm-ascend.toml names (its documentation and images).

    Why it matters: on a chip the release was not built for, vLLM starts, loads the platform plugin and then stops:
    `ValueError: Unsupported soc_version: AscendSocVersion.UNDEFINED` (vllm-ascend#2795), `WorkerProc failed to start`
    (#13540, a 910PremiumA), or kernels that the chip's CANN package does not have (#573).

    How to fix: the message names the rule: serve on supported hardware, or install the release (and its image
    variant: -310p, -a3, -a5) that names this chip.
    """
    rules, evidence, out = rules_of_kind(ctx, "unsupported")
    if rules:
        fams = host_families(ctx) or {}
        chips = sorted({c for fam in {h for r in rules for h in r.hardware} for c in chip_names(fams, fam)})
        version = ctx.fact("python").dist("vllm-ascend").version
        if any(r.severity in ("critical", "error") for r in rules):
            said = T("vllm-ascend {version} does not run on {chips}", version=version, chips=", ".join(chips))
        else:  # a warning row: the release's own words say why it is doubtful there
            said = T("vllm-ascend {version} on {chips}: {says}", version=version, chips=", ".join(chips),
                     says=" / ".join(r.says for r in rules))
        return violated(ctx, rules, said, evidence, remediation=known(rules[0].fix))
    va = ctx.fact("python").dist("vllm-ascend")
    if not evidence or va is None:
        return out  # no npu-smi chip table (unknown), or no vllm-ascend to judge (skip)
    fams = host_families(ctx) or {}
    if "?" in fams:
        return ctx.unknown(T("chip name(s) {names} are no vllm-ascend hardware family the doctor knows",
                             names=", ".join(sorted(set(fams["?"])))), evidence)
    row = ctx.matrix.vllm_ascend_release(va.version)
    if row is None:
        return ctx.unknown(T("vllm-ascend {version} is not in the compatibility matrix: which hardware it names is not "
                             "known", version=va.version), evidence)
    named = [f for f in sorted(fams) if f not in row.hardware]
    if named:
        return ctx.warn(T("vllm-ascend {version} names {listed} in its documentation and images, not {named} "
                          "({chips}): this release does not claim to run there", version=va.version,
                          listed=", ".join(row.hardware), named=", ".join(named),
                          chips=", ".join(c for f in named for c in sorted(set(chip_names(fams, f))))), evidence,
                        remediation=T("Install a release whose row names {named}: `ascend-doctor matrix show` lists "
                                      "the hardware of each.", named=", ".join(named)))
    return ctx.ok(T("{families} run vllm-ascend {version}", families=", ".join(sorted(fams)), version=va.version),
                  evidence)
