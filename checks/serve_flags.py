"""SERVE1xx: the flags `vllm serve` checks at start-up — parser and reasoning-parser names, tokenizer mode, auto tool
choice, every option — against the INSTALLED vLLM/vllm-ascend (its files read as text, `vllm_files`; the matrix's
per-release tables stand in when they cannot be read, and the evidence says so). They run under `ascend-doctor exec`
(the `serve_cmd` fact) and skip under plain `check`."""

from __future__ import annotations

import difflib
from typing import Optional

from ascend_doctor.i18n import T, capitalized, join
from ascend_doctor.plugin import check, ev
from ascend_doctor.text.versions import try_parse_version

from ._serve import cmd_evidence, cmd_or_skip, installed_names, stack_text, stand_in_for, vllm_version


def _upgrade_hint(ctx, kind: str, name: str) -> tuple[str, Optional[str]]:
    """(sentence naming the first vLLM release with `name` and the first vllm-ascend release whose vLLM has it,
    that vllm-ascend release). The vllm-ascend release is not always a pairing of that vLLM: deepseek_v4 first
    appears in vLLM 0.20.0, which no vllm-ascend release pairs with; v0.20.2rc1 is the first that has it."""
    m = ctx.matrix
    first = m.first_vllm_release_with(kind, name)
    if not first:
        return T("no vLLM release in the matrix registers {name}", name=repr(name)), None
    before = m.last_vllm_release_without(kind, name)
    since = T("{name} first appears in vLLM {first} (vLLM {before} does not have it)", name=repr(name), first=first,
              before=before) if before else T("{name} first appears in vLLM {first}", name=repr(name), first=first)
    ascend = m.first_ascend_release_with(kind, name)
    if ascend is not None:
        return T("{since}; the first vllm-ascend release with it is v{version} (vLLM {vllm})", since=since,
                 version=ascend.version, vllm=ascend.vllm[0]), ascend.version
    return since, None


