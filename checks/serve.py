"""SERVE checks: lint one `vllm serve` command line against this machine and the INSTALLED vLLM/vllm-ascend.

They run when `ascend-doctor exec -- vllm serve …` presets the `serve_cmd` fact; under plain `ascend-doctor check`
they are skipped. Names (parsers, tokenizer modes, architectures, model types, env vars) come from the installed
packages' files read as text (`vllm_files` fact); when those files cannot be read, the matrix's per-release tables
stand in and the evidence says so.

  SERVE1xx  flags vLLM checks at start-up (parser names, tokenizer mode, auto tool choice)
  SERVE2xx  the model directory (config.json, architecture, parser family, quantization, chat template)
  SERVE3xx  sizing against the NPUs (TP x PP, attention heads, max-model-len, HBM)
  SERVE4xx  the environment the server inherits
"""

from __future__ import annotations

import difflib
import math
import re
import shlex
from typing import Any, Optional

from ascend_doctor.evaluator import ev
from ascend_doctor.i18n import T, join
from ascend_doctor.jsonread import loads
from ascend_doctor.redact import REDACTED, is_secret_name
from ascend_doctor.registry import check
from ascend_doctor.versions import try_parse_version

SKIP_NO_CMD = T("no vllm serve command to lint (use `ascend-doctor exec -- vllm serve …`)")
CMD_NEEDS = ["serve_cmd"]


def _cmd(ctx):
    """(serve_cmd, None) or (None, skip outcome)."""
    cmd = ctx.try_fact("serve_cmd")
    if cmd is None:
        return None, ctx.skip(SKIP_NO_CMD)
    if not cmd.recognized:
        return None, ctx.skip(T("not a vllm serve / api_server command line: nothing to lint"))
    return cmd, None


def _cmd_ev(cmd) -> Any:
    return ev("command line", cmd.display)


def _server_env(ctx, cmd) -> dict:
    """The environment the server will inherit: ours (or the snapshot's) plus `env K=V` on the command line."""
    env = dict(ctx.try_fact("env") or {})
    env.update(cmd.env)
    return env


def _vllm_version(ctx) -> Optional[str]:
    files = ctx.try_fact("vllm_files")
    if files is not None and files.vllm_version:
        return files.vllm_version
    py = ctx.try_fact("python")
    d = py.vllm_dist() if py is not None else None
    return d.version if d else None


def _stack(ctx) -> str:
    py = ctx.try_fact("python")
    parts = []
    for name in ("vllm", "vllm-ascend"):
        d = py.dist(name) if py is not None else None
        if d is not None:
            parts.append(f"{name} {d.version}")
    return ", ".join(parts) or "vLLM (version unknown)"


def _names(ctx, attr: str, kind: Optional[str]):
    """(set of names or None, evidence source, note) from the installed files, else the matrix (kind given)."""
    files = ctx.try_fact("vllm_files")
    nl = getattr(files, attr) if files is not None else None
    if nl is not None and nl.ok:
        return set(nl.names), f"file: {nl.source}", ""
    why = nl.why_not if nl is not None else "the installed vLLM files could not be read"
    version = _vllm_version(ctx)
    if kind and version:
        names = ctx.matrix.parsers_in_vllm(version, kind)
        if names is not None:
            return set(names), f"matrix: vLLM {version} ({kind} table)", f"installed files not read ({why})"
        return None, "", f"{why}; the matrix has no complete {kind} list for vLLM {version}"
    return None, "", why if version or not kind else f"{why}; vLLM is not installed in the serving python"


def _upgrade_hint(ctx, kind: str, name: str) -> tuple[str, Optional[str]]:
    """(sentence naming the first vLLM release with `name` and the first vllm-ascend release whose vLLM has it,
    that vllm-ascend release). The vllm-ascend release is not always a pairing of that vLLM: deepseek_v4 first
    appears in vLLM 0.20.0, which no vllm-ascend release pairs with; v0.20.2rc1 is the first that has it."""
    m = ctx.matrix
    first = m.first_vllm_release_with(kind, name)
    if not first:
        return f"no vLLM release in the matrix registers {name!r}", None
    before = m.last_vllm_release_without(kind, name)
    since = f"{name!r} first appears in vLLM {first}" + (f" (vLLM {before} does not have it)" if before else "")
    ascend = m.first_ascend_release_with(kind, name)
    if ascend is not None:
        return f"{since}; the first vllm-ascend release with it is v{ascend.version} (vLLM {ascend.vllm[0]})", \
            ascend.version
    return since, None


def _name_check(ctx, option: str, attr: str, kind: str, plugin_option: str):
    cmd, skip = _cmd(ctx)
    if skip:
        return skip
    flag = "--" + option.replace("_", "-")
    name = cmd.get(option)
    if not isinstance(name, str) or not name:
        return ctx.skip(T("{flag} not given", flag=flag))
    names, source, note = _names(ctx, attr, kind)
    evidence = [ev("command line", cmd.source(option))]
    if names is None:
        return ctx.unknown(T("cannot tell which {flag} values the installed vLLM accepts: {note}", flag=flag,
                             note=note), evidence)
    evidence.append(ev(source, ", ".join(sorted(names)) + (f"\n({note})" if note else "")))
    if name in names:
        return ctx.ok(T("{flag} {name} is registered in the installed {stack}", flag=flag, name=name,
                        stack=_stack(ctx)), evidence)
    hint, ascend = _upgrade_hint(ctx, kind, name)
    close = difflib.get_close_matches(name, sorted(names), n=3, cutoff=0.6)
    version = _vllm_version(ctx)
    first = ctx.matrix.first_vllm_release_with(kind, name)
    newer = (first and version and try_parse_version(first) and try_parse_version(version)
             and try_parse_version(first) > try_parse_version(version))
    msg = T("{flag} {name} is not registered in the installed {stack}: vLLM will refuse to start", flag=flag,
            name=name, stack=_stack(ctx))
    if newer:
        msg += f"; {hint}"
    if cmd.has(plugin_option):
        return ctx.warn(msg + f" unless --{plugin_option.replace('_', '-')} registers it", evidence)
    fixes = []
    if newer:
        row = ctx.matrix.vllm_ascend_release(ascend) if ascend else None
        target = f"vllm-ascend v{ascend} (vLLM {row.vllm[0]})" if row else f"vLLM {first}"
        fixes.append(T("upgrade the serving stack to {target} or newer (e.g. image "
                       "quay.io/ascend/vllm-ascend:v{ascend})", target=target, ascend=ascend) if ascend else T("upgrade the serving stack to {target} or newer", target=target))
    if close:
        fixes.append(T("or use a name this vLLM has: {close}", close=', '.join(close)))
    elif not newer:
        fixes.append(T("use one of: {names}", names=', '.join(sorted(names))))
    rem = join("; ", fixes)
    return ctx.fail(msg, evidence, remediation=(rem[:1].upper() + rem[1:] + ".") if rem else None,
                    missing=name, first_vllm=first, vllm_ascend=ascend)


@check("SERVE101", "serve-tool-parser-known", severity="error", stage="serve",
       needs=["serve_cmd", "vllm_files", "python"])
