"""SERVE313: the names inside the command's JSON options — the KV connector, the speculative method, the cudagraph
mode, the structured-outputs backend — against what the installed releases register (one mechanism for every kind:
ascend_doctor.knowledge.release_names)."""

from __future__ import annotations

import difflib
from typing import Optional

from ascend_doctor.i18n import T, join
from ascend_doctor.knowledge.release_names import CONFIG_CLASS, OPTION_KEYS, OPTION_VALUES, retypes, strict
from ascend_doctor.plugin import FactUnavailable, check, ev
from ascend_doctor.text.textsafe import clipped

from ._serve import cmd_or_skip, kv_connectors, project_label, rejected_name, stack_names

MAX_VALUES = 500  # keys and values judged per JSON option: one of a million keys is not a deployment


def _references(cmd) -> tuple[list, list]:
    """([(flag, json path, kind, name, projects or None)], [problems reading the JSON]) for every name the command
    gives inside a JSON option."""
    refs, problems = [], []

    def obj(option: str) -> Optional[dict]:
        if not cmd.has(option) or cmd.is_cut(option):  # a value the text ends inside is not judged
            return None
        value, err = cmd.json_value(option)
        if err:
            problems.append(T("--{flag} is not a JSON object vLLM can read: {error}",
                              flag=option.replace("_", "-"), error=err))
            return None
        return value if isinstance(value, dict) else None

    kv = obj("kv_transfer_config")
    for path, name in kv_connectors(kv) if kv is not None else ():  # with MultiConnector's members
        refs.append(("--kv-transfer-config", path, "kv_connector", name, None))
    spec = obj("speculative_config")
    if spec is not None and isinstance(spec.get("method"), str):
        refs.append(("--speculative-config", "method", "speculative_method", spec["method"], ("vllm",)))
    comp = obj("compilation_config")
    if comp is not None and isinstance(comp.get("cudagraph_mode"), str):
        refs.append(("--compilation-config", "cudagraph_mode", "cudagraph_mode", comp["cudagraph_mode"], None))
    so = obj("structured_outputs_config")
    if so is not None and isinstance(so.get("backend"), str):
        refs.append(("--structured-outputs-config", "backend", "structured_outputs_backend", so["backend"], None))
    word = T("key")
    for dest in cmd.options:  # the dotted form: --compilation-config.mode 3, --attention_config.backend X
        option, _, key = dest.partition(".")
        if key and option in OPTION_KEYS:
            refs.append(("--" + option.replace("_", "-"), word, OPTION_KEYS[option], key.split(".")[0], None))
    for option, kind in OPTION_KEYS.items():  # every top-level key, against the fields of its config class
        value = {"kv_transfer_config": kv, "speculative_config": spec, "compilation_config": comp,
                 "structured_outputs_config": so}.get(option) if option != "attention_config" else obj(option)
        for key in list(value or {})[:MAX_VALUES]:
            refs.append(("--" + option.replace("_", "-"), word, kind, str(key), None))
    return refs, problems


# Keys whose value a kind of its own judges (the connector, the method, the cudagraph mode, the backend).
_NAMED_KEYS = {("kv_transfer_config", "kv_connector"), ("speculative_config", "method"),
               ("compilation_config", "cudagraph_mode"), ("structured_outputs_config", "backend")}


def _values(cmd) -> list:
    """[(flag, option, key, value)] for every scalar a JSON option sets on a top-level key, in the JSON form or the
    dotted one (`--attention_config.indexer_kv_dtype int8`)."""
    out = []
    for option in OPTION_VALUES:
        if not cmd.has(option) or cmd.is_cut(option):
            continue
        value, err = cmd.json_value(option)
        for key, v in list((value or {}).items() if not err else ())[:MAX_VALUES]:
            out.append((option, str(key), v))
    for dest, v in cmd.options.items():
        option, _, key = dest.partition(".")
        if option in OPTION_VALUES and key and "." not in key:
            out.append((option, key, v))
    return [("--" + o.replace("_", "-"), o, k, v) for o, k, v in out
            if (o, k) not in _NAMED_KEYS and isinstance(v, (str, int)) and not isinstance(v, bool)]


