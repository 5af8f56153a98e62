"""What the SERVE checks (checks/serve_*.py and the HW checks of a command) share: the command line, the served
model's config, the NPUs a server sees. A module of checks/ whose name starts with `_` is a family helper: the
registry loads it first, from source, into the same package, so a check imports it with `from ._serve import …`."""

from __future__ import annotations

from typing import Any, Optional

from ascend_doctor.core.evaluator import ev
from ascend_doctor.deploy.arch import derived_max_len, text_config
from ascend_doctor.i18n import T
from ascend_doctor.text.jsonread import loads

SKIP_NO_CMD = T("no vllm serve command to lint (use `ascend-doctor exec -- vllm serve …`)")
CMD_NEEDS = ["serve_cmd"]


def cmd_or_skip(ctx):
    """(serve_cmd, None) or (None, skip outcome)."""
    cmd = ctx.try_fact("serve_cmd")
    if cmd is None:
        return None, ctx.skip(SKIP_NO_CMD)
    if not cmd.recognized:
        return None, ctx.skip(T("not a vllm serve / api_server command line: nothing to lint"))
    return cmd, None


def cmd_evidence(cmd) -> Any:
    return ev(T("command line"), cmd.display)


def vllm_version(ctx) -> Optional[str]:
    files = ctx.try_fact("vllm_files")
    if files is not None and files.vllm_version:
        return files.vllm_version
    py = ctx.try_fact("python")
    d = py.vllm_dist() if py is not None else None
    return d.version if d else None


def stack_text(ctx) -> str:
    py = ctx.try_fact("python")
    parts = []
    for name in ("vllm", "vllm-ascend"):
        d = py.dist(name) if py is not None else None
        if d is not None:
            parts.append(f"{name} {d.version}")
    return ", ".join(parts) or "vLLM (version unknown)"



# Model directory -----------------------------------------------------------------------------------------------
def unreadable(m):
    """Why the served model cannot be read here, or None when its config.json was read — the one cause every check
    that needs the model names (as `cause=` and inside its message), so their unknowns are shown once, grouped, not
    a dozen near-identical times (#40 item 16)."""
    if m is None:
        return T("the served model was not looked at")
    if m.path is None or (m.config is None and m.why_not and not m.config_error):
        return T("model {model} not readable on this machine: {why_not}", model=m.model, why_not=m.why_not)
    if m.config is None:
        return T("config.json of {path} cannot be read: {config_error}", path=m.path, config_error=m.config_error)
    return None


def model_or_outcome(ctx):
    """(cmd, model fact, None) or (.., .., outcome to return)."""
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return None, None, skip
    m = ctx.fact("serve_model")
    if m.path is None:
        why = unreadable(m)
        return cmd, m, ctx.unknown(T("{cause}", cause=why), cause=why)
    return cmd, m, None


def config_unknown(ctx, m, evidence=()):
    """The `unknown` of a check that needs the served model's config.json and could not read it."""
    why = unreadable(m)
    return ctx.unknown(T("{cause}", cause=why), evidence, cause=why)


def model_config(ctx, m) -> dict:
    """config.json with --hf-overrides merged (vLLM applies them before validating)."""
    cfg = dict(m.config or {})
    cmd = ctx.try_fact("serve_cmd")
    ov = cmd.get("hf_overrides") if cmd is not None else None
    if isinstance(ov, str):
        try:
            ov = loads(ov)
        except ValueError:
            ov = None
    if isinstance(ov, dict):
        cfg.update(ov)
    return cfg




def json_option(ctx, cmd, name: str):
    """(value, evidence, None) for a JSON-object option, or (None, evidence, outcome): skip when the option is not
    given, fail (with the parser's own words) when vLLM could not read it — the same start for every check of one."""
    flag = "--" + name.replace("_", "-")
    if not cmd.has(name):
        return None, [], ctx.skip(T("{option} is not given", option=flag))
    evidence = [ev(T("command line"), cmd.source(name))]
    if cmd.is_cut(name):
        return None, evidence, ctx.unknown(T("{option} is given, but the text elides its value or ends inside it: "
                                             "not read", option=flag), evidence)
    value, err = cmd.json_value(name)
    if err:
        return None, evidence, ctx.fail(T("{option} is not a JSON object vLLM can read: {error}", option=flag,
                                          error=err), evidence,
                                        remediation=T("Quote the JSON for the shell: `{option} '{{\"key\": value}}'`.",
                                                      option=flag))
    return value, evidence, None


def kv_connectors(kv: dict) -> list[tuple[str, str]]:
    """(json path, name) of each KV connector a --kv-transfer-config object names: its `kv_connector` and each
    MultiConnector member's; one loaded from `kv_connector_module_path` is the user's own, not a release's name."""
    out = []
    if kv.get("kv_connector_module_path"):
        return out
    if isinstance(kv.get("kv_connector"), str):
        out.append(("kv_connector", kv["kv_connector"]))
    extra = kv.get("kv_connector_extra_config")
    subs = extra.get("connectors") if isinstance(extra, dict) else None
    for i, sub in enumerate(subs if isinstance(subs, list) else []):
        if isinstance(sub, dict) and isinstance(sub.get("kv_connector"), str) \
                and not sub.get("kv_connector_module_path"):
            out.append((f"kv_connector_extra_config.connectors[{i}].kv_connector", sub["kv_connector"]))
    return out