def tool_parser_known(ctx):
    """The --tool-call-parser exists in the installed vLLM

    What it checks: the `--tool-call-parser` name against the parsers the installed vLLM registers
    (`_TOOL_PARSERS_TO_REGISTER` in vllm/tool_parsers/__init__.py from 0.13.0; `@ToolParserManager.register_module`
    in vllm/entrypoints/openai/tool_parsers/*.py before), read as text; the matrix's per-release table when the files
    are not readable.

    Why it matters: an unknown name stops vLLM at start-up with `KeyError: invalid tool call parser: <name>`. The
    classic case is `deepseek_v4` on a vllm-ascend v0.13.0rc3 image (vLLM 0.13.0): the parser exists from vLLM
    0.20.0, first paired in vllm-ascend v0.20.2rc1 (vllm-ascend#8875).

    How to fix: Upgrade to the vllm-ascend release the finding names (its vLLM registers the parser), or pick a
    parser the installed vLLM has; a parser plugin file can be loaded with `--tool-parser-plugin FILE`.
    """
    return _name_check(ctx, "tool_call_parser", "tool_parsers", "tool_parser", "tool_parser_plugin")


@check("SERVE102", "serve-reasoning-parser-known", severity="error", stage="serve",
       needs=["serve_cmd", "vllm_files", "python"])
def reasoning_parser_known(ctx):
    """The --reasoning-parser exists in the installed vLLM

    What it checks: the `--reasoning-parser` name against `_REASONING_PARSERS_TO_REGISTER` in
    vllm/reasoning/__init__.py (or the `@ReasoningParserManager.register_module` decorators of older releases).

    Why it matters: vLLM refuses to start with an unknown reasoning parser; `deepseek_v4` needs vLLM 0.20.0+
    (vllm-ascend v0.20.2rc1+).

    How to fix: Upgrade to the vllm-ascend release the finding names, or use a reasoning parser the installed vLLM
    has (`deepseek_r1`, `deepseek_v3`, `qwen3`, …); plugins load with `--reasoning-parser-plugin FILE`.
    """
    return _name_check(ctx, "reasoning_parser", "reasoning_parsers", "reasoning_parser", "reasoning_parser_plugin")


@check("SERVE103", "serve-tokenizer-mode-known", severity="error", stage="serve",
       needs=["serve_cmd", "vllm_files", "python"])
def tokenizer_mode_known(ctx):
    """The --tokenizer-mode exists in the installed vLLM

    What it checks: `--tokenizer-mode` against the `TokenizerMode` Literal of vllm/config/model.py (vllm/config.py
    in older releases).

    Why it matters: vLLM rejects an unknown mode (argparse choices before 0.12; `No tokenizer registered for
    tokenizer_mode=…` after). DeepSeek-V3.2 / V4 need their own modes (`deepseek_v32` from vLLM 0.13.0,
    `deepseek_v4` from 0.20.0) because they ship no Jinja chat template. From 0.13.0 vLLM also accepts the
    modes of its tokenizer registry (vllm/tokenizers/registry.py), e.g. `kimi_audio`, `deepseek_v41`.

    How to fix: Upgrade to the release the finding names, or drop `--tokenizer-mode` to use `auto`.
    """
    return _name_check(ctx, "tokenizer_mode", "tokenizer_modes", "tokenizer_mode", "tokenizer_mode_plugin")


@check("SERVE104", "serve-auto-tool-choice", severity="error", stage="serve", needs=CMD_NEEDS)
def auto_tool_choice(ctx):
    """--enable-auto-tool-choice and --tool-call-parser are given together

    What it checks: that the two flags appear together on the command line (or in --config).

    Why it matters: `--enable-auto-tool-choice` without a parser stops vLLM at start-up with `TypeError: Error:
    --enable-auto-tool-choice requires --tool-call-parser`. A parser without `--enable-auto-tool-choice` starts, but
    every request with `tool_choice: "auto"` — the OpenAI SDK default when `tools` are sent — fails with `"auto"
    tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`.

    How to fix: Pass both: `--enable-auto-tool-choice --tool-call-parser <parser of the model>`.
    """
    cmd, skip = _cmd(ctx)
    if skip:
        return skip
    auto = cmd.flag("enable_auto_tool_choice")
    parser = cmd.get("tool_call_parser")
    evidence = [_cmd_ev(cmd)]
    if auto and not parser:
        return ctx.fail(T("--enable-auto-tool-choice without --tool-call-parser: vLLM exits at start-up with "
                          "`TypeError: Error: --enable-auto-tool-choice requires --tool-call-parser`"), evidence,
                        remediation=T("Add `--tool-call-parser <name>` for the model (e.g. hermes for Qwen, "
                                      "deepseek_v31/deepseek_v32/deepseek_v4 for DeepSeek), or drop "
                                      "--enable-auto-tool-choice."))
    if parser and not auto:
        return ctx.fail(T("--tool-call-parser {parser} without --enable-auto-tool-choice: requests with tool_choice "
                          "\"auto\" (the default when tools are sent) are refused with `\"auto\" tool choice "
                          "requires --enable-auto-tool-choice and --tool-call-parser to be set`",
                          parser=parser), evidence,
                        remediation=T("Add `--enable-auto-tool-choice` next to `--tool-call-parser {parser}`.",
                                      parser=parser))
    if not parser:
        return ctx.skip(T("tool calling is not enabled (neither flag given)"))
    return ctx.ok(T("--enable-auto-tool-choice with --tool-call-parser {parser}", parser=parser), evidence)


@check("SERVE105", "serve-options-known", severity="error", stage="serve",
       needs=["serve_cmd", "vllm_files", "serve_model", "python"])
def options_known(ctx):
    """Every option on the command line is one the installed vLLM defines

    What it checks: each `--option` (and each key of `--config FILE`) against the options the installed vLLM
    declares — the fields of EngineArgs/FrontendArgs and the `add_argument(...)` calls in vllm/engine/arg_utils.py and
    vllm/entrypoints/openai/cli_args.py — accepting unambiguous prefixes as argparse does, and naming the closest
    option for a typo. Positional words after the model are reported too.

    Why it matters: vLLM stops at once with `vllm serve: error: unrecognized arguments: --tensor-parallel-sizes 8`;
    an option from a newer release (or one that was removed, e.g. `--enable-reasoning` after 0.10) fails the same way.

    How to fix: Correct the spelling the finding suggests, or drop options the installed release does not have.
    """
    cmd, skip = _cmd(ctx)
    if skip:
        return skip
    files = ctx.try_fact("vllm_files")
    evidence = [_cmd_ev(cmd)]
    extra = [f"unexpected positional argument(s) {' '.join(cmd.unknown_args)}"] if cmd.unknown_args else []
    if cmd.config_error:
        extra.append(cmd.config_error)
    if files is not None and files.cli_options.ok:
        names = set(files.cli_options.names)
        by = "the installed vLLM"
        evidence.append(ev(f"file: {files.cli_options.source}", f"{len(names)} option names"))
    else:
        # The installed files could not be read (a replayed snapshot, a paste): the matrix records the options of
        # each vLLM release it lists (matrices/vllm-options.toml), read from that release's sdist.
        why = files.cli_options.why_not if files is not None else "installed files not read"
        py = ctx.try_fact("python")
        vl = py.vllm_dist() if py is not None else None
        recorded = ctx.matrix.vllm_serve_options(vl.version) if vl is not None else None
        if recorded is None:
            if extra:
                return ctx.fail("; ".join(extra), evidence)
            return ctx.unknown(T("cannot read the installed vLLM's option definitions: {why}{value}", why=why,
                                 value=T("; the matrix does not record vLLM {version}",
                                         version=vl.version) if vl is not None else ''),
                               evidence)
        names = set(recorded)
        by = f"vLLM {vl.version} (as the matrix records that release)"
        evidence.append(ev(f"matrix: vllm-options.toml (vLLM {vl.version})",
                           f"{len(names)} option names of that release ({why})"))
    typos, unknown = [], []
    for dest in cmd.options:
        opt = dest.replace("_", "-").split(".", 1)[0].rstrip("+")
        if opt in names or len([n for n in names if n.startswith(opt)]) == 1:
            continue
        close = difflib.get_close_matches(opt, sorted(names), n=1, cutoff=0.8)
        where = "" if cmd.option_sources.get(dest, "cli") == "cli" else f" (in {cmd.option_sources[dest]})"
        if close:
            typos.append(T("--{opt}{where} (did you mean --{close}?)", opt=opt, where=where, close=close[0]))
        else:
            unknown.append(f"--{opt}{where}")
    if typos or extra:
        return ctx.fail(T("vLLM will stop with `unrecognized arguments`: {value}",
                          value=join('; ', typos + extra + unknown)),
                        evidence, unknown=typos + unknown)
    if unknown:
        return ctx.warn(T("not defined by {by} (as far as its argument files say): {unknown}", by=by,
                          unknown=', '.join(unknown)),
                        evidence, unknown=unknown)
    return ctx.ok(T("{n_options} option(s), all defined by {by}", n_options=len(cmd.options), by=by), evidence)


