"""`diff`: what changed between two hosts or two days — two snapshots (compared fact by fact, through the probes
on two ReplayHosts) or two JSON reports (compared finding by finding)."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from ascend_doctor.core.errors import InputError
from ascend_doctor.core.model import Model
from ascend_doctor.core.options import RunOptions
from ascend_doctor.fleet.facts import DIFF_FACTS, GROUPS, gather, summarize
from ascend_doctor.i18n import T, tr
from ascend_doctor.seam.snapshot import SNAPSHOT_FORMAT, ReplayHost, load_snapshot, snapshot_from_data
from ascend_doctor.text.jsonread import loads
from ascend_doctor.text.redact import REDACTED, is_secret_key
from ascend_doctor.text.textsafe import dump_json

DIFF_FORMAT = "ascend-doctor-diff"
DIFF_VERSION = 1


class Change(Model):
    item: str
    a: Optional[str] = Field(None, description="Value on side A (null: absent there)")
    b: Optional[str] = Field(None, description="Value on side B (null: absent there)")
    change: str = Field(description="changed | added (only in B) | removed (only in A)")


class Side(Model):
    path: str
    hostname: str = ""
    when: Optional[str] = Field(None, description="collected_at (snapshot) or started_at (report)")


class DiffResult(Model):
    format: str = DIFF_FORMAT
    version: int = DIFF_VERSION
    kind: str = Field(description="snapshot | report")
    a: Side
    b: Side
    groups: dict[str, list[Change]] = Field(default_factory=dict)
    count: int = 0

    def dump(self) -> str:
        return dump_json(self.model_dump(mode="json"), indent=1) + "\n"


def _kind(path: str) -> tuple[str, dict]:
    """("snapshot" | "report", the parsed document): each file is read and parsed once (a 57 MiB snapshot was
    parsed twice, 12.6 s)."""
    from ascend_doctor.seam.inputs import read_bytes

    raw = read_bytes(path, "snapshot")
    try:
        data = loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise InputError(T("{path} is not a JSON snapshot or report", path=path)) from None
    del raw
    if isinstance(data, dict) and data.get("format") == SNAPSHOT_FORMAT:
        return "snapshot", data
    if isinstance(data, dict) and data.get("tool") == "ascend-doctor" and "findings" in data:
        return "report", data
    raise InputError(T("{path} is neither an ascend-doctor snapshot nor a JSON report (`--format json`)", path=path))


def compare_items(a: dict[str, dict[str, Optional[str]]], b: dict[str, dict[str, Optional[str]]],
                  groups: tuple[str, ...] = GROUPS) -> dict[str, list[Change]]:
    """Item-by-item differences per group (items in A's order, then B-only items)."""
    out: dict[str, list[Change]] = {}
    for g in groups:
        ga, gb = a.get(g, {}), b.get(g, {})
        changes = []
        for item in list(ga) + [k for k in gb if k not in ga]:
            va, vb = ga.get(item), gb.get(item)
            in_a, in_b = item in ga, item in gb
            if in_a and in_b and va == vb:
                continue
            kind = "changed" if in_a and in_b else ("removed" if in_a else "added")
            if is_secret_key(item):  # say that a token changed, never what it was or became
                va, vb = (REDACTED if va else va), (REDACTED if vb else vb)
            changes.append(Change(item=item, a=va, b=vb, change=kind))
        if changes:
            out[g] = changes
    return out


def diff_snapshots(path_a: str, path_b: str, options: Optional[RunOptions] = None,
                   docs: Optional[dict] = None) -> DiffResult:
    """`docs`: the files already parsed (path -> JSON), else each is read here."""
    sides, summaries = [], []
    for p in (path_a, path_b):
        snap = snapshot_from_data(docs.pop(p), p) if docs and p in docs else load_snapshot(p)
        facts = gather(ReplayHost(snap, label=p), options or RunOptions(), DIFF_FACTS)
        summaries.append(summarize(facts))
        sides.append(Side(path=p, hostname=snap.system.hostname,
                          when=snap.collected_at.isoformat() if snap.collected_at else None))
    groups = compare_items(summaries[0], summaries[1])
    return DiffResult(kind="snapshot", a=sides[0], b=sides[1], groups=groups,
                      count=sum(len(v) for v in groups.values()))


def _report_items(path: str, doc: Optional[dict] = None) -> tuple[Side, dict[str, dict[str, Optional[str]]]]:
    from pydantic import ValidationError

    from ascend_doctor.report import Report

    try:
        if doc is not None:
            rep = Report.model_validate(doc)
        else:
            from ascend_doctor.seam.inputs import read_text

            rep = Report.model_validate_json(read_text(path, "report", strict=True))
    except ValidationError as exc:
        raise InputError(T("report {path}: {errors}", path=path, errors=exc.errors()[0]['msg'])) from None
    items: dict[str, dict[str, Optional[str]]] = {"findings": {}, "run": {}}
    for f in rep.findings:
        key = f"{f.code} {f.slug}" + (f" [{f.node}]" if f.node else "")
        items["findings"][key] = f"{f.status.value}" + ("" if f.status.value == "pass" else f": {f.message[:160]}")
    items["run"] = {"command": rep.command, "tool_version": rep.tool_version, "exit_code": str(rep.exit_code),
                    "os": rep.host.os or None, "kernel": rep.host.kernel or None}
    return Side(path=path, hostname=rep.host.hostname, when=rep.started_at.isoformat()), items


def diff_reports(path_a: str, path_b: str, docs: Optional[dict] = None) -> DiffResult:
    docs = docs or {}
    (sa, ia), (sb, ib) = _report_items(path_a, docs.get(path_a)), _report_items(path_b, docs.get(path_b))
    groups = compare_items(ia, ib, groups=("findings", "run"))
    # a finding whose status did not change but whose message did is noise for "what changed": keep status changes
    groups["findings"] = [c for c in groups.get("findings", [])
                          if (c.a or "").split(":")[0] != (c.b or "").split(":")[0]]
    groups = {k: v for k, v in groups.items() if v}
    return DiffResult(kind="report", a=sa, b=sb, groups=groups, count=sum(len(v) for v in groups.values()))


def diff_files(path_a: str, path_b: str, options: Optional[RunOptions] = None) -> DiffResult:
    """Snapshots or JSON reports (both of one kind)."""
    (ka, da), (kb, db) = _kind(path_a), _kind(path_b)
    if ka != kb:
        raise InputError(T("cannot compare a {ka} ({path_a}) with a {kb} ({path_b}): give two snapshots or two reports",
                           ka=ka, path_a=path_a, kb=kb, path_b=path_b))
    docs = {path_a: da, path_b: db}
    del da, db
    return diff_snapshots(path_a, path_b, options, docs) if ka == "snapshot" else diff_reports(path_a, path_b, docs)


def render_diff(result: DiffResult, file: Any = None) -> None:
    """Console view: one table per group, A and B side by side."""
    from rich.markup import escape
    from rich.table import Table

    from ascend_doctor.render.console import make_console

    console = make_console(file)
    a, b = result.a, result.b
    console.print(f"[bold]A[/bold] {escape(a.path)} ({escape(a.hostname or '?')}, {escape(a.when or '?')})")
    console.print(f"[bold]B[/bold] {escape(b.path)} ({escape(b.hostname or '?')}, {escape(b.when or '?')})")
    if not result.count:
        console.print("\n[green]" + escape(tr("no difference")) + "[/green]")
        return
    for group, changes in result.groups.items():
        t = Table(title=f"{group} ({len(changes)})", title_justify="left", box=None, pad_edge=False)
        t.add_column(tr("item"), style="bold")
        t.add_column("A")
        t.add_column("B")
        for c in changes:
            t.add_row(escape(c.item), escape(c.a) if c.a is not None else "[dim]—[/dim]",
                      escape(c.b) if c.b is not None else "[dim]—[/dim]")
        console.print()
        console.print(t)
    console.print("\n" + escape(tr("{n} difference(s) in {groups} group(s)", n=result.count,
                                   groups=len(result.groups))))
