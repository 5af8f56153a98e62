"""vllm-ascend's own tutorial commands as controls: linted on a healthy host of their chip with the release's stack
(tests/field/tutorial_controls.py), the fails are exactly the ones read and explained in
tests/data/tutorials/expected-fails.toml — a stale or wrong tutorial, or a command for another image. A new fail is
a false failure of the doctor until it is read; an explained one that stops failing is struck. Runs on the PyPI
sdists stored under ASCEND_DOCTOR_SDISTS/va (skipped where they are not, as on a plain clone)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ascend_doctor.knowledge.tomlread import read_toml
from tests.helpers import REPO

SDISTS = Path(os.environ.get("ASCEND_DOCTOR_SDISTS", REPO.parent / "sdists"))
EXPECTED = read_toml(REPO / "tests" / "data" / "tutorials" / "expected-fails.toml", "expected tutorial fails")["fail"]


def test_every_explained_fail_says_why():
    for e in EXPECTED:
        assert e["at"] and len(e["why"]) > 40, e


@pytest.mark.parametrize("release", ["0.18.0", "0.23.0", "0.30.0rc2"])
def test_the_release_tutorials_fail_only_where_the_tutorial_is_wrong(release):
    path = SDISTS / "va" / f"vllm_ascend-{release}.tar.gz"
    if not path.is_file():
        pytest.skip(f"{path} not stored here")
    from tests.field.tutorial_controls import fails, lint

    _, records, _ = lint(str(path))
    assert len(records) > 50  # the pages were read
    got = fails(records)
    want = {at for e in EXPECTED if e["release"] == release for at in e["at"]}
    assert sorted(got - want) == [], "new fails: read each against the release's source"
    assert sorted(want - got) == [], "explained fails that no longer fail: strike them"
