"""SERVE320: the fixes later vllm-ascend releases made for the served model, which the installed release lacks (the
`signatures/release-fixes` table read from the project's git history; which model and features a fix is for, from
its subject: ascend_doctor.knowledge.fix_subjects)."""

from __future__ import annotations

from typing import Optional

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.i18n import T, join
from ascend_doctor.knowledge.fix_subjects import (
    conditions,
    connector_areas,
    distinct_features,
    folder_model,
    served_keys,
    vocabulary,
)
from ascend_doctor.knowledge.hardware import families
from ascend_doctor.knowledge.serve_features import used
from ascend_doctor.plugin import check, ev
from ascend_doctor.text.versions import try_parse_version

from ._serve import kv_connectors, unreadable

_SHOWN = 3  # fixes quoted in the message; the evidence lists them all


@check("SERVE320", "serve-release-fixes", severity="warning", stage="serve",
       needs=["python", "server_env", "serve_cmd", "serve_model", "npu_smi"])
def release_fixes(ctx):
    """The installed vllm-ascend release carries the fixes later releases made for the served model

    What it checks: every bug fix of vllm-ascend's history (the `signatures/release-fixes` table, read from the
    project's git history by `matrix sync --vllm-ascend-git`: each fix with the first release that carries it, a
    cherry-pick by PR number or by the same words included, and `since`, the first release that had the code it
    corrected, from git blame; a fix that only adds lines is dated at its own release) that applies to this
    deployment and that the installed release has the code of but not the fix. A fix applies when its subject names
    the served model — by vLLM's own names for it: `Qwen3-Next`, `qwen3_next`, `DeepSeek-V3.2`, `dsv32`; a variant
    such as `Qwen3-Embedding` only to a model of that name — or it changed only that model's files, or it changed
    only one KV connector's code (the module vllm-ascend's register_connector call loads for it, and the package
    that module has to itself: AscendStore's `kvpool/`) and --kv-transfer-config names that connector, or, naming no
    model, a combination of at least two features (`eagle3 … FULL_DECODE_ONLY`, `mtp torchair pd`; MTP, eagle3 and
    suffix decoding are one, speculative decoding); and when the command and host use every feature (MTP, EP, P/D
    disaggregation, ACL graph, PCP, FlashComm1, a quantized checkpoint — also when the fix changed only the
    quantization code…) and the chip it names. Reverts, and the fixes they undid, are not fixes. A fix whose subject
    names a condition the doctor cannot tell (a feature turned off, FlashComm2, sequence parallel, model runner v2,
    an adaptation to a later vLLM…), or one the source does not show (a paste's environment, the chip), is counted
    as not judged. The model is known from its config.json (model_type and architectures) or, when the files cannot
    be read (a paste), from the name its folder begins with. A development build is not judged: which fixes it
    carries depends on its commit, not its number.

    Why it matters: the release notes list a few known issues per release; the fixes a release does not carry are
    the rest. Users meet them as a crash at start or the first request, wrong output, or a hang, and report them
    against the release they run while the fix is already in the next one: Qwen3-235B-A22B and Qwen3-30B-A3B with
    ACL graph stopped with `Not all values of RelaxedUnspecConstraint(L['input_ids'].size()[0]) are valid`
    (vllm-ascend#1368), fixed by #1381 in 0.9.2rc1.

    Only a fix of a reported failure — its commit says it fixes an issue (`Fixes #1368`) — makes a warning: on 40
    threads drawn fresh from the tracker (docs/research/holdout-38/h38f.md) the subjects alone named a wrong fix
    more often than the thread's, so the other fixes that apply are listed as leads (evidence) beside the verdict,
    never as one.

    How to fix: install the release the finding names (the first that carries every fix listed; `ascend-doctor
    matrix pins --vllm-ascend X` prints its stack), or avoid the feature the fix names until then.
    """
    py = ctx.fact("python")
    dist = py.dist("vllm-ascend")
    if dist is None:
        return ctx.skip(T("vllm-ascend is not installed in the serving python: its fixes do not apply"))
    cmd = ctx.try_fact("serve_cmd")
    if cmd is None or not cmd.recognized:
        return ctx.skip(T("no `vllm serve` command: the model and features the fixes name are the command's"))
    table = ctx.knowledge.release_fixes
    v, newest = try_parse_version(dist.version), try_parse_version(table.newest)
    if v is None or newest is None or v.is_devrelease() or v.local:
        return ctx.unknown(T("vllm-ascend {version} is a development or local build: which fixes it carries depends "
                             "on its commit, not its number", version=dist.version))
    vocab = _vocabulary(ctx)
    keys, how, short = _model_keys(ctx, cmd, vocab)
    found, judged, open_ = _lacking(ctx, cmd, keys, dist.version, table, vocab)
    beyond = T(" (the history read ends at {newest}: later fixes are not recorded)", newest=table.newest) \
        if v > newest else ""
    tail = T("; {n} more not judged: they name what this deployment does not show ({words})", n=len(open_),
             words=", ".join(sorted({w for ws in open_ for w in ws}))) if open_ else ""
    reported = [x for x in found if x[0].issues]
    leads = [x for x in found if not x[0].issues]
    evidence = [_evidence(f, seen, table) for f, seen, _ in reported + leads]
    if leads:
        tail = T("; {n} other later fix(es) touch it, none for a reported failure: leads, not a verdict "
                 "(evidence)", n=len(leads)) + tail
    if reported:
        return _warning(ctx, dist.version, table, reported, keys, how, short, tail, evidence)
    if not keys:
        return ctx.unknown(T("{cause}; vllm-ascend {version} lacks no fix of a reported failure for the feature "
                             "combinations this command uses ({n} recorded){beyond}", cause=how,
                             version=dist.version, n=judged, beyond=beyond) + tail if judged else how, evidence)
    return ctx.ok(T("vllm-ascend {version} lacks no fix of a reported failure for {model} or the feature "
                    "combinations this command uses ({n} recorded fix(es) apply){beyond}", version=dist.version,
                    n=judged, model=how, beyond=beyond) + tail, evidence)


