"""SERVE2xx: the served model's directory — config.json (model_type, architecture), tool-parser family, quantization,
the path, the chat template — against the installed vLLM/transformers and the model-family table."""

from __future__ import annotations

import difflib
import shlex
from typing import Optional

from ascend_doctor.i18n import T, join
from ascend_doctor.plugin import check, ev

from ._serve import (
    chat_templates,
    cmd_evidence,
    cmd_or_skip,
    config_unknown,
    installed_names,
    model_config,
    model_or_outcome,
    stack_text,
    vllm_version,
)


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
    cmd, m, out = model_or_outcome(ctx)
    if out:
        return out
    if m.config is None:
        return ctx.fail(T("config.json of {path} cannot be read: {config_error}", path=m.path,
                          config_error=m.config_error),
                        [ev(f"dir: {m.path}", ", ".join(m.files[:40]))],
                        remediation=T("Point vllm serve at the directory that holds config.json and the weights (a "
                                      "complete download: `huggingface-cli download <repo> --local-dir DIR`)."))
    cfg = model_config(ctx, m)
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
        return vllm_version(ctx)
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
    cmd, m, out = model_or_outcome(ctx)
    if out:
        return out
    if m.config is None:
        return config_unknown(ctx, m)
    archs = model_config(ctx, m).get("architectures") or []
    evidence = [ev(f"file: {m.path}/config.json", f"architectures: {archs}")]
    if not archs:
        return ctx.unknown(T("config.json lists no architectures"), evidence)
    names, source, note = installed_names(ctx, "architectures", None)
    from_matrix = False
    if names is None:
        version = vllm_version(ctx)
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
                             vllm_version=vllm_version(ctx), archs=', '.join(archs), source=source, since=since),
                           evidence)
    evidence.append(ev(source, f"{len(names)} architectures; closest: "
                               f"{', '.join(difflib.get_close_matches(archs[0], sorted(names), n=5, cutoff=0.5))}"))
    if str(cmd.get("model_impl") or "") == "transformers":
        return ctx.warn(T("the installed {stack} has no native implementation of {archs}; --model-impl transformers "
                          "uses the Transformers backend", stack=stack_text(ctx),
                          archs=', '.join(archs)), evidence)
    first = ctx.matrix.first_vllm_with("architectures", archs[0])
    ascend = ctx.matrix.first_ascend_release_with_model("architectures", archs[0]) if first else None
    fix = None
    if first:
        fix = T("vLLM {first} is the first recorded release that implements {arch}{ascend}: upgrade vLLM and "
                "vllm-ascend together (`ascend-doctor matrix pins --vllm-ascend X` gives the pair), or use "
                "`--model-impl transformers` knowingly.", first=first, arch=archs[0],
                ascend=T(" (the first vllm-ascend release paired with such a vLLM: v{version})",
                         version=ascend.version) if ascend else "")
    return ctx.fail(T("the installed {stack} has no implementation of {archs}", stack=stack_text(ctx),
                      archs=', '.join(archs)), evidence, remediation=fix)


# model_type -> tool parsers that read that family's tool-call markup (matrix-facts §4.1/§4.3).
@check("SERVE203", "serve-parser-model-family", severity="error", stage="serve", needs=["serve_cmd", "serve_model"])
def parser_model_family(ctx):
    """The tool-call parser matches the model family

    What it checks: `--tool-call-parser` against the tool-call markup the chat template writes (`<tool_call>`,
    `<｜tool▁calls▁begin｜>`, DSML…, read with the smoke's markup table; the parser `ascend-doctor plan` chooses), and
    where the template writes none, against the model's `model_type` (config.json) by the model-family table
    the matrix's model-families.toml: DeepSeek-V3/R1 → deepseek_v3, V3.1 → deepseek_v31, V3.2 → deepseek_v32, V4 →
    deepseek_v4, Qwen → hermes / qwen3_coder, Kimi-K2 → kimi_k2, GLM-4.5 → glm45. Families not in the table pass
    unjudged.

    Why it matters: each family writes tool calls in its own markup (`<｜tool▁call▁begin｜>`, DSML
    `<｜DSML｜invoke>`, `<tool_call>`…). With the wrong parser the server answers 200 but the call arrives as raw
    markup in `content` and `tool_calls` is empty (vllm#26897: a V3.2 model served with deepseek_v31).

    How to fix: Use the parser the finding names (and the matching `--reasoning-parser` / `--tokenizer-mode`).
    """
    cmd, m, out = model_or_outcome(ctx)
    if out:
        return out
    parser = cmd.get("tool_call_parser")
    if not isinstance(parser, str):
        return ctx.skip(T("--tool-call-parser not given"))
    if m.config is None:
        return config_unknown(ctx, m)
    mt = model_config(ctx, m).get("model_type")
    evidence = [ev(f"file: {m.path}/config.json", f"model_type: {mt!r}"),
                ev(T("command line"), cmd.source("tool_call_parser"))]
    by_template = _template_parser_verdict(ctx, cmd, m, str(mt), parser, evidence)
    if by_template is not None:
        return by_template
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


def _effective_template(cmd, m) -> tuple[Optional[str], str]:
    """The template vLLM will use: --chat-template, else the model's chat_template.jinja/.json, else
    tokenizer_config.json."""
    if m.chat_template_arg is not None:
        return m.chat_template_arg, f"--chat-template {cmd.get('chat_template')}"[:200]
    if m.template_refused:  # a template file was not read: which one vLLM uses is not known
        return None, ""
    for name, text in sorted(m.chat_template_files.items()):
        return text, f"{m.path}/{name}"
    if m.tokenizer_chat_template:
        return m.tokenizer_chat_template, f"{m.path}/tokenizer_config.json"
    return None, ""