def int_opt(cmd, name: str, default: int) -> int:
    v = cmd.int_opt(name)
    return default if v is None else v


def ranks_here(cmd) -> tuple[int, int, int, int, int, str]:
    """(ranks on this node, TP, PP, local DP, nodes, the shape as words): one worker process per rank. One process
    per DP rank (`--data-parallel-rank`, vLLM's external load-balancer mode) serves one rank here; over `--nnodes`
    without `--data-parallel-size-local` the ranks are shared evenly. A size that is not an integer raises
    ValueError."""
    import math

    tp = int_opt(cmd, "tensor_parallel_size", 1)
    pp = int_opt(cmd, "pipeline_parallel_size", 1)
    dp = cmd.int_opt("data_parallel_size_local") or (1 if cmd.has("data_parallel_rank") else
                                                      int_opt(cmd, "data_parallel_size", 1))
    nnodes = int_opt(cmd, "nnodes", 1)
    total = tp * pp * dp
    here = math.ceil(total / nnodes) if nnodes > 1 and not cmd.has("data_parallel_size_local") else total
    shape = f"TP {tp} x PP {pp}" + (f" x DP {dp}" if dp > 1 else "") + (f" over {nnodes} nodes" if nnodes > 1 else "")
    return here, tp, pp, dp, nnodes, shape


def sp_layout(cmd):
    """(--enable-expert-parallel given, TP size) for the sequence-parallel switches that depend on them
    (ascend_doctor.knowledge.sequence_parallel), None when the TP size is not a number."""
    try:
        return bool(cmd.flag("enable_expert_parallel")), int_opt(cmd, "tensor_parallel_size", 1)
    except ValueError:
        return None


def visible_npus(ctx, cmd):
    """(logical device list [chip], evidence list, note) or (None, evidence, why): the npu-smi chips the server
    will use, by the one rule of ascend_doctor.facts.scope (container device nodes, then ASCEND_RT_VISIBLE_DEVICES)."""
    from ascend_doctor.facts.scope import used_chips

    smi = ctx.try_fact("npu_smi")
    evidence = []
    if smi is None or not smi.usable:
        return None, evidence, T("npu-smi gave no device table: {reason}", reason=smi.reason() if smi is not None
                                 else T("the npu_smi fact is unavailable"))
    evidence.append(ev("cmd: npu-smi info", f"{len(smi.info.chips)} chip(s): "
                                            + ", ".join(f"NPU {c.npu_id} chip {c.chip_id}" for c in smi.info.chips)))
    chips, how = used_chips(ctx.fact("server_env"), smi, ctx.try_fact("devices"))
    evidence.extend(ev(T("scope"), line) for line in how)
    return chips, evidence, ""


def installed_names(ctx, attr: str, kind: Optional[str]):
    """(set of names or None, evidence source, note) from the installed files, else the matrix (kind given)."""
    files = ctx.try_fact("vllm_files")
    nl = getattr(files, attr) if files is not None else None
    if nl is not None and nl.ok:
        return set(nl.names), f"file: {nl.source}", ""
    why = nl.why_not if nl is not None else "the installed vLLM files could not be read"
    version = vllm_version(ctx)
    if kind and version:
        names = ctx.matrix.parsers_in_vllm(version, kind)
        if names is not None:
            return set(names), f"matrix: vLLM {version} ({kind} table)", f"installed files not read ({why})"
        return None, "", f"{why}; the matrix has no complete {kind} list for vLLM {version}"
    return None, "", why if version or not kind else f"{why}; vLLM is not installed in the serving python"


def ascend_release(ctx, rules):
    """(the serving python's vllm-ascend distribution, None), or (None, outcome): skip when it is not installed,
    unknown when its version cannot be compared with `rules` (a phrase: T("the release rules"))."""
    from ascend_doctor.text.versions import try_parse_version

    dist = ctx.fact("python").dist("vllm-ascend")
    if dist is None:
        return None, ctx.skip(T("vllm-ascend is not installed in the serving python: {rules} do not apply",
                                rules=rules))
    if try_parse_version(dist.version) is None:
        return None, ctx.unknown(T("vllm-ascend {version}: not a version {rules} can be compared with",
                                   version=dist.version, rules=rules))
    return dist, None


def serving_versions(ctx) -> dict:
    """The installed vLLM and vllm-ascend versions of the serving python ({project: version or None})."""
    py = ctx.try_fact("python")
    versions = {}
    for project in ("vllm", "vllm-ascend"):
        d = py.dist(project) if py is not None else None
        versions[project] = d.version if d is not None else None
    return versions


def paired_of(ctx):
    """The recorded vllm-ascend release whose rows stand for the installed development build (the release pairing
    its vLLM: ascend_doctor.knowledge.release_names.paired_release), or None — for every release table."""
    from ascend_doctor.knowledge.release_names import paired_release

    versions = serving_versions(ctx)
    return paired_release(versions["vllm-ascend"], versions["vllm"], ctx.knowledge.matrix)