# Model directory -----------------------------------------------------------------------------------------------
def _model(ctx):
    """(cmd, model fact, None) or (.., .., outcome to return)."""
    cmd, skip = _cmd(ctx)
    if skip:
        return None, None, skip
    m = ctx.fact("serve_model")
    if m.path is None:
        return cmd, m, ctx.unknown(T("model {model} not readable on this machine: {why_not}", model=m.model,
                                     why_not=m.why_not))
    return cmd, m, None


def _config(ctx, m) -> dict:
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


def _text_cfg(cfg: dict) -> dict:
    """The language model's config (multimodal models nest it under text_config)."""
    t = cfg.get("text_config")
    return t if isinstance(t, dict) else cfg


@check("SERVE201", "serve-model-type-known", severity="error", stage="serve",
       needs=["serve_cmd", "serve_model", "vllm_files", "python"])
def model_type_known(ctx):
    """The model's config.json is readable and its model_type is known to the installed transformers/vLLM

    What it checks: `config.json` in the model directory (or its Hugging Face cache snapshot) parses, has a
    `model_type`, and that type is in transformers' `CONFIG_MAPPING_NAMES` (configuration_auto.py) or in vLLM's own
    `_CONFIG_REGISTRY` (vllm/transformers_utils/config.py) — or the model brings its code (`auto_map`) and
    `--trust-remote-code` is given.

    Why it matters: otherwise vLLM stops while loading the config with `ValueError: The checkpoint you are trying to
    load has model type `deepseek_v4` but Transformers does not recognize this architecture` — after the container
    was scheduled and the weights mounted.

    How to fix: Install the transformers (and vLLM) release the model card asks for — for DeepSeek-V4 a vllm-ascend
    image whose vLLM registers `deepseek_v4` — or, for models that ship their own code, add `--trust-remote-code`.
    """
    cmd, m, out = _model(ctx)
    if out:
        return out
    if m.config is None:
        return ctx.fail(T("config.json of {path} cannot be read: {config_error}", path=m.path,
                          config_error=m.config_error),
                        [ev(f"dir: {m.path}", ", ".join(m.files[:40]))],
                        remediation=T("Point vllm serve at the directory that holds config.json and the weights (a "
                                      "complete download: `huggingface-cli download <repo> --local-dir DIR`)."))
    cfg = _config(ctx, m)
    mt = cfg.get("model_type")
    evidence = [ev(f"file: {m.path}/config.json", f"model_type: {mt!r}, architectures: {cfg.get('architectures')}")]
    if not mt:
        return ctx.fail(T("{path}/config.json has no model_type", path=m.path), evidence)
    tf_names, tf_source, tf_why = _model_types(ctx, "transformers")
    vl_names, vl_source, vl_why = _model_types(ctx, "vllm")
    known = (tf_names or set()) | (vl_names or set())
    sources = [x for x in (tf_source, vl_source) if x]
    if mt in known:
        return ctx.ok(T("model_type {mt} is known ({sources})", mt=mt, sources='; '.join(sources)), evidence)
    auto_map = isinstance(cfg.get("auto_map"), dict)
    if auto_map and cmd.flag("trust_remote_code"):
        return ctx.ok(T("model_type {mt} comes with the model's own code (auto_map) and --trust-remote-code is given",
                        mt=mt),
                      evidence)
    if tf_names is None or vl_names is None:
        why = "; ".join(w for w in (tf_why, vl_why) if w)
        return ctx.unknown(T("cannot tell whether the serving stack knows model_type {mt}: {why}", mt=mt, why=why),
                           evidence)
    evidence.append(ev(tf_source, f"{len(tf_names)} model types; closest: "
                                  f"{', '.join(difflib.get_close_matches(mt, sorted(known), n=5, cutoff=0.5))}"))
    tf = _dist_version(ctx, "transformers") or "?"
    if auto_map:
        return ctx.fail(T("model_type {mt} is not built into transformers {tf}; the model ships its own code "
                          "(auto_map) but --trust-remote-code is not given", mt=mt, tf=tf), evidence,
                        remediation=T("Add `--trust-remote-code` (after reviewing the model's Python files)."))
    first_tf = ctx.matrix.first_transformers_with(mt)
    first_vllm = ctx.matrix.first_vllm_with("model_types", mt)
    ascend = next((r for r in ctx.matrix.releases
                   if any(mt in (ctx.matrix.vllm_model_types(v) or ()) for v in r.vllm)), None)
    fixes = []
    if ascend is not None:
        fixes.append(T("serve it with vllm-ascend v{version} or newer (its vLLM {vllm} configures {mt} itself; image "
                       "quay.io/ascend/vllm-ascend:v{version})", version=ascend.version,
                       vllm=ascend.vllm[0], mt=mt))
    if first_tf:
        fixes.append(T("install transformers >= {first_tf}, the first recorded release that knows {mt}, where the "
                       "vllm-ascend release allows it (`ascend-doctor matrix pins --vllm-ascend X` shows its pin)",
                       first_tf=first_tf, mt=mt))
    rem = T("{fixes}.", fixes=join("; or ", fixes)) if fixes else None
    rem = rem[:1].upper() + rem[1:] if rem else None
    return ctx.fail(T("Transformers {tf} does not recognize this architecture: {mt} (nor does the installed vLLM's "
                      "config registry): vLLM will stop while loading the config", tf=tf, mt=mt),
                    evidence, remediation=rem,
                    model_type=mt, first_transformers=first_tf, first_vllm=first_vllm)


def _dist_version(ctx, name: str) -> Optional[str]:
    files = ctx.try_fact("vllm_files")
    if name == "transformers" and files is not None and files.transformers_version:
        return files.transformers_version
    if name == "vllm":
        return _vllm_version(ctx)
    py = ctx.try_fact("python")
    d = py.dist(name) if py is not None else None
    return d.version if d else None