def _template_parser_verdict(ctx, cmd, m, mt: str, parser: str, evidence: list):
    """The parser the template's own markup needs (deploy.toolparser, as `ascend-doctor plan` chooses it) against
    --tool-call-parser; None when the template writes no known tool-call markup (the family rule decides)."""
    from ascend_doctor.deploy.template import read_template
    from ascend_doctor.deploy.toolparser import choose_parsers
    from ascend_doctor.smoke.leaks import detect_leaks

    text, where = _effective_template(cmd, m)
    if not text:
        return None
    found = detect_leaks(text, field="template", matrix=ctx.matrix)
    template = read_template(text, where, [(x.family, ctx.matrix.markup_families[x.family].tool_parser)
                                           for x in found])
    if template.tool_parser is None:
        return None
    planned = choose_parsers(ctx.matrix, mt, m.model, template).tool_parser
    evidence.append(ev(f"file: {where}", f"writes tool calls as {template.markup[0]} "
                                         f"({next(x.marker for x in found if x.family == template.markup[0])})"))
    if parser == planned:
        return ctx.ok(T("--tool-call-parser {parser} reads the {markup} markup the chat template writes",
                        parser=parser, markup=template.markup[0]), evidence)
    known = ctx.matrix.tool_parsers_for(mt, m.model)
    every = known[1] if known else []
    if parser in every and planned in every:
        return ctx.warn(T("the chat template writes {markup} calls, which {planned} reads; --tool-call-parser {parser} "
                          "expects another shape of the same family", markup=template.markup[0], planned=planned,
                          parser=parser), evidence,
                        remediation=T("Use `--tool-call-parser {planned}` (what `ascend-doctor plan` chooses for this "
                                      "template) unless this checkpoint really writes the other shape.",
                                      planned=planned))
    return ctx.fail(T("--tool-call-parser {parser} does not read the {markup} markup the chat template writes: calls "
                      "will arrive as raw text in `content`", parser=parser, markup=template.markup[0]), evidence,
                    remediation=T("Use `--tool-call-parser {planned}` (what `ascend-doctor plan` chooses for this "
                                  "template).", planned=planned), expected=[planned])


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
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    problems, evidence = [], []
    if "model" in cmd.cut:  # an offline LLM(model=…) whose value is no literal, or a value the paste ends inside
        return ctx.unknown(T("the model path is not shown: the text gives --model without its value"))
    model = cmd.model or cmd.get("model")
    served = cmd.get("served_model_name")
    if isinstance(model, str) and model:
        odd = _odd_chars(model)
        evidence.append(ev(T("command line"), f"model: {model}"))
        if odd:
            problems.append(T("the model path {model} contains {odd}{value}", model=repr(model), odd=', '.join(odd),
                              value='' if served else T(", and without --served-model-name clients must send it as "
                                                        "`model`")))
    if isinstance(served, str) and served:
        odd = _odd_chars(served)
        evidence.append(ev(T("command line"), cmd.source("served_model_name")))
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
       needs=["serve_cmd", "serve_model", "devices", "npu_smi", "vllm_files", "python"])
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
    cmd, m, out = model_or_outcome(ctx)
    if out:
        return out
    if not (cmd.flag("enable_auto_tool_choice") or cmd.get("tool_call_parser")):
        return ctx.skip(T("tool calling is not enabled"))
    mode = cmd.get("tokenizer_mode")
    mt = (model_config(ctx, m) if m.config is not None else {}).get("model_type")
    if mode in _OWN_ENCODER_MODES:
        # The pass rests on the mode existing in the installed vLLM: verified, not assumed (#22 "no pass that rests
        # on a broken fact"); SERVE103 says the same from the option's side.
        evidence = [ev(T("command line"), cmd.source("tokenizer_mode"))]
        names, source, note = installed_names(ctx, "tokenizer_modes", "tokenizer_mode")
        if names is None:
            return ctx.unknown(T("--tokenizer-mode {mode} would encode the chat without a Jinja template, but whether "
                                 "the installed vLLM has that mode is not known: {note}", mode=mode, note=note),
                               evidence)
        evidence.append(ev(source, ", ".join(sorted(names))))
        if mode not in names:
            return ctx.fail(T("--tokenizer-mode {mode} would encode the chat, but the installed {stack} does not have "
                              "that mode (see SERVE103): the chat has no template that renders the tools", mode=mode,
                              stack=stack_text(ctx)), evidence,
                            remediation=T("Upgrade to a vLLM with --tokenizer-mode {mode} (SERVE103 names the "
                                          "release), or pass a tool-aware template with --chat-template FILE.",
                                          mode=mode))
        return ctx.ok(T("--tokenizer-mode {mode} encodes the chat (tools included) without a Jinja template",
                        mode=mode), evidence)
    if m.chat_template_arg_error:
        return ctx.fail(m.chat_template_arg_error, [cmd_evidence(cmd)],
                        remediation=T("Fix the --chat-template path (it is read inside the container)."))
    if m.chat_template_arg is None and m.template_refused:
        return ctx.unknown(m.template_refused, [ev(f"dir: {m.path}", ", ".join(m.files[:40]))])
    candidates = chat_templates(cmd, m)
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