def stand_in_for(ctx, version: Optional[str]) -> Optional[str]:
    """The recorded release whose rows stand for an installed development build (paired_of), None for a release.
    vLLM is read only for a development build, the one case its version decides: a paste that lists vllm-ascend
    alone is judged on a release without asking for vLLM."""
    from ascend_doctor.text.versions import try_parse_version

    v = try_parse_version(version)
    return paired_of(ctx) if v is not None and v.is_devrelease() else None


def judged_release(ctx, rules) -> tuple:
    """(the installed vllm-ascend version, the recorded release standing for it or None, None), or (None, None,
    outcome) as ascend_release gives one (not installed: skip; not a version: unknown)."""
    dist, out = ascend_release(ctx, rules)
    if out is not None:
        return None, None, out
    return dist.version, stand_in_for(ctx, dist.version), None


def fc1_switches(ctx, cmd, row) -> tuple:
    """(FlashComm1 on / off / None when not known, what each switch the release reads was seen as, an outcome when
    the command's JSON options cannot be read) — for the checks judging FlashComm1 by a `serve/sequence-parallel`
    row (ascend_doctor.knowledge.sequence_parallel)."""
    from ascend_doctor.knowledge.sequence_parallel import sequence_parallel

    additional, err = cmd.json_value("additional_config")
    comp, comp_err = cmd.json_value("compilation_config")
    if err or comp_err:
        return None, [], ctx.unknown(T("cannot read the command's switches: {error}", error=err or comp_err))
    on, seen = sequence_parallel(row, ctx.fact("server_env"), additional, (comp or {}).get("pass_config"),
                                 sp_layout(cmd))
    return on, seen, None


def stack_names(ctx):
    """The serving stack's names (ascend_doctor.knowledge.release_names.Names): the installed files' lists where
    they were read, the `serve/names-*` rows of the installed versions where not."""
    from ascend_doctor.knowledge.release_names import Names

    versions = serving_versions(ctx)
    files = ctx.try_fact("vllm_files")
    paired = paired_of(ctx)
    return Names(versions, ctx.knowledge.release_names, files.names if files is not None else None,
                 stand_in={"vllm-ascend": paired} if paired else None)


def project_label(p: str) -> str:
    """How a message names a project: vLLM, vllm-ascend."""
    return "vLLM" if p == "vllm" else p


def rejected_name(v, flag: str, path: str, kind: str) -> str:
    """What a release-names verdict (`Names.judge`) that refuses a name says: the name, the releases whose lists it is
    not in, when it was dropped or first appears, a near name, and the list."""
    from ascend_doctor.i18n import join
    from ascend_doctor.knowledge.release_names import KINDS

    every = sorted(set().union(*(x.names for x in v.lists)))
    stack = " + ".join(f"{project_label(x.project)} {x.version}" for x in v.lists)
    said = T("{flag} {path} '{name}' is not among the {what} of {stack}", flag=flag, path=path, name=v.name,
             what=KINDS[kind].what, stack=stack)
    more = []
    if v.last and v.dropped:
        more.append(T("{last} was the last release with it; {dropped} removed it", last=v.last, dropped=v.dropped)
                    + (T(" ({successor} is new in that release)", successor=v.successor) if v.successor else ""))
    if v.first:
        more.append(T("it first appears in {first}", first=v.first))
    if v.close:
        more.append(T("did you mean {close}?", close=", ".join(v.close)))
    return join("; ", [said, *more]) + T(" (has: {names})", names=", ".join(every))


def chat_templates(cmd, m) -> list:
    """The chat templates vLLM would use for the served model, in its order of preference, as (where, text):
    `--chat-template` (the file's text or the inline one), the model's chat_template.jinja/.json, then
    tokenizer_config.json's `chat_template` (SERVE205, SERVE324)."""
    out = []
    if m.chat_template_arg is not None:
        out.append((f"--chat-template {cmd.get('chat_template')}"[:200], m.chat_template_arg))
    for name, text in sorted(m.chat_template_files.items()):
        out.append((f"file: {m.path}/{name}", text))
    if m.tokenizer_chat_template:
        out.append((f"file: {m.path}/tokenizer_config.json chat_template", m.tokenizer_chat_template))
    return out


def served_length(ctx, cmd):
    """(max_model_len, how it was decided) or (None, why not): --max-model-len, else the length vLLM derives from
    config.json. Raises ValueError for a --max-model-len that is not an integer."""
    want = cmd.int_opt("max_model_len")
    if want is not None and want > 0:
        return want, f"--max-model-len {want}"
    m = ctx.try_fact("serve_model")
    if m is None or m.config is None:
        return None, unreadable(m)
    derived, base, rope = derived_max_len(text_config(model_config(ctx, m)))
    if derived is None:
        return None, T("config.json has no max_position_embeddings (or equivalent)")
    return derived, T("no --max-model-len: {derived} derived from config.json ({how})", derived=derived,
                      how=", ".join([base] + rope))