def _model_types(ctx, which: str):
    """(model_types or None, evidence source, why not) that transformers / vLLM's own config registry knows: the
    installed files, else the matrix's record of the installed release (a replay, an image without sources)."""
    files = ctx.try_fact("vllm_files")
    attr = "transformers_model_types" if which == "transformers" else "vllm_model_types"
    label = "transformers" if which == "transformers" else "vLLM config registry"
    nl = getattr(files, attr) if files is not None else None
    if nl is not None and nl.ok:
        return set(nl.names), f"{label}: {nl.source}", ""
    why = nl.why_not if nl is not None else "installed files not read"
    version = _dist_version(ctx, which)
    if version is None:
        return None, "", f"{label}: {why}, and {which} is not installed in the serving python"
    names = (ctx.matrix.transformers_model_types(version) if which == "transformers"
             else ctx.matrix.vllm_model_types(version))
    if names is None:
        return None, "", f"{label}: {why}, and the matrix has no record of {which} {version}"
    table = "transformers_models" if which == "transformers" else "vllm_models"
    return set(names), f"matrix: {which} {version} ({table} table; installed files not read: {why})", ""


@check("SERVE202", "serve-architecture-supported", severity="error", stage="serve",
       needs=["serve_cmd", "serve_model", "vllm_files", "python"])
def architecture_supported(ctx):
    """The model's architecture has an implementation in the installed vLLM (or vllm-ascend)

    What it checks: `architectures` in config.json against the `_*_MODELS` registry dicts of
    vllm/model_executor/models/registry.py plus the `ModelRegistry.register_model` calls of vllm_ascend.

    Why it matters: an architecture vLLM does not implement falls back to the Transformers backend (slow, often
    unsupported on NPU) or fails with `Model architectures ['…'] are not supported for now`.

    How to fix: Upgrade to a vLLM/vllm-ascend release that lists the architecture (see the model's recipe in the
    vllm-ascend docs), or use `--model-impl transformers` knowingly.
    """
    cmd, m, out = _model(ctx)
    if out:
        return out
    if m.config is None:
        return ctx.unknown(T("config.json of {path} cannot be read: {config_error}", path=m.path,
                             config_error=m.config_error))
    archs = _config(ctx, m).get("architectures") or []
    evidence = [ev(f"file: {m.path}/config.json", f"architectures: {archs}")]
    if not archs:
        return ctx.unknown(T("config.json lists no architectures"), evidence)
    names, source, note = _names(ctx, "architectures", None)
    from_matrix = False
    if names is None:
        version = _vllm_version(ctx)
        recorded = ctx.matrix.vllm_architectures(version) if version else None
        if recorded is None:
            return ctx.unknown(T("cannot read the installed vLLM's model registry: {note}{value}", note=note,
                                 value=T("; the matrix has no record of vLLM {version}",
                                         version=version) if version else ''),
                               evidence)
        names, from_matrix = set(recorded), True
        source = f"matrix: vLLM {version} (vllm_models table; installed files not read: {note})"
    hit = [a for a in archs if a in names]
    if hit:
        return ctx.ok(T("vLLM implements {hit} ({source})", hit=', '.join(hit), source=source), evidence)
    if from_matrix:
        first = ctx.matrix.first_vllm_with("architectures", archs[0])
        since = f"; vLLM {first} is the first recorded release that implements {archs[0]}" if first else ""
        return ctx.unknown(T("vLLM {vllm_version} does not implement {archs} ({source}); vllm-ascend may register it "
                             "out of tree, which only the installed files show{since}",
                             vllm_version=_vllm_version(ctx), archs=', '.join(archs), source=source, since=since),
                           evidence)
    evidence.append(ev(source, f"{len(names)} architectures; closest: "
                               f"{', '.join(difflib.get_close_matches(archs[0], sorted(names), n=5, cutoff=0.5))}"))
    if str(cmd.get("model_impl") or "") == "transformers":
        return ctx.warn(T("the installed {stack} has no native implementation of {archs}; --model-impl transformers "
                          "uses the Transformers backend", stack=_stack(ctx),
                          archs=', '.join(archs)), evidence)
    return ctx.fail(T("the installed {stack} has no implementation of {archs}", stack=_stack(ctx),
                      archs=', '.join(archs)), evidence)


# model_type -> tool parsers that read that family's tool-call markup (matrix-facts §4.1/§4.3).
@check("SERVE203", "serve-parser-model-family", severity="error", stage="serve", needs=["serve_cmd", "serve_model"])
def parser_model_family(ctx):
    """The tool-call parser matches the model family

    What it checks: `--tool-call-parser` against the model's `model_type` (config.json), by the model-family table
    `matrices/model-families.toml`: DeepSeek-V3/R1 → deepseek_v3, V3.1 → deepseek_v31, V3.2 → deepseek_v32, V4 →
    deepseek_v4, Qwen → hermes / qwen3_coder, Kimi-K2 → kimi_k2, GLM-4.5 → glm45. Families not in the table pass
    unjudged.

    Why it matters: each family writes tool calls in its own markup (`<｜tool▁call▁begin｜>`, DSML
    `<｜DSML｜invoke>`, `<tool_call>`…). With the wrong parser the server answers 200 but the call arrives as raw
    markup in `content` and `tool_calls` is empty (vllm#26897: a V3.2 model served with deepseek_v31).

    How to fix: Use the parser the finding names (and the matching `--reasoning-parser` / `--tokenizer-mode`).
    """
    cmd, m, out = _model(ctx)
    if out:
        return out
    parser = cmd.get("tool_call_parser")
    if not isinstance(parser, str):
        return ctx.skip(T("--tool-call-parser not given"))
    if m.config is None:
        return ctx.unknown(T("config.json of {path} cannot be read: {config_error}", path=m.path,
                             config_error=m.config_error))
    mt = _config(ctx, m).get("model_type")
    evidence = [ev(f"file: {m.path}/config.json", f"model_type: {mt!r}"),
                ev("command line", cmd.source("tool_call_parser"))]
    known = ctx.matrix.tool_parsers_for(str(mt), m.model)
    if known is None:
        return ctx.ok(T("no family rule for model_type {mt}; --tool-call-parser {parser} not judged", mt=mt,
                        parser=parser), evidence)
    expected, want = known
    if parser in want and parser not in expected:
        family = next(r.label for r in ctx.matrix.model_families if r.tool_parsers == expected)
        return ctx.warn(T("the model name {model} suggests {family}, whose calls {expected} parses; {parser} expects "
                          "the other call shape", model=repr(m.model), family=family, expected=expected[0],
                          parser=parser), evidence,
                        remediation=T("Use `--tool-call-parser {expected}` unless this checkpoint is really the "
                                      "other release.", expected=expected[0]))
    if parser not in want:
        return ctx.fail(T("--tool-call-parser {parser} does not read the tool-call markup of model_type {mt}: calls "
                          "will arrive as raw text in `content`", parser=parser, mt=mt), evidence,
                        remediation=T("Use `--tool-call-parser {want}` for this model.",
                                      want=' or '.join(sorted(want))),
                        expected=sorted(want))
    return ctx.ok(T("--tool-call-parser {parser} matches model_type {mt}", parser=parser, mt=mt), evidence)