def _evidence(f, seen, table):
    return ev(f"fix {f.sha} (#{f.pr})" if f.pr else f"fix {f.sha}",
              T("{subject} — first in {first}{issues}; the command: {seen}", subject=f.subject,
                first=f.first or T("no release up to {newest}", newest=table.newest),
                issues=T(" (fixes {issues})", issues=", ".join(f"#{i}" for i in f.issues)) if f.issues else "",
                seen=", ".join(seen) or T("the model alone")))


def _warning(ctx, version, table, found, keys, how, short, tail, evidence):
    """The warning for the fixes of reported failures the release lacks: the first few quoted, the release that
    carries them all."""
    hits = [f for f, _, _ in found]
    released = [f for f in hits if f.first]
    release = _carrying_all(ctx, released, version, table.newest) if released else None
    quoted = join("; ", [T("'{subject}' (in {first})", subject=f.subject,
                           first=f.first or T("no release up to {newest}", newest=table.newest))
                         for f in hits[:_SHOWN]])
    more = T(" and {n} more (evidence)", n=len(hits) - _SHOWN) if len(hits) > _SHOWN else ""
    unreleased = len(hits) - len(released)
    where = join("; ", [x for x in (
        (T("{release} carries them all", release=release) if len(released) == len(hits) else
         T("{release} carries {n} of them", release=release, n=len(released))) if release else None,
        T("{n} reached no release up to {newest}, the newest the history read holds", n=unreleased,
          newest=table.newest) if unreleased else None) if x is not None])
    fix = (T("Install vllm-ascend {release} or later (`ascend-doctor matrix pins --vllm-ascend {release}` prints its "
             "stack).", release=release) if release else
           T("Install a vllm-ascend release newer than {newest}: the fixes listed reached none up to it.",
             newest=table.newest))
    groups: dict = {}
    for _, _, label in found:
        groups[label] = groups.get(label, 0) + 1
    what = join("; ", [T("{label}: {n}", label=label or short, n=n) for label, n in groups.items()])
    if not keys:
        where = join("; ", [where, T("the model's own fixes were not judged: {cause}", cause=how)])
    return ctx.warn(T("vllm-ascend {version} lacks {n} fix(es) of reported failures that later releases made for "
                      "what this deployment runs ({what}): {quoted}{more}; {where}", version=version, n=len(hits),
                      what=what, quoted=quoted, more=more, where=where + tail), evidence, remediation=fix,
                    fixes=[f.pr or f.sha for f in hits], carried_by=release)


def _model_keys(ctx, cmd, vocab: frozenset) -> tuple[set, str, str]:
    """(the served model's names as fix subjects are matched, how the doctor knows them — or why it does not —, its
    name in a few words)."""
    m = ctx.try_fact("serve_model")
    hit = folder_model(getattr(cmd, "model", None) or "", vocab)
    if m is not None and unreadable(m) is None:
        keys = served_keys(m.config)
        if hit and hit[0] not in vocab:  # a variant the folder names (Qwen3-Embedding-8B): its fixes apply too
            keys.add(hit[0])
        arch = (m.config.get("architectures") or ["?"])[0] if isinstance(m.config, dict) else "?"
        return keys, T("{arch} ({path}/config.json)", arch=arch, path=m.path), arch
    if hit:
        return {hit[0]}, T("{model} (the name of {path}; its config.json was not read)", model=hit[1],
                           path=cmd.model), hit[1]
    why = unreadable(m) if m is not None else T("the served model was not looked at")
    return set(), T("which model is served is not known: {cause}, and its folder name {path} begins with no model "
                    "name vLLM uses", cause=why, path=getattr(cmd, "model", None) or "?"), ""


