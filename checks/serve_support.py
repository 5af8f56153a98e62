"""SERVE314: the command's model, features and chip against the installed vllm-ascend release's own support matrix
(docs/source/user_guide/support_matrix/, read per release into the `serve/support-matrix` table)."""

from __future__ import annotations

import posixpath
import re

from ascend_doctor.i18n import T, join
from ascend_doctor.knowledge.serve_features import used
from ascend_doctor.knowledge.support_matrix import doc_families, first_listing, rows_of
from ascend_doctor.plugin import check, ev

from ._hardware import host_families
from ._serve import cmd_or_skip, stand_in_for, unreadable


class _Named:
    """A model known by its path only."""

    def __init__(self, path: str):
        self.path, self.model, self.config = path, path, None


def _elsewhere(release, names: list, listed: set, fams: dict, here: set, model_path: str):
    """The warning for a model the matrix lists for other chips only, naming the release's own tutorial when one
    serves this checkpoint on this host's chip all the same (vllm-ascend#11406: the docs disagree)."""
    tutorial = release.tutorial_serving(model_path, here)
    return (T("{models} is listed for {listed} only in vllm-ascend {version}'s support matrix; this host's NPUs are "
              "{here}", models=" / ".join(names), listed="/".join(sorted(listed)), version=release.version,
              here=", ".join(f"{f} ({', '.join(sorted(set(fams[f])))})" if fams[f] else f for f in sorted(here)))
            + (T(" — but the release's own tutorial serves this checkpoint there ({where}): its docs disagree",
                 where=tutorial) if tutorial else ""))


def _newer_than_release(table, release, served, cmd, evidence: list) -> list:
    """A checkpoint with no row in the installed release's matrix that a later release's matrix is the first to list
    (GLM-5.2 on a release that predates it; blind holdout h38b's gap 1): one warning naming that release — unless the
    release's own tutorials serve this checkpoint (on any chip), or the later row names it beside a model this
    release lists (`Qwen3.5-27B / Qwen3.6-27B`), or this release's table or tutorials name another size of its model
    line (Qwen3.5-397B-A17B for Qwen3.5-35B-A3B): then the release does not predate it, its model table only lags
    (h38k, h38l and h38n false warnings)."""
    if not release.models:  # the release's model table was not read (an older layout): absence says nothing
        return []
    later, rows = first_listing(table, release, served)
    if later is None:
        return []
    listed = set(release.models)
    sibling = next((r for r in rows if r in listed or any(p.strip() in listed for p in r.split(" / "))), "")
    if sibling:  # the later row names it beside a model this release lists (`Qwen3.5-27B / Qwen3.6-27B`)
        evidence.append(ev(T("support-matrix rows of the model"), T(
            "none by this name in vllm-ascend {version}'s model table; {first}'s row {row} names it beside a model "
            "this release lists: the same model line, not a newer one", version=release.version, first=later.version,
            row=sibling)))
        return []
    family = _model_line(posixpath.basename((cmd.model or "").rstrip("/")))
    kin = sorted(m for m in listed | release.tutorial_checkpoints() if family and _model_line(m) == family)
    if kin:  # `Qwen3.5-35B-A3B` where the release serves Qwen3.5-397B-A17B: another size of its line
        evidence.append(ev(T("support-matrix rows of the model"), T(
            "none by this name in vllm-ascend {version}'s model table; its table or tutorials name {kin} of the same "
            "model line ({family}): the release does not predate it", version=release.version, kin=", ".join(kin[:4]),
            family=family)))
        return []
    tutorial = release.tutorial_serving(cmd.model or "", {t.partition(": ")[0] for t in release.tutorial_models})
    if tutorial:
        evidence.append(ev(T("support-matrix rows of the model"), T(
            "none in vllm-ascend {version}'s model table (first listed by {first}), but the release's own tutorial "
            "serves this checkpoint ({where}): the release does not predate it", version=release.version,
            first=later.version, where=tutorial)))
        return []
    return [T("{model} has no row in vllm-ascend {version}'s support matrix; the first release whose matrix lists it "
              "is {first} ({rows}): the installed release may predate it",
              model=posixpath.basename((cmd.model or "").rstrip("/")) or "?", version=release.version,
              first=later.version, rows=", ".join(rows))]


_SIZE = re.compile(r"-\d+(?:\.\d+)?[BM](?=$|[-_])", re.IGNORECASE)


