"""The vllm-ascend PyPI sdists stored beside the repository (ASCEND_DOCTOR_SDISTS/va, default ../sdists/va; absent on
a plain clone, where the tests that read them skip) and what `matrix sync` reads from each, for the tests that hold a
generated table's shipped rows to its extractor."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers import REPO

VA_SDISTS = sorted((Path(os.environ.get("ASCEND_DOCTOR_SDISTS", REPO.parent / "sdists")) / "va").glob("*.tar.gz"))


def per_release(read_rows, listdir: bool = False) -> dict:
    """version -> (read_rows(the tree's read[, its listdir]), the tree's citation) for every stored sdist, as sync
    reads them."""
    from ascend_doctor.sync.archive import open_tree
    from ascend_doctor.sync.ascend import cite, read_own

    out = {}
    for path in VA_SDISTS:
        tree = open_tree(path)
        rows = read_rows(tree.read, tree.listdir) if listdir else read_rows(tree.read)
        out[read_own(tree).version] = (rows, cite(tree))
    return out


def assert_shipped_rows_are(extracted: dict, shipped: dict) -> None:
    """The shipped table holds exactly the extracted rows (id -> fields), each field as extracted."""
    assert set(extracted) == set(shipped)
    for rid, row in extracted.items():
        assert {k: shipped[rid][k] for k in row} == row, rid
