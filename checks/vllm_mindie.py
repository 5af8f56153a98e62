"""VLLM108: MindIE Turbo beside the vllm-ascend release its official table pairs it with (the matrix row's
`mindie_turbo`, read by `matrix sync` from the "MindIE Turbo" column of docs/source/community/versioning_policy.md)."""

from __future__ import annotations

from ascend_doctor.i18n import T
from ascend_doctor.plugin import check, ev
from ascend_doctor.text.versions import try_parse_version

from .torch import dist_evidence

MINDIE = "mindie-turbo"
MODULE = "mindie_turbo"  # what the worker's `try_register_lib("mindie_turbo", …)` imports (names kind registered_lib)


def _imports_turbo(ctx, version: str):
    """(whether the release's worker imports mindie_turbo, the last recorded release that does), from the
    `registered_lib` names `matrix sync` reads in each sdist (0.7.1rc1-0.11.0 call try_register_lib("mindie_turbo"),
    0.12.0rc1 on do not); None when no row says (an older release than the table, a table without the kind)."""
    table = ctx.knowledge.release_names.get("vllm-ascend")
    row, _ = table.row_for(version) if table is not None else (None, "")
    libs = row.joined("registered_lib") if row is not None else None
    if libs is None:
        return None
    return MODULE in libs, table.history("registered_lib", MODULE, version)[0]


def _same_line(installed: str, paired: str) -> bool:
    """2.0.rc2 and 2.0rc1 are one line (2.0): the table names the first build of the line it pairs."""
    a, b = try_parse_version(installed), try_parse_version(paired)
    return a is not None and b is not None and a.release[:2] == b.release[:2]


@check("VLLM108", "mindie-turbo-pair", severity="warning", needs=["python"])
def mindie_turbo_pair(ctx):
    """MindIE Turbo, if installed, is the one the vllm-ascend release is paired with

    What it checks: when the serving environment has `mindie-turbo`, the MindIE Turbo the official compatibility
    table pairs with the installed vllm-ascend release (its "MindIE Turbo" column: 2.0rc1 for v0.7.3 and
    v0.7.3.post1, none for any other release). From 0.12.0rc1 the release no longer imports it: a pass.

    Why it matters: vllm-ascend imports `mindie_turbo` when it is installed and swallows any error, so a build made
    for another vLLM either changes nothing ("MindIE Turbo is installed" never logged, vllm-project/vllm-ascend#2451
    on v0.9.1rc2) or patches what the release no longer expects: graph capture failing in its operators on
    v0.9.1rc1 (#1534). The v0.9.1 notes: "the old version of Mindie Turbo is not compatible. Please do not install
    it. Currently all the function and enhancement is included in vLLM Ascend already."

    How to fix: `pip uninstall mindie-turbo` on any release but v0.7.3/v0.7.3.post1; on those, install the paired
    line (`pip install mindie-turbo==2.0rc1`, the release's `mindie-turbo` extra).
    """
    py = ctx.fact("python")
    turbo = py.listed(MINDIE)  # a list that does not name it (a paste) leaves nothing to judge: not asked for
    if turbo is None:
        return ctx.skip(T("MindIE Turbo is not installed") if py.lists(MINDIE) else
                        T("no mindie-turbo among the packages read"))
    ascend = py.listed("vllm-ascend")
    if ascend is None:
        return ctx.unknown(T("mindie-turbo {turbo} is installed; the vllm-ascend release it runs beside is not known",
                             turbo=turbo.version), dist_evidence(py, MINDIE, "vllm-ascend"))
    evidence = dist_evidence(py, MINDIE, "vllm-ascend")
    row = ctx.matrix.vllm_ascend_release(ascend.version)
    if row is None:
        return ctx.unknown(T("the matrix has no row for vllm-ascend {version}: which MindIE Turbo it pairs is not "
                             "known", version=ascend.version), evidence)
    evidence.append(ev(f"matrix: vllm-ascend {row.version} row", T("MindIE Turbo: {paired}",
                                                                   paired=row.mindie_turbo or T("none"))))
    imported = _imports_turbo(ctx, ascend.version)
    if row.mindie_turbo is None and imported is not None and not imported[0]:
        return ctx.ok(T("mindie-turbo {turbo} is installed, and vllm-ascend {version} does not import it (its source "
                        "has no try_register_lib(\"mindie_turbo\") call; the last release with one: {last}): it has "
                        "no effect", turbo=turbo.version, version=ascend.version, last=imported[1] or T("none")),
                      evidence)
    if row.mindie_turbo is None:
        return ctx.warn(T("mindie-turbo {turbo} is installed, but the official table pairs no MindIE Turbo with "
                          "vllm-ascend {version} (only 2.0rc1 with v0.7.3 and v0.7.3.post1): vllm-ascend imports it "
                          "anyway and ignores its errors", turbo=turbo.version, version=ascend.version),
                        evidence, remediation=T("pip uninstall mindie-turbo (the v0.9.1 notes: \"the old version of "
                                                "Mindie Turbo is not compatible. Please do not install it\")."))
    if not _same_line(turbo.version, row.mindie_turbo):
        return ctx.warn(T("mindie-turbo {turbo} is installed; vllm-ascend {version} is paired with MindIE Turbo "
                          "{paired}", turbo=turbo.version, version=ascend.version, paired=row.mindie_turbo),
                        evidence, remediation=T("pip install mindie-turbo=={paired}", paired=row.mindie_turbo))
    return ctx.ok(T("mindie-turbo {turbo} is the MindIE Turbo line vllm-ascend {version} is paired with ({paired})",
                    turbo=turbo.version, version=ascend.version, paired=row.mindie_turbo), evidence)