def _model_line(name: str) -> str:
    """The model line a checkpoint name belongs to: the name before its size (`Qwen3.5-35B-A3B` -> `Qwen3.5`,
    `Qwen3-VL-235B-A22B-Instruct` -> `Qwen3-VL`); "" for a name without a size (`DeepSeek-V3.2`, `GLM-4.6`)."""
    m = _SIZE.search(name)
    return name[:m.start()].lower() if m and m.start() > 0 else ""


def _pairs(release, cmd, env, model) -> tuple[list, list]:
    """(problems, warnings) of the feature pairs the release's feature_matrix.md marks ❌ that the command uses: a
    pair the same release's own tutorials run together is two sources that disagree — a warning naming both, never
    a silent pick of either."""
    problems, warnings = [], []
    for pair in release.feature_pairs:
        a, b = pair.split(" + ", 1)
        ua, ub = used(a, cmd, env, model)[1], used(b, cmd, env, model)[1]
        if not (ua and ub):
            continue
        shown = release.tutorials_running(pair)
        if shown:
            warnings.append(T("{a} ({ua}) with {b} ({ub}): feature_matrix.md marks the pair ❌ (no compatibility), "
                              "but vllm-ascend {version}'s own tutorials run them together ({where}); the release's "
                              "docs disagree, so the doctor does not fail the pair — check in the start-up log that "
                              "both take effect", a=a, ua=ua, b=b, ub=ub, version=release.version, where=shown))
        else:
            problems.append(T("{a} ({ua}) with {b} ({ub}): feature_matrix.md marks the pair ❌ (no compatibility)",
                              a=a, ua=ua, b=b, ub=ub))
    return problems, warnings


def _hardware(release, names: list, fams, model_path: str, evidence: list) -> list:
    """The warning when the model's rows list other chips than this host's — judged only for chips some row of the
    release names: before 0.23.0 no row names a 300I Duo, so the column is silent on it, not against the model
    (a false warning of holdout h38c, #8284)."""
    here = set(fams or ()) - {"?"}
    listed: set = set()
    for e in release.hardware:
        if e.split(": ", 1)[0] in names:
            listed |= doc_families(e.split(": ", 1)[1])
    if not (names and listed and here) or here & listed:
        return []
    covered = set().union(*(doc_families(e.split(": ", 1)[1]) for e in release.hardware if ": " in e))
    if here & covered:
        return [_elsewhere(release, names, listed, fams, here, model_path)]
    evidence.append(ev(T("hardware column"), T(
        "no row of vllm-ascend {version}'s support matrix names {here}: its hardware column ({listed}) does not cover "
        "this host's chips, so it is not held against the model", version=release.version,
        here="/".join(sorted(here)), listed="/".join(sorted(covered)))))
    return []


@check("SERVE314", "serve-support-matrix", severity="error", stage="serve",
       needs=["serve_cmd", "python", "serve_model", "server_env", "npu_smi", "npu_family"])