@check("SERVE204", "serve-quantization-flag", severity="error", stage="serve", needs=["serve_cmd", "serve_model"])
def quantization_flag(ctx):
    """An Ascend-quantized checkpoint is served with --quantization ascend (and only such a checkpoint)

    What it checks: a `quant_model_description*.json` in the model directory (msModelSlim output: W8A8,
    W8A8_DYNAMIC, W4A8…), or `quantization_config.quant_method: ascend` in config.json, against `--quantization`.

    Why it matters: without `--quantization ascend` vllm-ascend loads the int8 weights as if they were bf16 and fails
    on shape/dtype mismatches (or produces garbage); with `--quantization ascend` on an unquantized checkpoint vLLM
    stops with `Cannot find the config file for ascend`.

    How to fix: Add `--quantization ascend` for msModelSlim-quantized weights (e.g. `*-w8a8*` directories); drop it
    for bf16 weights.
    """
    cmd, m, out = _model(ctx)
    if out:
        return out
    cfg = _config(ctx, m) if m.config is not None else {}
    qc = cfg.get("quantization_config") if isinstance(cfg.get("quantization_config"), dict) else {}
    method = str(qc.get("quant_method") or "") if qc else ""
    ascend_q = bool(m.quant_description_files) or method == "ascend"
    flag = cmd.get("quantization")
    evidence = [ev(f"dir: {m.path}", "quant description: " + (", ".join(m.quant_description_files) or "none")
                   + (f" (model_quant_type {m.quant_type})" if m.quant_type else "")
                   + (f"; config.json quantization_config.quant_method: {method}" if method else ""))]
    if flag is not None:
        evidence.append(ev("command line", cmd.source("quantization")))
    kind = m.quant_type or "Ascend-quantized"
    if ascend_q and flag != "ascend":
        return ctx.fail(T("{path} is an Ascend {kind} checkpoint but {value}", path=m.path, kind=kind,
                          value=T("--quantization is {flag}",
                                  flag=flag) if flag else T("--quantization ascend is not given")),
                        evidence, remediation=T("Add `--quantization ascend` to the vllm serve command line."))
    if flag == "ascend" and not ascend_q:
        if m.config is None:
            return ctx.unknown(T("config.json of {path} cannot be read: {config_error}", path=m.path,
                                 config_error=m.config_error), evidence)
        return ctx.fail(T("--quantization ascend but {path} has no quant_model_description.json: vLLM stops with "
                          "`Cannot find the config file for ascend`", path=m.path), evidence,
                        remediation=T("Drop `--quantization ascend` for unquantized (bf16) weights, or point at the "
                                      "msModelSlim output directory."))
    if ascend_q:
        return ctx.ok(T("Ascend {kind} checkpoint served with --quantization ascend", kind=kind), evidence)
    if method:
        return ctx.ok(T("not an Ascend-quantized checkpoint; config.json declares quant_method {method}, which vLLM "
                        "reads from config.json{value}", method=method,
                        value=T(" (--quantization {flag})", flag=flag) if flag else ''), evidence)
    return ctx.ok(T("unquantized checkpoint{value}", value=T(", --quantization {flag}", flag=flag) if flag else ''),
                  evidence)


_OWN_ENCODER_MODES = {"deepseek_v32", "deepseek_v4"}


def _odd_chars(text: str) -> list[str]:
    """Characters of a path or name that are not printable ASCII, or whitespace, as `'模' (U+6A21)`."""
    seen: list[str] = []
    for ch in text:
        if ch.isspace() or not (32 <= ord(ch) < 127):
            label = {" ": "space", "\t": "tab"}.get(ch) or repr(ch)
            item = f"{label} (U+{ord(ch):04X})"
            if item not in seen:
                seen.append(item)
    return seen


@check("SERVE206", "serve-model-path-ascii", severity="warning", stage="serve", needs=["serve_cmd"])
def model_path_ascii(ctx):
    """The model path and served model name are plain ASCII without spaces

    What it checks: the `--model` (or positional) path and `--served-model-name` for characters outside printable
    ASCII and for whitespace.

    Why it matters: vLLM serves the model under its path when no `--served-model-name` is given, so every client
    must send that exact string as `model`; spaces and non-ASCII characters get mangled by shell quoting, URL and
    JSON handling and by tokenizer/config loaders on the way (reported more than once by users who lost hours to
    a `模型/Qwen 3` directory). The server starts; requests fail with `The model ... does not exist`.

    How to fix: move or symlink the weights to an ASCII path without spaces (`ln -s '/data/模型/Qwen 3'
    /models/qwen3`), and give clients a simple `--served-model-name` (e.g. `qwen3`).
    """
    cmd, skip = _cmd(ctx)
    if skip:
        return skip
    problems, evidence = [], []
    model = cmd.model or cmd.get("model")
    served = cmd.get("served_model_name")
    if isinstance(model, str) and model:
        odd = _odd_chars(model)
        evidence.append(ev("command line", f"model: {model}"))
        if odd:
            problems.append(T("the model path {model} contains {odd}{value}", model=repr(model), odd=', '.join(odd),
                              value='' if served else T(", and without --served-model-name clients must send it as `model`")))
    if isinstance(served, str) and served:
        odd = _odd_chars(served)
        evidence.append(ev("command line", cmd.source("served_model_name")))
        if odd:
            problems.append(T("--served-model-name {served} contains {odd}", served=repr(served), odd=', '.join(odd)))
    if not evidence:
        return ctx.skip(T("no model path on the command line"))
    if not problems:
        return ctx.ok(T("model path and served model name are plain ASCII without spaces"), evidence)
    fixes = []
    if isinstance(model, str) and _odd_chars(model):
        fixes.append(T("symlink the weights to an ASCII path without spaces (`ln -s {quote} /models/<name>`) and "
                       "serve that path", quote=shlex.quote(model)))
    fixes.append(T("give clients a plain `--served-model-name` (letters, digits, `-`, `_`, `.`, `/`)"))
    return ctx.warn(join("; ", problems), evidence, remediation=join("; ", fixes)[:1].upper() + join("; ", fixes)[1:]
                    + ".")


@check("SERVE205", "serve-chat-template-tools", severity="warning", stage="serve",
       needs=["serve_cmd", "serve_model", "devices", "npu_smi"])