def _judge_values(names, values: list, found: dict) -> None:
    """Each value against the constants its Literal-typed field admits in the installed vLLM, unless the installed
    vllm-ascend's platform patches retype the field (0.29.0rc1 widens `indexer_kv_dtype` with `int8`). Adds to
    `found`'s lists: bad, ignored, unseen, good, and sources."""
    patched = names.listed("vllm-ascend", "patched_field")
    lists = {option: names.listed("vllm", kind) for option, kind in OPTION_VALUES.items()}
    for flag, option, key, value in values:
        listed = lists[option]
        if listed is None:
            continue
        if listed.names is None:
            found["unseen"].append(T("{flag} {key} '{value}': {why}", flag=flag, key=key, value=clipped(value),
                                     why=listed.source))
            continue
        allowed = sorted(n.split("=", 1)[1] for n in listed.names if n.split("=", 1)[0] == key)
        if not allowed:  # not a Literal-typed field (a free string, a number, an enum): its key is judged above
            continue
        shown = clipped(value)
        if patched is not None and (patched.names is None or retypes(patched, key)):
            found["unseen"].append(T("{flag} {key} '{value}': {why}", flag=flag, key=key, value=shown, why=(
                patched.source if patched.names is None else
                T("vllm-ascend {version} retypes {key} in its platform patches", version=patched.version, key=key))))
            continue
        found["sources"].setdefault(listed.source, f"vLLM {listed.version}: {len(listed.names)} "
                                                   f"{OPTION_VALUES[option]}")
        if str(value) in allowed:
            found["good"].append(f"{flag} {key} '{shown}'")
            continue
        said = join("; ", [T("{flag} {key} '{value}' is not one of the values vLLM {version} accepts for {cls}.{key}"
                             " ({allowed})", flag=flag, key=key, value=shown, version=listed.version,
                             cls=CONFIG_CLASS[option], allowed=", ".join(allowed))]
                    + [T("did you mean {close}?", close=", ".join(close))
                       for close in [difflib.get_close_matches(str(value), allowed, n=2, cutoff=0.6)] if close])
        if listed.how in ("nearest older", "paired"):
            found["ignored"].append(said + T(" (judged against vLLM {release}, the nearest older recorded release)",
                                             release=listed.row_version))
        elif patched is not None and patched.how in ("nearest older", "paired"):  # a dev build may patch it
            found["ignored"].append(said + T(" (vllm-ascend {version}'s patches judged by those of {release})",
                                             version=patched.version, release=patched.row_version))
        else:
            found["bad"].append(said + T("; vLLM stops with a validation error for {cls} `{key}`",
                                         cls=CONFIG_CLASS[option], key=key))


def _eplb_reference(ctx, cmd, env):
    """(flag, path, kind, name, projects) for the model EPLB must register, when the command turns EPLB on; or a
    string saying why the model is not known; None when EPLB is off."""
    from ascend_doctor.knowledge.serve_features import used

    from ._serve import unreadable

    model = ctx.try_fact("serve_model")
    words = used("Eplb", cmd, env, model)[1]
    if not words:
        return None
    why = unreadable(model)
    if why:
        return why
    cfg = model.config
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else cfg  # vLLM's hf_text_config
    mt = text.get("model_type") or cfg.get("model_type")
    return (words.split(" ", 1)[0], words.split(" ", 1)[-1] + " with config.json model_type", "eplb_model_type",
            str(mt), ("vllm-ascend",)) if mt else None


def _platform_method(names, method: str) -> str:
    """The method vllm-ascend is handed: vLLM rewrites every MTP model type (`deepseek_mtp`, …) to `mtp` and
    `[ngram]` to `ngram` before the platform picks a proposer."""
    mtp = names.listed("vllm", "mtp_model_type")
    if mtp is not None and mtp.names and method in mtp.names:
        return "mtp"
    return "ngram" if method == "[ngram]" else method


def _platform_check(names) -> tuple[bool, str]:
    """(judge vllm-ascend's dispatcher too, why not). Only where the release takes the method as vLLM leaves it:
    its dispatcher handles `mtp`, or it is the drafter chain of NPUModelRunner (0.9.0rc1-0.10.1rc1, which compares
    the method vLLM 0.9-0.10 passes on as given: `deepseek_mtp`, `eagle3`). vllm-ascend 0.10.2rc1-0.11.0 patch
    SpeculativeConfig and re-detect the method from the draft model (`deepseek_mtp`, `ernie_mtp`, …;
    vllm_ascend/patch/platform/patch_config.py)."""
    listed = names.listed("vllm-ascend", "speculative_method")
    if listed is None:
        return False, ""
    if listed.names is None:
        return False, T("vllm-ascend's own method list not judged: {why}", why=listed.source)
    if "model_runner_v1.py" in (listed.source or ""):
        return True, ""
    if "mtp" not in listed.names:
        return False, T("vllm-ascend {version} re-detects the method itself: its dispatcher is not judged",
                        version=listed.version)
    return True, ""