def _name_check(ctx, option: str, attr: str, kind: str, plugin_option: str):
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    flag = "--" + option.replace("_", "-")
    name = cmd.get(option)
    if not isinstance(name, str) or not name:
        return ctx.skip(T("{flag} not given", flag=flag))
    names, source, note = installed_names(ctx, attr, kind)
    evidence = [ev(T("command line"), cmd.source(option))]
    if names is None:
        return ctx.unknown(T("cannot tell which {flag} values the installed vLLM accepts: {note}", flag=flag,
                             note=note), evidence)
    evidence.append(ev(source, ", ".join(sorted(names)) + (f"\n({note})" if note else "")))
    if name in names:
        return ctx.ok(T("{flag} {name} is registered in the installed {stack}", flag=flag, name=name,
                        stack=stack_text(ctx)), evidence)
    hint, ascend = _upgrade_hint(ctx, kind, name)
    close = difflib.get_close_matches(name, sorted(names), n=3, cutoff=0.6)
    version = vllm_version(ctx)
    first = ctx.matrix.first_vllm_release_with(kind, name)
    newer = (first and version and try_parse_version(first) and try_parse_version(version)
             and try_parse_version(first) > try_parse_version(version))
    msg = T("{flag} {name} is not registered in the installed {stack}: vLLM will refuse to start", flag=flag,
            name=name, stack=stack_text(ctx))
    if newer:
        msg = join("; ", [msg, hint])
    if cmd.has(plugin_option):
        return ctx.warn(T("{msg} unless {flag} registers it", msg=msg, flag="--" + plugin_option.replace("_", "-")),
                        evidence)
    fixes = []
    if newer:
        row = ctx.matrix.vllm_ascend_release(ascend) if ascend else None
        target = f"vllm-ascend v{ascend} (vLLM {row.vllm[0]})" if row else f"vLLM {first}"
        fixes.append(T("upgrade the serving stack to {target} or newer (e.g. image "
                       "quay.io/ascend/vllm-ascend:v{ascend})", target=target, ascend=ascend) if ascend else
                     T("upgrade the serving stack to {target} or newer", target=target))
    if close:
        fixes.append(T("or use a name this vLLM has: {close}", close=', '.join(close)))
    elif not newer:
        fixes.append(T("use one of: {names}", names=', '.join(sorted(names))))
    rem = join("; ", fixes)
    return ctx.fail(msg, evidence, remediation=capitalized(T("{fixes}.", fixes=rem)) if rem else None,
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


@check("SERVE104", "serve-auto-tool-choice", severity="error", stage="serve",
       needs=["serve_cmd", "vllm_files", "python"])
def auto_tool_choice(ctx):
    """--enable-auto-tool-choice and --tool-call-parser are given together

    What it checks: that the two flags appear together on the command line (or in --config).

    Why it matters: `--enable-auto-tool-choice` without a parser stops vLLM at start-up with `TypeError: Error:
    --enable-auto-tool-choice requires --tool-call-parser`. A parser without `--enable-auto-tool-choice` starts, but
    every request with `tool_choice: "auto"` — the OpenAI SDK default when `tools` are sent — fails with `"auto"
    tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`.

    How to fix: Pass both: `--enable-auto-tool-choice --tool-call-parser <parser of the model>`.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    auto = cmd.flag("enable_auto_tool_choice")
    parser = cmd.get("tool_call_parser")
    evidence = [cmd_evidence(cmd)]
    # The fix names only parsers the installed vLLM has: SERVE101 judges the name, and two findings must not
    # disagree (#40 item 16: "add --enable-auto-tool-choice next to --tool-call-parser X" while SERVE101 said X
    # does not exist).
    names, _, _ = installed_names(ctx, "tool_parsers", "tool_parser")
    if cmd.partial and bool(auto) != bool(parser):  # the other flag may be in the part the source does not show
        given, other = ("--enable-auto-tool-choice", "--tool-call-parser") if auto else \
            (f"--tool-call-parser {parser}", "--enable-auto-tool-choice")
        return ctx.unknown(T("{given} is given; whether {other} is too is not shown (the source shows only part of "
                             "the command), and vLLM needs both", given=given, other=other), evidence)
    if auto and not parser:
        examples = [p for p in ("hermes", "qwen3_coder", "deepseek_v31", "deepseek_v32", "deepseek_v4")
                    if names is None or p in names]
        return ctx.fail(T("--enable-auto-tool-choice without --tool-call-parser: vLLM exits at start-up with "
                          "`TypeError: Error: --enable-auto-tool-choice requires --tool-call-parser`"), evidence,
                        remediation=T("Add `--tool-call-parser <name>` for the model (this vLLM has e.g. {examples}; "
                                      "SERVE203 names the one for its family), or drop --enable-auto-tool-choice.",
                                      examples=", ".join(examples) or "-"))
    if parser and not auto:
        unknown = (names is not None and isinstance(parser, str) and parser not in names
                   and not cmd.has("tool_parser_plugin"))
        fix = (T("Add `--enable-auto-tool-choice`, with a --tool-call-parser this vLLM has ({parser} is not one: "
                 "see SERVE101).", parser=parser) if unknown else
               T("Add `--enable-auto-tool-choice` next to `--tool-call-parser {parser}`.", parser=parser))
        return ctx.fail(T("--tool-call-parser {parser} without --enable-auto-tool-choice: requests with tool_choice "
                          "\"auto\" (the default when tools are sent) are refused with `\"auto\" tool choice "
                          "requires --enable-auto-tool-choice and --tool-call-parser to be set`",
                          parser=parser), evidence, remediation=fix, see=["SERVE101"] if unknown else [])
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
    The option list is the release's whole list (its own argument files, installed or in the matrix row read from
    its sdist), so any option outside it fails, as it does in vLLM; one an earlier release had is named with the
    release that removed it (`--task`: vLLM 0.13.0, the pooling vocabulary is `--runner`/`--convert`).

    How to fix: Correct the spelling the finding suggests, or drop options the installed release does not have.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    files = ctx.try_fact("vllm_files")
    evidence = [cmd_evidence(cmd)]
    extra = [f"unexpected positional argument(s) {' '.join(cmd.unknown_args)}"] if cmd.unknown_args else []
    # how argparse read a word, when that is what left one over (`-quantization ascend`: -q 'uantization', `ascend`)
    extra += [n for n in cmd.notes if cmd.unknown_args and "a single-dash word" in n]
    if cmd.config_error:
        extra.append(cmd.config_error)
    if files is not None and files.cli_options.ok:
        names = set(files.cli_options.names)
        by = "the installed vLLM"
        evidence.append(ev(f"file: {files.cli_options.source}", f"{len(names)} option names"))
    else:
        # The installed files could not be read (a replayed snapshot, a paste): the matrix records the options of
        # each vLLM release it lists (the matrix's vllm-options.toml), read from that release's sdist.
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
        version = vllm_version(ctx)
        last, dropped = ctx.matrix.option_history(opt, version) if version else (None, None)
        if dropped:  # an option the release removed: say when, as the release notes would
            unknown.append(T("--{opt}{where} (removed in vLLM {dropped}; last in {last})", opt=opt, where=where,
                             dropped=dropped, last=last))
        elif close:
            typos.append(T("--{opt}{where} (did you mean --{close}?)", opt=opt, where=where, close=close[0]))
        else:
            unknown.append(f"--{opt}{where}")
    if typos or extra or unknown:
        # The names are complete for the release: read from its own argument files (installed, or its sdist for the
        # matrix row), so an option not among them is one its argparse rejects.
        return ctx.fail(T("vLLM will stop with `unrecognized arguments`: {value} (not defined by {by})",
                          value=join('; ', typos + extra + unknown), by=by),
                        evidence, unknown=typos + unknown)
    return ctx.ok(T("{n_options} option(s), all defined by {by}", n_options=len(cmd.options), by=by), evidence)


def _ascend_version(ctx) -> Optional[str]:
    py = ctx.try_fact("python")
    d = py.dist("vllm-ascend") if py is not None else None
    return d.version if d else None


def _unread_key(table, key: str, version: str, known: frozenset) -> str:
    last, dropped = table.history(key, version)
    if last and dropped:
        return T("{key} (last read by {last}, ignored since {dropped})", key=key, last=last, dropped=dropped)
    if table.ever_read(key):
        return T("{key} (read only by later releases)", key=key)
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
    return T("{key} (did you mean {close}?)", key=key, close=close[0]) if close else T(
        "{key} (read by no recorded release)", key=key)


def _unknown_keys(table, row, cfg: dict, version: str) -> tuple[list[str], list[str]]:
    """(top-level, nested) keys of `cfg` the release row does not accept, each with what the table knows of it; a
    sub-dict is judged only where the row records that sub-config's keys."""
    top, nested = [], []
    for key, value in cfg.items():
        if key not in row.keys:
            top.append(_unread_key(table, key, version, row.top_keys))
            continue
        sub = row.sub_keys(key)
        if sub and isinstance(value, dict):
            nested += [_unread_key(table, f"{key}.{k}", version, sub) for k in value if f"{key}.{k}" not in sub]
    return top, nested


@check("SERVE307", "serve-additional-config-keys", severity="error", stage="serve", needs=["serve_cmd", "python"])
def additional_config_keys(ctx):
    """Every `--additional-config` key is one the installed vllm-ascend accepts

    What it checks: `--additional-config` parses as a JSON object, and each key (and, where the release validates a
    sub-config, each key of it) against the keys the installed vllm-ascend release accepts (the
    `serve/additional-config` table, taken from each release's source).

    Why it matters: up to 0.26.0rc1 vllm-ascend reads the dict with `.get`, so a key it does not read is ignored
    without a word. A `torchair_graph_config` or `ascend_scheduler_config` copied from an 0.11 tutorial
    (vllm-ascend#6187, #1350, #2943) does nothing on 0.12.0rc1 and later — torchair and the Ascend scheduler were
    dropped (#4814, #4623) — and a typo switches nothing on. From 0.27.1rc1 AscendConfig is a pydantic class that
    forbids unknown keys (#13838): the same key stops vLLM at start with `Unexpected keyword argument` (with
    vLLM-Omni installed an unknown top-level key only warns, #15418/#15515). A value that is not JSON stops vLLM at
    start.

    How to fix: remove the keys the release does not accept (see the release notes for their replacement: ACL graph
    via `--compilation-config`, vLLM's own scheduler), fix misspelt ones, or install the release that reads them.
    """
    from ._serve import json_option

    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    cfg, evidence, out = json_option(ctx, cmd, "additional_config")
    if out:
        return out
    version = _ascend_version(ctx)
    if version is None:
        return ctx.unknown(T("which vllm-ascend is installed is not known: its --additional-config keys cannot be "
                             "judged"), evidence)
    table = ctx.knowledge.additional_config
    row, how = table.row_for(version, stand_in_for(ctx, version))
    if row is None:
        return ctx.unknown(T("no recorded key list for vllm-ascend {version}: {why}", version=version, why=how),
                           evidence)
    evidence.append(ev(f"matrix: keys accepted by vllm-ascend {row.version}"
                       + (" (unknown keys rejected)" if row.strict else ""), row.source))
    top, nested = _unknown_keys(table, row, cfg, version)
    against = "" if how == "exact" else T(" (a development build, judged against {release}, the release that pairs "
                                          "the installed vLLM)", release=row.version) if how == "paired" else T(
        " (judged against {release}, the nearest older release recorded)", release=row.version)
    if not (top or nested):
        return ctx.ok(T("vllm-ascend {version} accepts all {n} --additional-config key(s){against}", version=version,
                        n=len(cfg), against=against), evidence)
    fix = T("Remove the keys the release does not accept, or correct their spelling (or install the release that "
            "reads them); for torchair_graph_config use ACL graph (`--compilation-config`), for "
            "ascend_scheduler_config vLLM's own scheduler.")
    py = ctx.try_fact("python")
    lenient = row.lenient_with if row.lenient_with and py is not None and py.dist(row.lenient_with) else None
    rejected = nested + ([] if lenient else top)
    if row.strict and how == "exact" and rejected:
        # AscendConfig(**kwargs) with extra="forbid": pydantic raises before the engine starts.
        return ctx.fail(T("vllm-ascend {version} stops at start on {n} --additional-config key(s) its AscendConfig "
                          "does not define (pydantic `Unexpected keyword argument`): {keys}", version=version,
                          n=len(rejected), keys=join("; ", rejected)), evidence, remediation=fix,
                        rejected=len(rejected))
    if row.strict:
        why = (T("{dist} is installed, so vllm-ascend {version} warns about them and drops them", dist=lenient,
                 version=version) if how == "exact" else
               T("{release} rejects unknown keys; vllm-ascend {version} is not recorded", release=row.version,
                 version=version))
        return ctx.warn(T("vllm-ascend {version} does not define {n} --additional-config key(s){against}: {keys} "
                          "({why})", version=version, n=len(top + nested), against=against,
                          keys=join("; ", top + nested), why=why), evidence, remediation=fix,
                        ignored=len(top + nested))
    return ctx.warn(T("vllm-ascend {version} ignores {n} --additional-config key(s){against}: {keys}",
                      version=version, n=len(top + nested), against=against, keys=join("; ", top + nested)),
                    evidence, remediation=fix, ignored=len(top + nested))
