"""docs/failure-classes.md is the field catalogue (#25): its summary table must stay true — every class sourced,
every check code real, every field-case count the cases on disk — and the catch rate per class is printed from the
field cases themselves (`pytest tests/field -s` shows it)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from ascend_doctor.core.registry import load_registry
from tests.field.runner import cases, finding, run

DOC = Path(__file__).resolve().parents[2] / "docs" / "failure-classes.md"
ROW = re.compile(r"^\| ([AB]\d+) \| (.*?) \| (\d+) \| (yes|partly|no) \| (.*?) \| (\d+) \|$")


def _table() -> dict[str, dict]:
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            cid, title, hit, before, checks, n = m.groups()
            rows[cid] = {"title": title, "hit": int(hit), "before": before, "n_cases": int(n),
                         "checks": [] if checks.startswith("none") else checks.split()}
    return rows


def _sections() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    parts = re.split(r"\n(?=### [AB]\d+\. )", text)
    return {re.match(r"### ([AB]\d+)\.", p).group(1): p for p in parts[1:]}


def test_the_catalogue_has_forty_sourced_classes_ordered_by_users():
    rows, sections = _table(), _sections()
    assert len(rows) >= 40
    assert set(rows) == set(sections), "every row has its section and back"
    hits = [r["hit"] for r in rows.values()]
    assert hits == sorted(hits, reverse=True), "ordered by how many users hit it"
    for cid, text in sections.items():
        urls = set(re.findall(r"https://[^\s,)`]+", text))
        assert len(urls) >= 2, f"{cid}: {len(urls)} source(s)"
        for field in ("**What users paste:**", "**Confirmed fix:**", "**Before launch:**", "**Checks:**"):
            if field == "**What users paste:**" and rows[cid]["hit"] == 0:
                continue  # a docs-only class has no user text
            assert field in text, f"{cid}: no {field}"


def test_every_check_the_catalogue_names_exists():
    codes = set(load_registry(entry_points=False).checks)
    named = {c for r in _table().values() for c in r["checks"]}
    assert named - codes == set()


def test_the_field_case_counts_are_the_cases_on_disk():
    rows = _table()
    on_disk = defaultdict(int)
    for case in cases():
        assert case.cls in rows, f"{case.id}: class {case.cls} is not in the catalogue"
        on_disk[case.cls] += 1
        assert case.expect["code"] in rows[case.cls]["checks"], \
            f"{case.id}: caught by {case.expect['code']}, which the catalogue does not list for {case.cls}"
    assert {k: v["n_cases"] for k, v in rows.items() if v["n_cases"]} == dict(on_disk)


def test_catch_rate_per_class(capsys):
    """The summary: per class, how many of its field cases the doctor catches (the expected finding, not just any)."""
    rows = _table()
    caught: dict[str, list[bool]] = defaultdict(list)
    guards = 0
    for case in cases():
        f = finding(run(case.data), case.expect["code"])
        ok = f is not None and f.status.value in case.statuses and case.expect.get("message", "") in f.message
        if case.statuses == {"pass"}:  # a sound setup from a thread that a check once failed: a guard, not a catch
            guards += 1
            assert ok, f"{case.id}: {f.code if f else case.expect['code']} no longer passes the thread's setup"
            continue
        caught[case.cls].append(ok)
    lines = ["class  cases  caught  checks"]
    for cid, r in rows.items():
        got = caught.get(cid, [])
        none = "none (not detectable before launch)" if r["before"] == "no" else "none (gap)"
        lines.append(f"{cid:<6} {len(got):>5}  {sum(got):>6}  {' '.join(r['checks']) or none}")
    total = [x for v in caught.values() for x in v]
    gaps = [cid for cid, r in rows.items() if r["before"] != "no" and not r["checks"]]
    judged_no = [cid for cid, r in rows.items() if r["before"] == "no"]
    lines.append(f"field cases caught: {sum(total)}/{len(total)} (+{guards} false-positive guard(s)); classes with a "
                 f"caught case: {len(caught)}/{len(rows)}; judged not detectable before launch: {len(judged_no)} "
                 f"({' '.join(judged_no)}); detectable classes with no check yet: {len(gaps)} ({' '.join(gaps)})")
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert all(total), "every field case is caught by its check"
    # #25's bar: every class marked detectable (yes/partly) has a check and a field case that it catches.
    assert gaps == []
    assert [cid for cid, r in rows.items() if r["before"] != "no" and not any(caught.get(cid, []))] == []
