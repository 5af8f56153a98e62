"""#40 item 16: every help page fits 80 columns, its epilog (the exit-code table) included, in both languages; a
table row that is too long hangs under its description."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from rich.cells import cell_len

from tests.helpers import REPO

PAGES = ["", "check", "exec", "smoke", "plan", "triage", "fleet", "diff", "collect", "matrix", "matrix show",
         "explain", "list", "parse", "diagnose", "schema"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_help_page_fits_80_columns(lang):
    over = []
    for page in PAGES:
        r = subprocess.run([sys.executable, "-m", "ascend_doctor", *page.split(), "--help"], capture_output=True,
                           text=True, timeout=60, cwd=REPO,
                           env={**os.environ, "COLUMNS": "80", "ASCEND_DOCTOR_LANG": lang})
        assert r.returncode == 0, (page, r.stderr[-500:])
        over += [f"{page or 'ascend-doctor'}: {cell_len(line)}: {line}" for line in r.stdout.splitlines()
                 if cell_len(line) > 80]
    assert over == []


def test_a_long_exit_code_row_hangs_under_its_description():
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--help"], capture_output=True, text=True,
                       timeout=60, cwd=REPO, env={**os.environ, "COLUMNS": "80", "ASCEND_DOCTOR_LANG": "en"})
    lines = r.stdout.splitlines()
    i = next(n for n, line in enumerate(lines) if line.strip().startswith("2    usage or input error"))
    assert lines[i + 1].startswith(" " * (lines[i].index("usage"))) and "invalid matrix or config)" in lines[i + 1]