def chat_template_tools(ctx):
    """With tools enabled, the chat template renders tool definitions

    What it checks: when `--enable-auto-tool-choice`/`--tool-call-parser` is given: `--chat-template FILE`, else the
    model's `chat_template.jinja`/`.json`, else `chat_template` in tokenizer_config.json — and that it mentions
    `tools`. DeepSeek-V3.2/V4 have no Jinja template: `--tokenizer-mode deepseek_v32|deepseek_v4` supplies the
    encoder instead.

    Why it matters: a template that ignores `tools` never shows the model the tool definitions, so it never calls
    them; no template at all makes every chat request fail (`As of transformers v4.44, default chat template is no
    longer allowed`).

    How to fix: Pass the model's official tool-aware template with `--chat-template FILE` (vLLM ships some under
    examples/ e.g. tool_chat_template_deepseekv31.jinja), or for DeepSeek-V3.2/V4 `--tokenizer-mode <model_type>`.
    """
    cmd, m, out = _model(ctx)
    if out:
        return out
    if not (cmd.flag("enable_auto_tool_choice") or cmd.get("tool_call_parser")):
        return ctx.skip(T("tool calling is not enabled"))
    mode = cmd.get("tokenizer_mode")
    mt = (_config(ctx, m) if m.config is not None else {}).get("model_type")
    if mode in _OWN_ENCODER_MODES:
        return ctx.ok(T("--tokenizer-mode {mode} encodes the chat (tools included) without a Jinja template",
                        mode=mode),
                      [ev("command line", cmd.source("tokenizer_mode"))])
    if m.chat_template_arg_error:
        return ctx.fail(m.chat_template_arg_error, [_cmd_ev(cmd)],
                        remediation=T("Fix the --chat-template path (it is read inside the container)."))
    candidates = []
    if m.chat_template_arg is not None:
        candidates.append((f"--chat-template {cmd.get('chat_template')}"[:200], m.chat_template_arg))
    for name, text in sorted(m.chat_template_files.items()):
        candidates.append((f"file: {m.path}/{name}", text))
    if m.tokenizer_chat_template:
        candidates.append((f"file: {m.path}/tokenizer_config.json chat_template", m.tokenizer_chat_template))
    if not candidates:
        if mt in _OWN_ENCODER_MODES:
            return ctx.warn(T("model_type {mt} ships no Jinja chat template and --tokenizer-mode {mt} is not given",
                              mt=mt),
                            [ev(f"dir: {m.path}", ", ".join(m.files[:40]))],
                            remediation=T("Add `--tokenizer-mode {mt}` (the vLLM release must have it, see SERVE103).",
                                          mt=mt))
        return ctx.warn(T("{path} has no chat template and no --chat-template is given: chat requests will fail",
                          path=m.path),
                        [ev(f"dir: {m.path}", ", ".join(m.files[:40]))])
    where, text = candidates[0]
    evidence = [ev(where, text[:600])]
    if "tools" in text:
        return ctx.ok(T("the chat template ({where}) renders tools", where=where), evidence)
    return ctx.warn(T("the chat template ({where}) never mentions `tools`: the model will not see the tool definitions",
                      where=where), evidence)


# Sizing --------------------------------------------------------------------------------------------------------
def _int_opt(cmd, name: str, default: int) -> int:
    v = cmd.int_opt(name)
    return default if v is None else v


def _visible(ctx, cmd):
    """(logical device list [(npu_id, chip)], evidence list, note) or (None, evidence, why)."""
    from ascend_doctor.parsers.device_ids import parse_device_ids

    smi = ctx.try_fact("npu_smi")
    evidence = []
    if smi is None or not smi.usable:
        return None, evidence, ("npu-smi gave no device table: " + (smi.reason() if smi is not None else
                                                                     "npu_smi fact unavailable"))
    chips = list(smi.info.chips)
    evidence.append(ev("cmd: npu-smi info", f"{len(chips)} chip(s): "
                                            + ", ".join(f"NPU {c.npu_id} chip {c.chip_id}" for c in chips)))
    devices = ctx.try_fact("devices")
    if devices is not None and devices.dev_listed and devices.davinci and len(devices.davinci) < len(chips):
        evidence.append(ev("dir: /dev", "davinci nodes: " + ", ".join(f"davinci{n}" for n in devices.davinci)))
        # /dev/davinciN is the physical id (A3: `Chip Phy-ID`; one chip per NPU elsewhere: the NPU id)
        mounted = [c for c in chips if (c.phy_id if c.phy_id is not None else c.npu_id) in set(devices.davinci)]
        chips = mounted if len(mounted) == len(devices.davinci) else chips[:len(devices.davinci)]
    env = _server_env(ctx, cmd)
    rt = env.get("ASCEND_RT_VISIBLE_DEVICES")
    if rt is not None and rt.strip():
        ids, bad = parse_device_ids(rt, ranges=False)
        evidence.append(ev("env: ASCEND_RT_VISIBLE_DEVICES", rt))
        if not bad:
            chips = [chips[i] for i in dict.fromkeys(ids) if 0 <= i < len(chips)]
    return chips, evidence, ""


@check("SERVE301", "serve-parallel-fits-npus", severity="error", stage="serve",
       needs=["serve_cmd", "npu_smi", "devices", "env"])
def parallel_fits(ctx):
    """Tensor x pipeline (x data) parallel size fits the NPUs this server can see

    What it checks: `--tensor-parallel-size` × `--pipeline-parallel-size` × local data-parallel size against the
    chips `npu-smi info` lists, narrowed to the /dev/davinciN nodes present (containers) and to
    `ASCEND_RT_VISIBLE_DEVICES`.

    Why it matters: vLLM spawns one worker per rank; with more ranks than visible NPUs the extra workers fail with
    `Invalid device ID` / `drvErr=87`, or HCCL initialisation hangs until its timeout.

    How to fix: Lower `--tensor-parallel-size` to the visible count, or give the container more devices
    (`--device /dev/davinciN`) / widen `ASCEND_RT_VISIBLE_DEVICES`; across nodes use Ray or `--nnodes`.
    """
    cmd, skip = _cmd(ctx)
    if skip:
        return skip
    try:
        tp = _int_opt(cmd, "tensor_parallel_size", 1)
        pp = _int_opt(cmd, "pipeline_parallel_size", 1)
        dp = cmd.int_opt("data_parallel_size_local") or _int_opt(cmd, "data_parallel_size", 1)
        nnodes = _int_opt(cmd, "nnodes", 1)
    except ValueError as exc:
        return ctx.fail(T("a parallel size is not an integer: {exc}", exc=exc), [_cmd_ev(cmd)])
    total = tp * pp * dp
    per_node = math.ceil(total / nnodes) if nnodes > 1 and not cmd.has("data_parallel_size_local") else total
    chips, evidence, why = _visible(ctx, cmd)
    shape = f"TP {tp} x PP {pp}" + (f" x DP {dp}" if dp > 1 else "") + (f" over {nnodes} nodes" if nnodes > 1 else "")
    evidence.insert(0, ev("command line", shape))
    if chips is None:
        return ctx.unknown(T("{shape} needs {per_node} NPU(s) here, but {why}", shape=shape, per_node=per_node,
                             why=why), evidence)
    if per_node <= len(chips):
        return ctx.ok(T("{shape} needs {per_node} NPU(s); {n_chips} visible", shape=shape, per_node=per_node,
                        n_chips=len(chips)), evidence)
    msg = T("{shape} needs {per_node} NPU(s) on this machine but only {n_chips} are visible", shape=shape,
            per_node=per_node, n_chips=len(chips))
    if str(cmd.get("distributed_executor_backend") or "") == "ray":
        return ctx.warn(msg + ": this only works when the Ray cluster spans other nodes", evidence)
    fit = len(chips) // max(pp * dp, 1) or 1
    return ctx.fail(msg, evidence, remediation=T("Use at most `--tensor-parallel-size {fit}` (it must also divide the "
                                                 "attention heads, see SERVE302), or make more NPUs visible (docker "
                                                 "`--device /dev/davinciN`, ASCEND_RT_VISIBLE_DEVICES).",
                                                 fit=fit),
                    needed=per_node, visible=len(chips))