def _stops(kind: str, platform: bool) -> str:
    """How the release refuses the name at start."""
    if kind == "kv_connector":
        return "`ValueError: Unsupported connector type`"
    if kind == "speculative_method":
        return "`ValueError: Unknown speculative decoding method`" if platform else T(
            "a validation error for SpeculativeConfig `method`")
    if kind == "cudagraph_mode":
        return T("a KeyError for CUDAGraphMode")
    if kind == "eplb_model_type":
        return '`NotImplementedError("EPLB is not supported.")`'
    if kind.endswith("_config_key"):
        return T("a validation error for its config class: `Extra inputs are not permitted`")
    return T("a validation error for StructuredOutputsConfig `backend`")


@check("SERVE313", "serve-release-names", severity="error", stage="serve",
       needs=["serve_cmd", "python", "vllm_files", "server_env", "serve_model"])
def release_names(ctx):
    """Every name inside the JSON options is one the installed release has

    What it checks: the names a command gives inside its JSON options — `kv_connector` of `--kv-transfer-config`
    (and each MultiConnector member's), `method` of `--speculative-config`, `cudagraph_mode` of
    `--compilation-config`, `backend` of `--structured-outputs-config`, every top-level key of those options and of
    `--attention-config` (and the value of each key whose field is a Literal: `kv_role`, `indexer_kv_dtype`, …, in
    the JSON or the dotted form), and the model itself when the command turns EPLB on — against what the installed
    vLLM and vllm-ascend define: the KV connectors both register (`KVConnectorFactory.register_connector`), vLLM's
    `SpeculativeMethod` and then vllm-ascend's own dispatcher (`get_spec_decode_method`, after vLLM has rewritten
    MTP model types to `mtp`), the `CUDAGraphMode` members, the `StructuredOutputsBackend` values, the model types
    vllm-ascend's EPLB registers (`model_register`, 0.10-0.14.0rc1: DeepSeek V2/V3 and Qwen3-MoE), the fields of the
    config class each JSON option is validated as (CompilationConfig, AttentionConfig, …) and the constants of its
    Literal-typed fields where pydantic validates them — unless vllm-ascend's platform patches retype the field
    (0.29.0rc1 on: `indexer_kv_dtype` gains `int8`), which is then not judged. The lists are read
    from the installed files; for a snapshot or a paste, from the `serve/names-vllm` and `serve/names-vllm-ascend`
    rows of the installed versions, which `matrix sync` reads from each release's sdist. A name a release dropped
    says which release dropped it; a near name is suggested. A release the doctor has not read (a development build,
    a tag newer than the rows) is judged against the nearest older recorded one, and then only warns; a development
    build named after a stale tag (0.19.1rc2.dev1265 beside vLLM 0.25.1), against the release pairing its vLLM.

    Why it matters: each of these stops vLLM at start, after the model config was read: `ValueError: Unsupported
    connector type: MooncakeConnectorV1` for a connector the installed vllm-ascend does not register (connectors
    were renamed between releases: `LLMDataDistCMgrConnector`, `MooncakeConnectorV1`, `MooncakeLayerwiseConnector`),
    `ValueError: Unknown speculative decoding method: draft_model` when vLLM accepts a method vllm-ascend has no
    proposer for, a pydantic error for a method or backend vLLM does not know, `NotImplementedError("EPLB is not
    supported.")` for dynamic EPLB on Qwen3-VL-MoE with 0.13.0rc1 (vllm-ascend#5798: "use >= v0.15.0"). A key the
    config class does not define stops vLLM 0.16.0 and later (`Extra inputs are not permitted`: its `config`
    decorator forbids extra keys) and is silently ignored before — a misspelt `cudagraph_capture_sizes` does nothing.

    How to fix: use a name the finding lists for the installed release (the connector names of its P/D
    disaggregation tutorial, a speculative method its proposer handles), or install the release that has it; a
    connector of your own needs `kv_connector_module_path`.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    refs, problems = _references(cmd)
    values = _values(cmd)
    try:
        eplb = _eplb_reference(ctx, cmd, ctx.try_fact("server_env") or {})  # a paste may show no environment
        env_unseen = False
    except FactUnavailable as exc:  # DYNAMIC_EPLB not shown (a paste's export lines): said only beside a verdict
        eplb, env_unseen = exc.reason, True
    unseen_eplb = [T("EPLB's model: {why}", why=eplb)] if isinstance(eplb, str) and not env_unseen else []
    refs += [eplb] if isinstance(eplb, tuple) else []
    if not refs and not problems and not values and not unseen_eplb:
        return ctx.skip(T("no JSON option, connector, speculative method, cudagraph mode or structured-outputs "
                          "backend named"))
    names = stack_names(ctx)
    evidence = [ev(T("command line"), cmd.source(opt.lstrip("-").replace("-", "_")))
                for opt in dict.fromkeys(r[0] for r in refs)]
    bad, unseen, good, sources, notes, ignored = list(problems), list(unseen_eplb), [], {}, [], []
    if env_unseen:  # beside the names the command gives: EPLB by DYNAMIC_EPLB alone is not known here
        notes.append(T("EPLB's model not judged: {why}", why=eplb))
    forbids = strict(names)
    for flag, path, kind, name, projects in refs:
        checks = [(kind, name, projects)]
        if kind == "speculative_method":
            platform, note = _platform_check(names)
            if platform:
                checks.append((kind, _platform_method(names, name), ("vllm-ascend",)))
            elif note:
                notes.append(note)
        for k, n, p in checks:
            v = names.judge(k, n, p)
            for x in v.lists:
                sources.setdefault(x.source, f"{project_label(x.project)} {x.version}: {len(x.names or ())} {k}")
            if not v.lists:
                continue
            if v.known is None:
                unseen.append(T("{flag} {path} '{name}': {why}", flag=flag, path=path, name=n,
                                why="; ".join(x.source for x in v.lists if x.names is None)))
            elif v.known is False:
                said = rejected_name(v, flag, path, k)
                older = [x for x in v.lists if x.how == "nearest older"]
                paired = [x for x in v.lists if x.how == "paired"]
                if older:  # a release the doctor has not read (a dev build, a newer tag): its list may differ
                    ignored.append(said + T(" (judged against {releases}, the nearest older recorded release)",
                                            releases=", ".join(f"{project_label(x.project)} {x.row_version}"
                                                               for x in older)))
                elif paired:  # a development build of main, judged by the release pairing its vLLM
                    ignored.append(said + T(" (a development build, judged against {releases}, the release that "
                                            "pairs the installed vLLM)",
                                            releases=", ".join(f"{project_label(x.project)} {x.row_version}"
                                                               for x in paired)))
                elif k in OPTION_KEYS.values() and not forbids:
                    ignored.append(said + T("; this vLLM ignores keys its config class does not define")
                                   if forbids is False else said)
                else:
                    how = _stops(k, p == ("vllm-ascend",))
                    bad.append(said + T("; vLLM stops with {how}", how=how))
                break
            else:
                good.append(f"{flag} {path} {n!r}")
    found = {"bad": bad, "ignored": ignored, "unseen": unseen, "good": good, "sources": sources}
    _judge_values(names, values, found)
    evidence += [ev(src, said) for src, said in sources.items()]
    if bad:
        return ctx.fail(join("; ", bad), evidence,
                        remediation=T("Use a name the installed release has (listed above), or install the release "
                                      "that has it; a KV connector of your own needs `kv_connector_module_path`."),
                        rejected=len(bad))
    if ignored:
        return ctx.warn(join("; ", ignored + [T("not judged: {parts}", parts=join("; ", unseen))] * bool(unseen)),
                        evidence, remediation=T("Use a name the installed release has (listed above)."),
                        doubtful=len(ignored))
    if unseen:
        return ctx.unknown(T("not judged: {parts}", parts=join("; ", unseen))
                           + (T(" (known: {good})", good=", ".join(good)) if good else ""), evidence)
    if not good:
        return ctx.skip(T("neither vLLM nor vllm-ascend is installed in the serving python"))
    return ctx.ok(T("the installed release has every name the command gives: {good}", good=", ".join(good))
                  + "".join(f" ({n})" for n in notes), evidence)
