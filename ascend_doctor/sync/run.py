"""One `matrix sync` run: read every input, compare with the matrix, render the proposals.

Kept apart from the CLI so tests (and a maintainer's script) can call `sync()` on paths and get the proposals as
data. Nothing here touches the network: PyPI answers come from JSON files saved beforehand.
"""

from __future__ import annotations

import os
from datetime import date
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ascend_doctor.core.errors import InputError
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T
from ascend_doctor.knowledge.files import shown
from ascend_doctor.knowledge.matrix import Matrix
from ascend_doctor.sync.archive import open_tree
from ascend_doctor.sync.ascend import AscendOwn, AscendTable, cite, read_own, read_release_table
from ascend_doctor.sync.ascend_config import read_release_keys
from ascend_doctor.sync.diff import (
    Proposal,
    config_key_proposals,
    index_proposals,
    model_proposals,
    option_proposals,
    parser_proposals,
    release_proposals,
    transformers_proposals,
)
from ascend_doctor.sync.flashcomm_vl import flashcomm_vl_proposals, merge_flashcomm_vl, read_flashcomm_vl
from ascend_doctor.sync.hf import read_transformers_release
from ascend_doctor.sync.images import image_proposals, merge_images, read_images
from ascend_doctor.sync.kv_pool_env import kv_pool_env_proposals, merge_kv_pool_env, read_kv_pool_env
from ascend_doctor.sync.metadata import read_pypi_json
from ascend_doctor.sync.names import names_proposals, read_names
from ascend_doctor.sync.package_holes import hole_review, package_holes
from ascend_doctor.sync.quant_schemes import merge_quant_schemes, quant_scheme_proposals, read_quant_schemes
from ascend_doctor.sync.refusals import merge_refusals, read_refusals, refusal_proposals
from ascend_doctor.sync.release_changes import change_proposals, read_release_changes
from ascend_doctor.sync.release_notes import NOTES, known_issue_proposals, merge, read_known_issues
from ascend_doctor.sync.support_matrix import read_support_matrix, support_proposals
from ascend_doctor.sync.tomlout import emit_rows
from ascend_doctor.sync.vllm import _sha256, read_vllm_release
from ascend_doctor.text.versions import parse_version

# table -> the shipped file its rows belong in
TARGET = {table: shown(f"{name}.toml") for table, name in (
    ("vllm_ascend_release", "vllm-ascend"), ("vllm_parsers", "vllm-parsers"), ("vllm_models", "vllm-models"),
    ("vllm_options", "vllm-options"), ("transformers_models", "transformers-models"),
    ("package_index", "package-index"), ("additional_config", "serve/additional-config"),
    ("names_vllm", "serve/names-vllm"), ("names_vllm_ascend", "serve/names-vllm-ascend"),
    ("support_matrix", "serve/support-matrix"), ("known_issues", "serve/known-issues"),
    ("release_fixes", "signatures/release-fixes"), ("release_refusals", "signatures/release-refusals"),
    ("kv_pool_env", "serve/kv-pool-env"), ("images", "serve/images"),
    ("flashcomm_vl", "serve/flashcomm-vl"), ("quant_schemes", "serve/quant-schemes"),
    ("release_changes", "serve/release-changes"))}
ORDER = tuple(TARGET)
# a table whose rows the file names otherwise (`[[release]]`)
ARRAY = {"additional_config": "release", "names_vllm": "release", "names_vllm_ascend": "release",
         "support_matrix": "release", "known_issues": "known_issue", "release_fixes": "fix",
         "release_refusals": "refusal", "kv_pool_env": "requirement", "images": "image",
         "flashcomm_vl": "release", "quant_schemes": "release", "release_changes": "change"}
# the tables read from a release tree with (read, listdir), one row per release: (reader, merger, proposer)
TREE_ROWS = {"flashcomm_vl": (read_flashcomm_vl, merge_flashcomm_vl, flashcomm_vl_proposals),
             "quant_schemes": (read_quant_schemes, merge_quant_schemes, quant_scheme_proposals)}