@check("SERVE302", "serve-tp-divides-heads", severity="error", stage="serve", needs=["serve_cmd", "serve_model"])
def tp_divides_heads(ctx):
    """The tensor-parallel size divides the model's attention heads

    What it checks: `num_attention_heads` in config.json (text_config for multimodal models) modulo
    `--tensor-parallel-size`.

    Why it matters: vLLM stops with `Total number of attention heads (N) must be divisible by tensor parallel size
    (T)` after the workers started.

    How to fix: Pick a TP size that divides the head count (the finding lists the ones that fit).
    """
    cmd, m, out = _model(ctx)
    if out:
        return out
    try:
        tp = _int_opt(cmd, "tensor_parallel_size", 1)
    except ValueError as exc:
        return ctx.fail(T("--tensor-parallel-size is not an integer: {exc}", exc=exc), [_cmd_ev(cmd)])
    if m.config is None:
        return ctx.unknown(T("config.json of {path} cannot be read: {config_error}", path=m.path,
                             config_error=m.config_error))
    heads = _text_cfg(_config(ctx, m)).get("num_attention_heads")
    evidence = [ev(f"file: {m.path}/config.json", f"num_attention_heads: {heads}"), ev("command line", f"TP {tp}")]
    if not isinstance(heads, int) or heads <= 0:
        return ctx.unknown(T("config.json has no num_attention_heads"), evidence)
    if heads % tp == 0:
        return ctx.ok(T("{heads} attention heads split evenly over TP {tp}", heads=heads, tp=tp), evidence)
    fits = [d for d in range(1, min(heads, 64) + 1) if heads % d == 0]
    return ctx.fail(T("Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp})",
                      heads=heads, tp=tp),
                    evidence, remediation=T("Use a TP size among {fits}.", fits=fits))


_LEN_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
             "max_sequence_length", "max_seq_length", "seq_len")


def derived_max_len(cfg: dict) -> tuple[Optional[int], str, list[str]]:
    """(longest context vLLM derives from the config, the key it came from, rope fields used) — after
    vllm/config/model.py `_get_and_verify_max_len` (0.13.0): the smallest length key, times the rope `factor` (yarn:
    applied to `original_max_position_embeddings`), except for su/longrope/llama3 scaling."""
    present = [(cfg[k], k) for k in _LEN_KEYS if isinstance(cfg.get(k), (int, float)) and cfg.get(k) > 0]
    if not present:
        return None, "", []
    base, key = min(present)
    rope = cfg.get("rope_scaling") or cfg.get("rope_parameters")
    fields: list[str] = []
    derived = float(base)
    if isinstance(rope, dict):
        rtype = rope.get("rope_type") or rope.get("type")
        factor = rope.get("factor")
        if rtype not in ("su", "longrope", "llama3") and isinstance(factor, (int, float)):
            fields.append(f"rope_scaling.rope_type={rtype}")
            if rtype == "yarn" and isinstance(rope.get("original_max_position_embeddings"), (int, float)):
                derived = float(rope["original_max_position_embeddings"])
                fields.append(f"rope_scaling.original_max_position_embeddings={int(derived)}")
            derived *= factor
            fields.append(f"rope_scaling.factor={factor}")
    return int(derived), f"{key}={int(base)}", fields


@check("SERVE303", "serve-max-model-len", severity="error", stage="serve", needs=["serve_cmd", "serve_model", "env"])
def max_model_len(ctx):
    """--max-model-len is within what the model config allows

    What it checks: `--max-model-len` against the length vLLM derives from config.json (the smallest of
    max_position_embeddings / seq_length / …, scaled by `rope_scaling.factor`, for yarn from
    `original_max_position_embeddings`), including `--hf-overrides`.

    Why it matters: above it vLLM stops with `User-specified max_model_len (X) is greater than the derived
    max_model_len (Y)`; forcing it with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 gives wrong output or NaNs past the trained
    length.

    How to fix: Lower `--max-model-len` to the derived value, or extend the context the supported way: rope scaling
    via `--hf-overrides '{"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings":
    32768}}'` for models trained for it.
    """
    cmd, m, out = _model(ctx)
    if out:
        return out
    try:
        want = cmd.int_opt("max_model_len")
    except ValueError:
        raw = str(cmd.get("max_model_len"))
        if re.fullmatch(r"\d+[kKmM]", raw.strip()):  # vLLM accepts 32k / 1m
            want = int(raw[:-1]) * (1024 if raw[-1] in "kK" else 1024 * 1024)
        else:
            return ctx.fail(T("--max-model-len {raw} is not a number", raw=raw), [_cmd_ev(cmd)])
    if want is None or want == -1:
        return ctx.skip(T("--max-model-len not given (vLLM derives it from the model config)"))
    if m.config is None:
        return ctx.unknown(T("config.json of {path} cannot be read: {config_error}", path=m.path,
                             config_error=m.config_error))
    cfg = _text_cfg(_config(ctx, m))
    derived, base, rope = derived_max_len(cfg)
    evidence = [ev(f"file: {m.path}/config.json", ", ".join([base] + rope) or "no length keys"),
                ev("command line", f"--max-model-len {want}")]
    if derived is None:
        return ctx.unknown(T("config.json has no max_position_embeddings (or equivalent)"), evidence)
    if want <= derived:
        via = f" (via {', '.join(rope)})" if rope and want > int(base.split("=")[1]) else ""
        return ctx.ok(T("--max-model-len {want} <= {derived} derived from the config{via}", want=want, derived=derived,
                        via=via), evidence)
    how = f"{base}" + (f" with {', '.join(rope)}" if rope else "")
    msg = T("--max-model-len {want} is greater than the {derived} derived from config.json ({how})", want=want,
            derived=derived, how=how)
    if _server_env(ctx, cmd).get("VLLM_ALLOW_LONG_MAX_MODEL_LEN") in ("1", "true", "True"):
        return ctx.warn(msg + "; VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 forces it: output past the trained length is "
                              "unreliable", evidence)
    return ctx.fail(msg + ": vLLM refuses to start", evidence,
                    remediation=T("Use `--max-model-len {derived}` or less (or add rope scaling via --hf-overrides "
                                  "for a model trained for it).", derived=derived))


@check("SERVE304", "serve-hbm-headroom", severity="error", stage="serve", needs=["serve_cmd", "npu_smi", "devices", "env"])
def hbm_headroom(ctx):
    """Each NPU the server will use has the HBM --gpu-memory-utilization asks for

    What it checks: for the NPUs the server will use (the first TP x PP visible ones), `--gpu-memory-utilization`
    (default 0.9) × HBM total against HBM free (total − used) in `npu-smi info`.

    Why it matters: vLLM reserves that fraction of every device at start-up; when another process already holds HBM
    it stops with `ValueError: Free memory on device … is less than desired GPU memory utilization` — or, on older
    releases, runs out of memory while allocating the KV cache.

    How to fix: Free the NPU (`npu-smi info` lists the process holding it), pick other devices with
    ASCEND_RT_VISIBLE_DEVICES, or lower `--gpu-memory-utilization` to the value the finding computes.
    """
    cmd, skip = _cmd(ctx)
    if skip:
        return skip
    try:
        util = cmd.float_opt("gpu_memory_utilization")
        tp = _int_opt(cmd, "tensor_parallel_size", 1)
        pp = _int_opt(cmd, "pipeline_parallel_size", 1)
    except ValueError as exc:
        return ctx.fail(T("a numeric option is not a number: {exc}", exc=exc), [_cmd_ev(cmd)])
    util = 0.9 if util is None else util
    chips, evidence, why = _visible(ctx, cmd)
    if chips is None:
        return ctx.unknown(T("cannot compare HBM: {why}", why=why), evidence)
    used = chips[:tp * pp] or chips[:1]
    short, seen, fits = [], [], []
    for c in used:
        total = c.hbm_total_mb if c.hbm_total_mb else c.memory_total_mb
        in_use = c.hbm_used_mb if c.hbm_total_mb else c.memory_used_mb
        if not total or in_use is None:
            continue
        need, free = util * total, total - in_use
        seen.append(f"NPU {c.npu_id} chip {c.chip_id}: {in_use}/{total} MB used")
        fits.append(free / total)
        if need > free:
            short.append(T("NPU {npu_id} chip {chip_id} needs {need} MB ({util} x {total} MB) but has {free} MB free "
                           "({in_use} MB in use)", npu_id=c.npu_id, chip_id=c.chip_id,
                           need=format(need, ".0f"), util=format(util, "g"), total=total, free=free, in_use=in_use))
    if not seen:
        return ctx.unknown(T("npu-smi lists no HBM usage for these chips"), evidence)
    evidence.append(ev("cmd: npu-smi info (HBM)", "\n".join(seen)))
    if short:
        best = math.floor(min(fits) * 100) / 100
        return ctx.fail(T("--gpu-memory-utilization {util}: {short}", util=format(util, "g"), short=join('; ', short)),
                        evidence,
                        remediation=(T("Free those NPUs (see the process table of `npu-smi info`), choose idle ones "
                                       "with ASCEND_RT_VISIBLE_DEVICES, or use `--gpu-memory-utilization {best}` or "
                                       "lower.", best=format(best, ".2f"))), chips=short)
    return ctx.ok(T("{n_seen} NPU(s) can provide {util} of their HBM", n_seen=len(seen), util=format(util, "g")),
                  evidence)


