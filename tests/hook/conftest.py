"""Fixtures for the exec-hook tests."""

import sys
from pathlib import Path

import pytest

from tests.helpers import REPO


@pytest.fixture
def fake_vllm(tmp_path) -> Path:
    """`<tmp>/bin/vllm`: tests/hook/fake_vllm.py run by this interpreter (basename `vllm`, so it is linted)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "vllm"
    exe.write_text(f"#!{sys.executable}\nimport runpy\n"
                   f"runpy.run_path({str(REPO / 'tests' / 'hook' / 'fake_vllm.py')!r}, run_name='__main__')\n")
    exe.chmod(0o755)
    return exe