class SyncResult(Model):
    read: List[str] = []  # one line per input: what it was read as
    proposals: List[Proposal] = []
    review: List[str] = []  # what a maintainer must read and write by hand (a release's package holes)


def sync(matrix: Matrix, *, ascend: Sequence[str] = (), vllm: Sequence[str] = (), transformers: Sequence[str] = (),
         pypi_json: Sequence[str] = (), today: Optional[date] = None, additional_config=None,
         names: Optional[Dict[str, Any]] = None, support=None, known_issues=None, ascend_git: Optional[str] = None,
         release_fixes=None, refusals=None, kv_pool_env=None, images=None, flashcomm_vl=None,
         quant_schemes=None, release_rules=None, release_changes=None) -> SyncResult:
    """Read the inputs and propose rows. InputError (one line, naming the file) for an input that is not what its
    option says. `additional_config` is the serve/additional-config table the vllm-ascend releases' keys are
    compared with, `names` project -> its serve/names-* table, `support` the serve/support-matrix table,
    `known_issues` the serve/known-issues table (none: every release read is proposed as new); `ascend_git` a
    vllm-ascend repository whose fixes are compared with `release_fixes` (signatures/release-fixes); `refusals` the
    signatures/release-refusals table the releases' start-up refusals are compared with, `kv_pool_env` the
    serve/kv-pool-env table their KV-pool guides' host requirements are compared with, `images` the serve/images
    table their image recipes are compared with, `flashcomm_vl` the serve/flashcomm-vl table what they say and do
    about FlashComm1 on VL models is compared with, `quant_schemes` the serve/quant-schemes table their
    quantization methods are compared with; `release_rules` the serve/release-rules table whose wheel-only rules the
    releases' package holes are compared with (each hole none names is a `review` line); `release_changes` the
    serve/release-changes table the notes' change sections are compared with."""
    res = SyncResult()
    tables: List[AscendTable] = []
    owns: List[AscendOwn] = []
    config_keys = {}
    ascend_names: Dict[str, Dict[str, Any]] = {}
    supports: Dict[str, Dict[str, Any]] = {}
    notes: List[Tuple[Any, Dict[str, Any], str, Dict[str, Any]]] = []  # (version, known issues, source, changes)
    refused: Dict[str, Tuple[Dict[str, dict], str]] = {}  # version -> (its start-up refusals, source)
    kv_env: Dict[str, Tuple[List[dict], str]] = {}  # version -> (its KV-pool guide's requirements, source)
    recipes: Dict[str, Tuple[List[dict], str]] = {}  # version -> (its image recipes, source)
    holes: Dict[str, Tuple[list, str]] = {}  # version -> (the subpackages its wheel leaves out, source)
    by_tree: Dict[str, Dict[str, Tuple[List[dict], str]]] = {t: {} for t in TREE_ROWS}  # table -> version -> rows
    for path in ascend:
        tree = open_tree(path)
        table, own = read_release_table(tree), read_own(tree)
        if table is None and own is None:
            raise InputError(T("{path}: neither a vllm-ascend release (PKG-INFO naming vllm-ascend) nor a checkout "
                               "with docs/source/community/versioning_policy.md",
                               path=path))
        if table is not None:
            tables.append(table)
        if own is not None:
            owns.append(own)
            found = read_release_keys(tree.files.items())
            sha = f" (sha256 {_sha256(path)[:16]})" if os.path.isfile(path) else ""
            if found is not None:
                config_keys[own.version] = (found, f"{cite(tree)}{sha}:{found.how}")
            row = read_names("vllm-ascend", tree, f"{cite(tree)}{sha}")
            if row is not None:
                ascend_names[own.version] = row
            text = tree.read(NOTES)
            if text is not None:
                notes.append((own.version, read_known_issues(text), f"{cite(tree)}{sha}:{NOTES}",
                              read_release_changes(text)))
            refused[own.version] = (read_refusals(tree.read), cite(tree))
            kv_env[own.version] = (read_kv_pool_env(tree.read), cite(tree))
            recipes[own.version] = (read_images(tree.read, tree.listdir, own.version, cite(tree)), cite(tree))
            holes[own.version] = (package_holes(tree.files), cite(tree))
            for name, (reader, _, _) in TREE_ROWS.items():
                by_tree[name][own.version] = (reader(tree.read, tree.listdir), cite(tree))
            matrix_row = read_support_matrix(tree.read, tree.listdir, serve_parser(matrix, own.vllm_tag))
            if matrix_row is not None:
                supports[own.version] = {"source": f"{cite(tree)}{sha}", **matrix_row}
        res.read.append(f"vllm-ascend {own.version if own else '(checkout)'}: {tree.label}"
                        + (f" (release table: {len(table.rows)} rows)" if table else " (no release table)"))
    vllm_releases, tf_releases, projects = _read_others(res, vllm, transformers, pypi_json)
    releases = release_proposals(matrix, tables, owns, projects.get("vllm-ascend")) if (tables or owns) else []
    res.proposals = (releases + parser_proposals(matrix, vllm_releases) + model_proposals(matrix, vllm_releases)
                     + option_proposals(matrix, vllm_releases)
                     + transformers_proposals(matrix, tf_releases)
                     + index_proposals(matrix, releases, projects, today or date.today())
                     + config_key_proposals(additional_config, config_keys)
                     + names_proposals("vllm", (names or {}).get("vllm"),
                                       {r.version: r.names_row for r in vllm_releases if r.names_row})
                     + names_proposals("vllm-ascend", (names or {}).get("vllm-ascend"), ascend_names)
                     + support_proposals(support, supports)
                     + _known_issue_proposals(known_issues, notes)
                     + _change_proposals(release_changes, notes)
                     + refusal_proposals(refusals, merge_refusals(refused))
                     + kv_pool_env_proposals(kv_pool_env, merge_kv_pool_env(kv_env))
                     + image_proposals(images, merge_images(recipes))
                     + [p for name, (_, merger, proposer) in TREE_ROWS.items()
                        for p in proposer({"flashcomm_vl": flashcomm_vl, "quant_schemes": quant_schemes}[name],
                                          merger(by_tree[name]))])
    if ascend_git:
        res.proposals += _fix_proposals(ascend_git, release_fixes, res)
    res.review = hole_review(release_rules or [], holes)
    return res


