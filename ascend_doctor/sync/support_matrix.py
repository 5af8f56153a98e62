"""What one vllm-ascend release's own docs say it supports: docs/source/user_guide/support_matrix/supported_models.md
(model x feature x hardware) and feature_matrix.md (feature x feature, from 0.19.1rc1), read from the release's
sdist or tag into one `serve/support-matrix` row.

Only what a verdict can rest on is kept: a model the release marks not supported (❌ in `Support`, with the note's
issue link), a model x feature cell marked ❌, a pair of features marked ❌ ("No compatibility"), and each model's
`Supported Hardware` list. Blank, 🟡 (not tested) and 🟠 (partial) cells say nothing a check can judge, so they are
not recorded. A model x feature cell is recorded with the hardware its row lists (`Qwen3-Dense [Atlas 300I DUO]:
BF16`): from 0.26 the docs give some hardware its own table. Model names are the docs' display names
("Qwen3-Moe", "DeepSeek V3/3.1"); the check matches them to a model's config.json
(ascend_doctor.knowledge.support_matrix.model_aliases).
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

import re2

from ascend_doctor.core.errors import InputError

MODELS = "docs/source/user_guide/support_matrix/supported_models.md"
FEATURES = "docs/source/user_guide/support_matrix/feature_matrix.md"
NO = "❌"
# RE2 (linear time): a docs file is upstream text, and a cell of a thousand `[` or `<` must not stall sync
_LINK = re2.compile(r"\[([^\]]*)\]\(([^)]*)\)")
_TAG = re2.compile(r"<[^>]+>")
_SUP = re2.compile(r"<sup>.*?</sup>")
_BR = re2.compile(r"(?i)<br\s*/?>")


def clean(cell: str) -> str:
    """A cell's text: links to their text, HTML tags and footnote marks dropped, spaces collapsed."""
    text = _LINK.sub(lambda m: m.group(1), cell)
    text = _SUP.sub("", text)
    text = _BR.sub("/", text)
    text = _TAG.sub("", text)
    return " ".join(text.split())


def _links(cell: str) -> List[str]:
    return [m.group(2) for m in _LINK.finditer(cell)]