def support_matrix(ctx):
    """The model, its features and the chip are not what the installed release's support matrix rules out

    What it checks: the served model against the rows of the installed vllm-ascend release's own support matrix
    (supported_models.md of that release, read from its sdist by `matrix sync`): a model marked ❌ not supported, a
    feature the command turns on that the model's row marks ❌ (LoRA, speculative decoding, P/D disaggregation,
    pipeline parallel, a graph mode, BF16 on Atlas 300I Duo…; a row that names its hardware counts only on that
    hardware), and the hardware the model's rows list against this host's NPUs (naming the release's own tutorial
    when one serves this checkpoint on this chip all the same; a chip no row of the release names — a 300I Duo
    before 0.23.0, whose matrices list A2/A3 only — is not judged by that column); a checkpoint the installed
    matrix has no row for that a later release's matrix lists warns, naming that release (not when the release's own
    tutorials serve that checkpoint). Rows are matched by
    model_type or architecture and by the most specific row name that begins the checkpoint folder's name. Pairs of
    features the release's feature_matrix.md marks ❌ ("No compatibility": EPLB with W4A8/W4A4 weights, KV Cache
    Pool with a multimodal model, …) are judged for every model; a pair the same release's own tutorials run
    together only warns (the release's docs disagree: docs/research/tutorial-controls.md). A feature counts only when
    the command asks for it; vLLM's defaults are not held against it. A development build named after a stale tag is
    judged against the matrix of the release that pairs its vLLM, and then only warns.

    Why it matters: the support matrix is the release's own statement of what it runs. A model or combination it
    marks ❌ is one its maintainers know does not work on that release — vllm-ascend#1972 (Llama 4), #2260 (GLM-4V),
    #2262 (Whisper) — and a model listed only for A2/A3 has not been run on a 300I Duo.

    How to fix: serve a model the release supports, drop the feature the release rules out for this model (or the
    other feature of an incompatible pair), or install the release whose matrix supports the combination; the
    finding names the row and the release's file.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    py = ctx.fact("python")
    dist = py.dist("vllm-ascend")
    if dist is None:
        return ctx.skip(T("vllm-ascend is not installed in the serving python: its support matrix does not apply"))
    table = ctx.knowledge.support_matrix
    release, how = table.row_for(dist.version, stand_in_for(ctx, dist.version))
    if release is None:
        return ctx.unknown(T("the support matrix of vllm-ascend {version} is not recorded (matrix sync reads it from "
                             "the release's sdist)", version=dist.version))
    # A development build is judged by the release that pairs its vLLM (the same weeks of main): its matrix may
    # differ, so what it rules out only warns.
    stand_in = "" if how == "exact" else T(" (vllm-ascend {installed} is a development build, judged against "
                                           "{release}'s matrix, the release that pairs the installed vLLM)",
                                           installed=dist.version, release=release.version)
    env = ctx.try_fact("server_env") or {}  # a paste may show no environment: its variables then count as unset
    model = ctx.try_fact("serve_model")
    evidence = [ev(f"matrix: serve/support-matrix.toml (vllm-ascend {release.version})",
                   f"{release.source}: {', '.join(release.where)}")]
    problems, warnings = _pairs(release, cmd, env, model)
    seen = []
    why_not = unreadable(model)
    # without its config.json, the folder's name can still say which checkpoint row it is (`Qwen3.5-27B-w8a8`)
    served = model if not why_not else _Named(cmd.model or "")
    names = rows_of(release, served)
    if names:
        evidence.append(ev(T("support-matrix rows of the model"), ", ".join(names)))
    else:
        warnings += _newer_than_release(table, release, served, cmd, evidence)
    fams = host_families(ctx)  # npu-smi's; a paste without its table: the family its image's suffix names
    here = set(fams or ()) - {"?"}
    for name in names:
        if name in release.not_supported:
            note = release.note_of(name)
            problems.append(T("vllm-ascend {version}'s support matrix marks {model} ❌ not supported{note}",
                              version=release.version, model=name, note=f" ({note})" if note else ""))
        for entry in release.model_feature:
            row, hw, feature = release.split(entry)
            if row != name:
                continue
            scope = doc_families(hw) if hw else set()
            known, words = used(feature, cmd, env, model)
            if not (known and words):
                continue
            if scope and not here:
                seen.append(T("{model} [{hw}]: {feature} (which NPUs this host has is not known)", model=name, hw=hw,
                              feature=feature))
            elif not scope or scope & here:
                problems.append(T("{feature} ({words}) is marked ❌ for {model}{on} in vllm-ascend {version}'s support "
                                  "matrix", feature=feature, words=words, model=name,
                                  on=T(" on {hw}", hw=hw) if hw else "", version=release.version))
    warnings += _hardware(release, names, fams, cmd.model or "", evidence)
    fix = T("Serve a model and features the release's support matrix supports, drop the feature it rules out, or "
            "install a release whose matrix supports them.")
    if problems and not stand_in:
        return ctx.fail(join("; ", problems + warnings), evidence, remediation=fix)
    if problems or warnings:
        return ctx.warn(join("; ", problems + warnings) + stand_in, evidence, remediation=fix)
    if seen:
        return ctx.unknown(T("not judged: {parts}", parts=join("; ", seen)) + stand_in, evidence)
    if why_not and not names:
        return ctx.ok(T("no feature pair the release rules out; the model's rows not judged: {why}", why=why_not)
                      + stand_in, evidence)
    if not names:
        return ctx.ok(T("no feature pair the release rules out; vllm-ascend {version}'s support matrix has no row for "
                        "this model", version=release.version) + stand_in, evidence)
    return ctx.ok(T("vllm-ascend {version}'s support matrix rules out nothing this command uses for {models}",
                    version=release.version, models=" / ".join(names)) + stand_in, evidence)