def _fix_proposals(path: str, table, res: SyncResult) -> List[Proposal]:
    """The signatures/release-fixes rows of the repository at `path` (a work tree or its git directory)."""
    import subprocess

    from ascend_doctor.sync.fixes import fix_proposals, git_runner, head_of, newest_release, read_fixes

    git_dir = os.path.join(path, ".git") if os.path.isdir(os.path.join(path, ".git")) else path
    git = git_runner(git_dir)
    try:
        head, rows, newest = head_of(git), read_fixes(git), newest_release(git)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError, ValueError) as exc:
        raise InputError(T("{path}: not a vllm-ascend git repository git can read ({error})", path=path,
                           error=str(getattr(exc, "stderr", "") or exc).strip()[:300])) from None
    stale = table is not None and table.newest != newest
    stale = f"; set the table's newest = \"{newest}\" and its source" if stale else ""
    res.read.append(f"vllm-ascend git {head}: {path} ({len(rows)} fixes, newest release tag {newest}{stale})")
    return fix_proposals(table, rows)


def serve_parser(matrix: Matrix, vllm_tag: Optional[str]):
    """argv -> ServeCommand with the option syntax of the vLLM the release pairs (its Dockerfile's VLLM_TAG)."""
    from ascend_doctor.knowledge.serve_options import parse_serve

    version = vllm_tag.lstrip("v") if vllm_tag else None
    return lambda argv: parse_serve(list(argv), matrix, vllm_version=version)