# Environment ---------------------------------------------------------------------------------------------------
@check("SERVE401", "serve-env-v0-engine", severity="error", stage="serve", needs=["serve_cmd", "env", "python", "vllm_files"])
def env_v0_engine(ctx):
    """VLLM_USE_V1=0 (the removed V0 engine) is not set

    What it checks: `VLLM_USE_V1` in the environment the server inherits.

    Why it matters: vllm-ascend never supported the V0 engine ("V0 Engine is not supported… always set VLLM_USE_V1=1",
    v0.9.1) and vLLM removed it (V1 default in 0.9.2rc1, V0 gone in vllm-ascend v0.10.0rc1; the variable left
    vllm/envs.py in 0.12.0, so newer releases ignore it and only warn about an unknown variable).

    How to fix: `unset VLLM_USE_V1` (remove it from the Dockerfile ENV / pod spec / unit Environment=).
    """
    cmd, skip = _cmd(ctx)
    if skip:
        return skip
    env = _server_env(ctx, cmd)
    v = env.get("VLLM_USE_V1")
    if v is None:
        return ctx.ok(T("VLLM_USE_V1 is not set (V1 engine)"))
    evidence = [ev("env: VLLM_USE_V1", v)]
    version = try_parse_version(_vllm_version(ctx))
    removed = version is not None and version >= try_parse_version("0.12.0")
    if v.strip() == "0":
        if removed:
            return ctx.warn(T("VLLM_USE_V1=0 is ignored by vLLM {version} (the V0 engine is gone): remove it",
                              version=version),
                            evidence)
        return ctx.fail(T("VLLM_USE_V1=0 selects the V0 engine, which vllm-ascend does not support"), evidence)
    if removed:
        return ctx.warn(T("VLLM_USE_V1={v} is a leftover: vLLM {version} has no such variable", v=v, version=version),
                        evidence)
    return ctx.ok(T("VLLM_USE_V1={v}", v=v), evidence)


_EXTRA_KNOWN = {"VLLM_VERSION", "VLLM_TARGET_DEVICE", "VLLM_USE_V1"}  # read by setup/plugins outside envs.py dicts


@check("SERVE402", "serve-env-unknown-vars", severity="warning", stage="serve", needs=["serve_cmd", "env", "vllm_files"])
def env_unknown_vars(ctx):
    """Every VLLM_* / VLLM_ASCEND_* variable is one the installed release knows

    What it checks: environment variables starting with `VLLM_` against the keys of `environment_variables` in
    vllm/envs.py and `env_variables` in vllm_ascend/envs.py of the installed packages; typos get the closest known
    name.

    Why it matters: a misspelt or retired variable is silently ignored (vLLM 0.18+ only logs `Unknown vLLM
    environment variable detected`), so the setting you think you made is not in effect — e.g.
    `VLLM_ASCEND_ENABLE_FLASHCOMM1` moved to `--additional-config` in vllm-ascend v0.23.0.

    How to fix: Rename it to the name the finding suggests, or remove it.
    """
    cmd, skip = _cmd(ctx)
    if skip:
        return skip
    env = _server_env(ctx, cmd)
    ours = sorted(k for k in env if k.startswith("VLLM_"))
    if not ours:
        return ctx.ok(T("no VLLM_* variables set"))
    files = ctx.try_fact("vllm_files")
    if files is None or not files.vllm_env_vars.ok:
        why = files.vllm_env_vars.why_not if files is not None else "installed files not read"
        return ctx.unknown(T("cannot read the installed vLLM's variable list: {why}", why=why))
    known = set(files.vllm_env_vars.names) | _EXTRA_KNOWN
    sources = [files.vllm_env_vars.source]
    if files.vllm_ascend_env_vars.ok:
        known |= set(files.vllm_ascend_env_vars.names)
        sources.append(files.vllm_ascend_env_vars.source)
    unknown = [k for k in ours if k not in known]
    shown = "\n".join(f"{k}={REDACTED if is_secret_name(k) else env[k]}" for k in ours)
    evidence = [ev("env", shown), ev("file: " + " + ".join(sources),
                                                                      f"{len(known)} known names")]
    if not unknown:
        return ctx.ok(T("{n_ours} VLLM_* variable(s), all known", n_ours=len(ours)), evidence)
    parts = []
    for k in unknown:
        close = difflib.get_close_matches(k, sorted(known), n=1, cutoff=0.75)
        parts.append(f"{k} (did you mean {close[0]}?)" if close else k)
    partial = "" if files.vllm_ascend_env_vars.ok else " (vllm_ascend/envs.py not read: VLLM_ASCEND_* may be known)"
    return ctx.warn(T("unknown to the installed release{partial}: {parts}", partial=partial, parts=', '.join(parts)),
                    evidence, unknown=unknown)


@check("SERVE403", "serve-npu-alloc-conf", severity="info", stage="serve", needs=["serve_cmd", "env"])
def npu_alloc_conf(ctx):
    """PYTORCH_NPU_ALLOC_CONF is set for the server

    What it checks: whether `PYTORCH_NPU_ALLOC_CONF` is set in the server's environment.

    Why it matters: the vllm-ascend FAQ recommends `expandable_segments:True` against HBM fragmentation (out-of-memory
    with plenty of free HBM in long runs); the tutorials set it in almost every example.

    How to fix: `export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True` before `vllm serve` (ENV in the Dockerfile,
    env in the pod spec).
    """
    cmd, skip = _cmd(ctx)
    if skip:
        return skip
    v = _server_env(ctx, cmd).get("PYTORCH_NPU_ALLOC_CONF")
    if v:
        return ctx.ok(T("PYTORCH_NPU_ALLOC_CONF={v}", v=v), [ev("env: PYTORCH_NPU_ALLOC_CONF", v)])
    return ctx.warn(T("PYTORCH_NPU_ALLOC_CONF is not set; expandable_segments:True avoids HBM fragmentation"))
