"""SERVE315: the known issues of the installed vllm-ascend release, matched against this deployment: its notes'
"Known issues" (the `serve/known-issues` table) and the bugs its release checklist tracked open (`serve/open-bugs`),
each with the conditions its source states."""

from __future__ import annotations

from ascend_doctor.i18n import T, join
from ascend_doctor.knowledge.known_issues import KnownIssue, applies
from ascend_doctor.knowledge.open_bugs import OpenBug
from ascend_doctor.plugin import check, ev

from ._hardware import host_families
from ._serve import unreadable
from ._vllm import stack_versions


@check("SERVE315", "serve-known-issues", severity="warning", stage="serve",
       needs=["python", "server_env", "stack", "cann", "serve_cmd", "serve_model", "npu_smi", "npu_family"])
def known_issues(ctx):
    """No known issue of the installed release applies to this deployment

    What it checks: the "Known issues" of the installed vllm-ascend release's notes (and any the notes say reach
    further), and the bugs the release's checklist ("[Release]: Release checklist for vX", its "Bug need Solve"
    list) still tracked open when it shipped, each with the conditions its source states — the model, the features
    the command turns on (EP, a graph mode, MTP, P/D disaggregation, EPLB, sleep mode, tool calling…), CANN or
    driver versions, the CPU, the chip — against this deployment. Under plain `check` (no serve command) only the
    rows that need no command are judged. A version the matrix does not record is judged by the rows of the release
    that stands for it — for a development build named after a stale tag, the release pairing its vLLM; else the
    nearest older release — and says so.

    Why it matters: a known issue is a failure the release's own maintainers have seen and written down, usually
    with the workaround: "GLM-5.1 deployments can hit MoeDistributeDispatchV2/NPU graph failures when Expert
    Parallel is used together with FULL graph mode" (v0.21.0rc1, vllm-ascend#9503), "FULL_AND_PIECEWISE on older
    HDK/CANN … graph capture failures". A checklist's open bug is one they tracked but did not write into the notes
    (Qwen3.5 with MTP, FULL_DECODE_ONLY and async scheduling repeating itself, vllm-ascend#7595, open at
    v0.18.0rc1). Users meet them after the launch, as a crash, a hang or wrong output.

    How to fix: apply the workaround the finding quotes (drop the feature, switch the graph mode, upgrade
    CANN/HDK), or install the release that fixes it.
    """
    py = ctx.fact("python")
    dist = py.dist("vllm-ascend")
    if dist is None:
        return ctx.skip(T("vllm-ascend is not installed in the serving python: its release notes do not apply"))
    version, note = _notes_release(ctx, dist.version)
    if version is None:
        return ctx.unknown(note)
    rows = [k for k in ctx.knowledge.known_issues.known_issue if k.for_release(version)]
    rows += [b for b in ctx.knowledge.open_bugs.open_bug if b.for_release(version)]
    judged = [k for k in rows if k.conditioned]
    if not rows:
        return ctx.ok(T("the release notes list no known issue for vllm-ascend {version}", version=version) + note)
    hits, open_ = _judge(ctx, judged)
    if hits:
        return ctx.warn(join("; ", [_said(k, version, seen) for k, seen in hits]) + note,
                        [_evidence(k) for k, _ in hits],
                        remediation=join("\n", [f"{k.id}: {k.fix}" for k, _ in hits if k.fix]) or None,
                        known_issues=[k.id for k, _ in hits if isinstance(k, KnownIssue)],
                        open_bugs=[k.id for k, _ in hits if isinstance(k, OpenBug)],
                        notes_of=version, installed=dist.version)
    unjudged = len(rows) - len(judged)
    tail = T(" ({n} more state no condition a deployment shows)", n=unjudged) if unjudged else ""
    if open_:
        need = sorted({p for _, parts in open_ for p in parts})
        return ctx.ok(T("{n} known issue(s) of vllm-ascend {version} checked, none applies; {m} not judged without: "
                        "{need}{tail}", n=len(judged) - len(open_), version=version, m=len(open_),
                        need=", ".join(need), tail=tail) + note)
    return ctx.ok(T("none of the {n} known issue(s) of vllm-ascend {version} with stated conditions applies{tail}",
                    n=len(judged), version=version, tail=tail) + note)


def _judge(ctx, judged: list) -> tuple[list, list]:
    """(rows that apply with what matched, rows not judged with what was not seen) of the conditioned rows."""
    cmd = ctx.try_fact("serve_cmd")
    cmd = cmd if cmd is not None and cmd.recognized else None
    model = ctx.try_fact("serve_model") if cmd is not None else None
    model_seen = model is not None and unreadable(model) is None
    versions, _ = stack_versions(ctx, {n for k in judged for n in k.stack})
    fams = host_families(ctx)  # npu-smi's; a paste without its table: the family its image's suffix names
    here = set(fams) - {"?"} if fams else None
    env = ctx.try_fact("server_env") or {}  # a paste may show no environment: its variables then count as unset
    hits, open_ = [], []
    for k in judged:
        ok, said = applies(k, versions=versions, families=here, cmd=cmd, env=env, model=model,
                           model_seen=model_seen)
        if ok:
            hits.append((k, said))
        elif ok is None:
            open_.append((k, said))
    return hits, open_


def _said(row, version: str, seen: list) -> str:
    if isinstance(row, OpenBug):
        return T("vllm-ascend {release}: bug vllm-ascend#{n} was open when the release shipped (its release "
                 "checklist lists it unsolved; seen on {where}) ({seen}): {says}", release=version, n=row.number,
                 where=", ".join(row.seen), seen=", ".join(seen), says=row.says)
    return T("vllm-ascend {release} known issue {id} ({seen}): {says}", release=row.release, id=row.id,
             seen=", ".join(seen), says=row.says or row.text)


def _evidence(row):
    if isinstance(row, OpenBug):
        return ev(f"{row.id} ({row.issue})", row.title + "\n" + "\n".join(row.checklists))
    return ev(f"{row.id} ({row.source})", row.text + (f"\n{' '.join(row.links)}" if row.links else ""))


def _notes_release(ctx, installed: str):
    """(the release whose notes are read, a note saying so when it is not the installed one): the installed
    release when the matrix records it; for a development build named after a stale tag, the release pairing its
    vLLM; for another version the matrix does not record (a newer tag, a build between two), the nearest older
    release. (None, why) when no recorded release stands for it — its notes are not known, which is no "pass"."""
    from ._serve import paired_of

    matrix = ctx.knowledge.matrix
    if matrix.vllm_ascend_release(installed) is not None:
        return installed, ""
    paired = paired_of(ctx)
    if paired is not None:
        return paired, T(" (vllm-ascend {installed} is a development build: judged by the notes of {release}, the "
                         "release that pairs the installed vLLM)", installed=installed, release=paired)
    row, relation = matrix.nearest_release(installed)
    if row is not None and relation in ("between", "newer-than-matrix"):
        return row.version, T(" (vllm-ascend {installed} is not a recorded release: judged by the notes of "
                              "{release}, the nearest older one)", installed=installed, release=row.version)
    return None, T("vllm-ascend {installed} is not a release the recorded notes cover, and no older one is recorded",
                   installed=installed)