def _newest_first(notes, k: int) -> Tuple[List[Dict[str, Dict[str, dict]]], Dict[str, str]]:
    """(item `k` of each tree's notes reading, newest tree first; id -> the newest tree that has it)."""
    ordered = sorted(notes, key=lambda n: parse_version(n[0]), reverse=True)
    source: Dict[str, str] = {}
    for n in ordered:
        for version_items in n[k].values():
            for i in version_items:
                source.setdefault(i, n[2])
    return [n[k] for n in ordered], source


def _known_issue_proposals(table, notes) -> List[Proposal]:
    """The notes of the newest tree first (its wording of a bullet wins); a row cites the newest tree that has it."""
    trees, source = _newest_first(notes, 1)
    return known_issue_proposals(table, merge(trees), source)


def _change_proposals(table, notes) -> List[Proposal]:
    """The release-changes rows, as the known issues': the newest tree's reading of a bullet wins."""
    trees, source = _newest_first(notes, 3)
    return change_proposals(table, merge(trees), source)


def _read_others(res: SyncResult, vllm: Sequence[str], transformers: Sequence[str], pypi_json: Sequence[str]):
    """(vLLM releases, transformers releases, PyPI projects by name) read from their files, each noted in `res`."""
    vllm_releases = []
    for path in vllm:
        rel = read_vllm_release(path)
        vllm_releases.append(rel)
        unread = [k for k, v in rel.names.items() if v is None]
        res.read.append(f"vLLM {rel.version}: {rel.archive}" + (f" (not read: {', '.join(unread)})" if unread else ""))
    tf_releases = []
    for path in transformers:
        rel = read_transformers_release(path)
        tf_releases.append(rel)
        res.read.append(f"transformers {rel.version}: {rel.archive} ({len(rel.model_types)} model types)")
    projects = {}
    for path in pypi_json:
        project = read_pypi_json(path)
        projects[project.name] = project
        res.read.append(f"PyPI {project.name}: {path} ({len(project.releases)} releases)")
    return vllm_releases, tf_releases, projects


def render_text(res: SyncResult) -> str:
    lines = ["read:"] + [f"  {r}" for r in res.read] + [""]
    if res.review:
        lines += ["to read and write by hand:"] + [f"  {r}" for r in res.review] + [""]
    if not res.proposals:
        lines.append("the matrix already says what these sources say: nothing to propose")
        return "\n".join(lines) + "\n"
    counts: Dict[str, int] = {}
    for p in res.proposals:
        counts[p.change] = counts.get(p.change, 0) + 1
    lines.append(f"{len(res.proposals)} proposed row(s): " + ", ".join(f"{n} {c}" for c, n in sorted(counts.items()))
                 + " (`--format toml` prints them to paste)")
    for table in ORDER:
        for p in (x for x in res.proposals if x.table == table):
            lines.append("")
            lines.append(f"{p.table} {p.id}: {p.change}  -> {TARGET[p.table]}")
            lines += [f"  - {d}" for d in p.differences]
            src = p.row.get("source", [])
            for one in [src] if isinstance(src, str) else src:  # one source (a str) or a list of them
                lines.append(f"    source: {one}")
    return "\n".join(lines) + "\n"


def render_toml(res: SyncResult) -> str:
    parts = [f"# ascend-doctor matrix sync: {len(res.proposals)} proposed row(s). Review each, then paste it into the "
             "file named above it (replacing the row with the same id)."]
    for table in ORDER:
        rows = [p for p in res.proposals if p.table == table]
        if not rows:
            continue
        comments = [[f"{p.change}: {p.id} -> {TARGET[table]}"] + p.differences for p in rows]
        parts.append(emit_rows(ARRAY.get(table, table), [p.row for p in rows], comments))
    return "\n\n".join(parts) + "\n"