def _split(line: str) -> List[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return body.split("|")


def _rule(line: str) -> bool:
    return bool(re.fullmatch(r"\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?", line.strip()))


def _tables(text: str):
    """(header cells, [row cells]) of every pipe table."""
    lines = text.splitlines()
    i = 0
    while i < len(lines) - 1:
        if lines[i].lstrip().startswith("|") and _rule(lines[i + 1]):
            header = [clean(c) for c in _split(lines[i])]
            rows = []
            j = i + 2
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                rows.append(_split(lines[j]))
                j += 1
            yield header, rows
            i = j
        else:
            i += 1


def _hardware(cell: str) -> List[str]:
    return [h for h in (p.strip() for p in re.split(r"[/,、]", clean(cell))) if h]


def read_models(text: str) -> Dict[str, Any]:
    """models (every row's name), not_supported, model_feature (`model: feature`), hardware (`model: A2/A3`) and
    notes from supported_models.md.
    A row whose cells do not line up with its header (the docs have rows with a cell too many or too few) keeps
    only what is before the first doubtful cell: `Model`, `Support`, `Note`."""
    out: Dict[str, Any] = {"models": [], "not_supported": [], "model_feature": [], "hardware": [], "notes": []}
    for header, rows in _tables(text):
        # 0.9.1rc2-0.11.0rc0 name the column `Supported` (Model | Supported | Note), later releases `Support`
        support_col = next((c for c in ("Support", "Supported") if c in header), None)
        if not header or header[0] != "Model" or support_col is None:
            continue
        col = {name: i for i, name in enumerate(header)}
        col["Support"] = col[support_col]
        for cells in rows:
            model = clean(cells[0]) if cells else ""
            if not model:
                continue
            if model not in out["models"]:
                out["models"].append(model)
            support = clean(cells[col["Support"]]) if col["Support"] < len(cells) else ""
            note = cells[col["Note"]] if "Note" in col and col["Note"] < len(cells) else ""
            if NO in support:
                out["not_supported"].append(model)
                links = _links(note) or ([clean(note)] if clean(note) else [])
                if links:
                    out["notes"].append(f"{model}: {' '.join(links)}")
            if len(cells) != len(header):
                continue  # a misaligned row: its feature cells cannot be read by column
            hw = col.get("Supported Hardware")
            listed = "/".join(_hardware(cells[hw])) if hw is not None else ""
            if listed:
                out["hardware"].append(f"{model}: {listed}")
            for name, i in col.items():
                if name in ("Model", "Support", "Supported", "Note", "Supported Hardware", "Doc") or i >= len(cells):
                    continue
                if NO in cells[i]:  # scoped to the row's hardware: the 300I Duo tables mark BF16 ❌
                    out["model_feature"].append(f"{model} [{listed}]: {name}" if listed else f"{model}: {name}")
    return out


def read_feature_pairs(text: str) -> List[str]:
    """`A + B` for every pair of features feature_matrix.md marks ❌ (the table is a lower triangle)."""
    out: List[str] = []
    for header, rows in _tables(text):
        if not header or header[0] != "Feature":
            continue
        for cells in rows:
            row = clean(cells[0]) if cells else ""
            for i, cell in enumerate(cells[1:], start=1):
                if NO in cell and i < len(header) and header[i] != row:
                    out.append(" + ".join(sorted((row, header[i]))))
    return sorted(set(out))


TUTORIALS = "docs/source/tutorials"
SHOWN = 3  # tutorial pages quoted per pair; the rest counted


def read_tutorial_pairs(pairs: List[str], commands, parse) -> List[str]:
    """For each pair feature_matrix.md marks ❌, the release's own tutorial commands that use both features
    (`A + B: models/X.md:149, … (N command(s) on M page(s))`, each page once, at its first such command): where the
    release's docs disagree with themselves. `commands` are ascend_doctor.sync.tutorials.TutorialCommand,
    `parse(argv)` gives a ServeCommand (the release's vLLM syntax); a feature counts as the serve lint counts it
    (ascend_doctor.knowledge.serve_features.used), the model unknown."""

    from ascend_doctor.knowledge.serve_features import used

    parsed = []
    for c in commands:
        try:
            parsed.append((c, parse(c.argv)))
        except (ValueError, InputError):  # a tutorial line the parser cannot read says nothing about any pair
            continue
    out = []
    for pair in pairs:
        a, b = pair.split(" + ", 1)
        where = [f"{c.path[len(TUTORIALS) + 1:] if c.path.startswith(TUTORIALS) else c.path}:{c.line}"
                 for c, cmd in parsed if used(a, cmd, c.env, None)[1] and used(b, cmd, c.env, None)[1]]
        if where:
            pages = list({w.rsplit(":", 1)[0]: w for w in reversed(where)}.values())[::-1]  # each page's first line
            out.append(f"{pair}: {', '.join(pages[:SHOWN])} ({len(where)} command(s) on {len(pages)} page(s))")
    return out


def read_tutorial_lengths(commands, parse) -> List[str]:
    """Per chip family, the longest `--max-model-len` the release's own tutorials run (`A2: 140000
    models/GLM4.x.md:192`): what the release documents as starting there (HW103 weighs a length rule against it).
    A command counts only where its section names one chip family ("A3 (64G*16) nodes (or 2 * A2)" is neither's
    evidence alone); one whose page names none is left out."""
    best: Dict[str, tuple] = {}
    for c in commands:
        if len(c.chips) != 1:
            continue
        try:
            n = parse(c.argv).int_opt("max_model_len")
        except (ValueError, InputError):  # an unreadable tutorial line says nothing about lengths
            continue
        if n is not None and n > best.get(c.chip, (0, ""))[0]:
            page = c.path[len(TUTORIALS) + 1:] if c.path.startswith(TUTORIALS) else c.path
            best[c.chip] = (n, f"{page}:{c.line}")
    return [f"{fam}: {n} {where}" for fam, (n, where) in sorted(best.items())]


def read_tutorial_models(commands) -> List[str]:
    """Per chip family, the checkpoints the release's own tutorials serve where the section names that family alone
    (`310P: Eco-Tech/Qwen3-32B-w8a8sc-310-vllm/TP4/Qwen3-32B-w8a8sc-310-vllm-tp4 hardwares/310p.md:158`), each once
    at its first command: a model the support matrix lists for other chips that the release's docs still run on this
    one is two sources that disagree (SERVE314 names both). A path the page leaves to a variable is not kept."""
    from ascend_doctor.sync.tutorials import model_of

    seen: Dict[tuple, str] = {}
    for c in commands:
        m = model_of(c) if len(c.chips) == 1 else None
        if not m or "$" in m or (c.chip, m) in seen:
            continue
        page = c.path[len(TUTORIALS) + 1:] if c.path.startswith(TUTORIALS) else c.path
        seen[(c.chip, m)] = f"{c.chip}: {m} {page}:{c.line}"
    return [seen[k] for k in sorted(seen)]


def read_support_matrix(read, listdir=None, parse=None) -> Optional[Dict[str, Any]]:
    """The row fields of one release tree (`read(path)` -> text or None); None when it has no supported_models.md.
    With `listdir` and `parse` (ServeCommand of an argv), the ❌ pairs the release's own tutorials run too."""
    models = read(MODELS)
    if models is None:
        return None
    row = read_models(models)
    features = read(FEATURES)
    row["feature_pairs"] = read_feature_pairs(features) if features is not None else []
    row["where"] = [MODELS] + ([FEATURES] if features is not None else [])
    row["tutorial_pairs"], row["tutorial_lengths"], row["tutorial_models"] = [], [], []
    if listdir is not None and parse is not None:
        from ascend_doctor.sync.tutorials import read_tutorials

        commands = read_tutorials(read, listdir, TUTORIALS)
        if row["feature_pairs"]:
            row["tutorial_pairs"] = read_tutorial_pairs(row["feature_pairs"], commands, parse)
        row["tutorial_lengths"] = read_tutorial_lengths(commands, parse)
        row["tutorial_models"] = read_tutorial_models(commands)
        if row["tutorial_pairs"] or row["tutorial_lengths"] or row["tutorial_models"]:
            row["where"].append(f"{TUTORIALS}/")
    return row


FIELDS = ("models", "not_supported", "notes", "model_feature", "feature_pairs", "hardware", "tutorial_pairs",
          "tutorial_lengths", "tutorial_models")


def support_proposals(table, extracted: Dict[str, Dict[str, Any]]) -> List[Any]:
    """One proposal per release read whose row the shipped table lacks or records otherwise."""
    from ascend_doctor.sync.diff import Proposal
    from ascend_doctor.text.versions import parse_version

    have = {parse_version(r.version).main_key: r for r in (table.release if table is not None else ())}
    out = []
    for version, fields in sorted(extracted.items(), key=lambda kv: parse_version(kv[0])):
        row = {"version": version, "source": fields["source"], "where": fields["where"],
               **{k: fields[k] for k in FIELDS}}
        old = have.get(parse_version(version).main_key)
        if old is None:
            out.append(Proposal(table="support_matrix", id=version, change="new", row=row,
                                differences=[f"vllm-ascend {version}'s support matrix is not recorded ("
                                             + ", ".join(f"{len(row[k])} {k}" for k in FIELDS) + ")"]))
            continue
        diffs = [f"{k}: upstream adds {sorted(set(row[k]) - set(getattr(old, k)))[:6]}, drops "
                 f"{sorted(set(getattr(old, k)) - set(row[k]))[:6]}" for k in FIELDS
                 if set(row[k]) != set(getattr(old, k))]
        if diffs:
            out.append(Proposal(table="support_matrix", id=version, change="changed", row=row, differences=diffs))
    return out