def _vocabulary(ctx) -> frozenset:
    """Every model name the recorded vLLM releases use (fix_subjects.vocabulary), once per run of the check."""
    arch, types = set(), set()
    for row in ctx.knowledge.matrix.vllm_models:
        arch.update(row.architectures)
        types.update(row.model_types)
    return vocabulary(arch, types)


def _lacking(ctx, cmd, keys: set, version: str, table, vocab: frozenset) -> tuple[list, int, list]:
    """([(fix, what the command shows of its features, "" for a fix of the model or its feature combination)] of
    the fixes that apply and the release lacks, earliest release first; how many fixes apply; what kept the others
    that could apply from being judged). A fix applies when its subject (or the model files it alone changed) names
    the served model, or — naming no model — at least two distinct features (fix_subjects.distinct_features); when the
    command uses every feature it names, on the chip it names; and when the release has the code it corrected."""
    env = ctx.try_fact("server_env") or {}
    model = ctx.try_fact("serve_model")
    fams = families(ctx.try_fact("npu_smi"))
    here = set(fams) - {"?"} if fams else set()  # a chip not seen: a fix for one chip is not judged
    found, judged, open_ = [], 0, []
    pairs = [(f.subject, tuple(f.functions)) for f in table.fix]
    modules = _modules(ctx)
    mine = _connectors(cmd, modules)
    for f, (models, features, chips, unjudged, connectors) in zip(table.fix, conditions(pairs, vocab,
                                                                                      connector_areas(modules))):
        if models and not keys & set(models):
            continue
        if connectors and mine is not _UNSEEN and not mine & set(connectors):
            continue  # another KV connector's fix, or the command uses none
        if not models and not connectors and len(distinct_features(features)) < 2:
            continue
        if (here and chips and not here & set(chips)) or not f.present_in(version):
            continue  # another chip's fix; or the release never had the code it corrects
        seen = [_used(name, cmd, env, model) for name in features]
        if any(s is None for s in seen):
            continue
        unseen = list(unjudged) + [n for n, s in zip(features, seen) if s is _UNSEEN] + (
            [T("the chip ({chips})", chips="/".join(chips))] if chips and not here else []) + (
            [T("the KV connector (--kv-transfer-config not read)")] if connectors and mine is _UNSEEN else [])
        if unseen:
            if f.lacked_by(version, table.newest):
                open_.append(unseen)
            continue  # a carried fix says nothing, whatever it names
        judged += 1
        if f.lacked_by(version, table.newest):
            used_here = sorted(mine & set(connectors)) if connectors else []
            found.append((f, used_here + seen, "" if models else " + ".join(used_here or features)))
    top = try_parse_version(table.newest)
    found.sort(key=lambda x: (not x[0].first, try_parse_version(x[0].first) if x[0].first else top, x[0].sha))
    return found, judged, open_


_UNSEEN = object()  # a feature the source does not show (a paste without the environment or the model's files)


def _modules(ctx) -> set:
    """`Name=module` of every recorded vllm-ascend release's register_connector calls (where each connector's code
    lives: fix_subjects.connector_areas)."""
    table = ctx.knowledge.release_names.get("vllm-ascend")
    return {p for r in (table.releases if table is not None else ()) for p in r.names.get("kv_connector_module", ())}


def _connectors(cmd, modules: set):
    """The KV connectors the command's --kv-transfer-config names (a set, empty without the option) — by name, or by
    a `kv_connector_module_path` that loads one of vllm-ascend's own modules —, or _UNSEEN when the text cuts the
    option or its JSON does not parse (SERVE313 reports that)."""
    if not cmd.has("kv_transfer_config"):
        return set()
    if cmd.is_cut("kv_transfer_config"):
        return _UNSEEN
    value, err = cmd.json_value("kv_transfer_config")
    if err or not isinstance(value, dict):
        return _UNSEEN
    extra = value.get("kv_connector_extra_config")
    subs = extra.get("connectors") if isinstance(extra, dict) else None
    paths = {c.get("kv_connector_module_path") for c in [value, *(subs if isinstance(subs, list) else [])]
             if isinstance(c, dict)}
    by_path = {pair.partition("=")[0] for pair in modules if pair.partition("=")[2] in paths}
    return {name for _, name in kv_connectors(value)} | by_path


def _used(name: str, cmd, env, model):
    """What the command shows of feature `name`; None when it does not use it (or the doctor cannot tell the
    feature); _UNSEEN when the source does not show what would say."""
    try:
        known, words = used(name, cmd, env, model)
    except FactUnavailable:
        return _UNSEEN
    return words if known else None


def _carrying_all(ctx, hits: list, installed: str, newest: str) -> Optional[str]:
    """The first recorded release above the installed one that carries every fix in `hits`."""
    v = try_parse_version(installed)
    later = sorted({r.version for r in ctx.knowledge.matrix.releases
                    if (try_parse_version(r.version) or v) > v}, key=try_parse_version)
    return next((r for r in later if all(f.carried_by(r, newest) for f in hits)), None)
