"""The wheel carries checks/ and matrices/: build it, install it into a clean venv, run the CLI from there."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

pytestmark = [pytest.mark.slow, pytest.mark.localhost]


def sh(*args, cwd=None, timeout=600):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    r = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert r.returncode == 0, f"{args}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    return r.stdout


def test_wheel_installs_and_finds_builtin_checks_and_matrices(tmp_path):
    dist = tmp_path / "dist"
    sh(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO))
    wheel = next(dist.glob("ascend_doctor-*.whl"))
    venv = tmp_path / "venv"
    sh(sys.executable, "-m", "venv", str(venv))
    py = venv / "bin" / "python"
    sh(str(py), "-m", "pip", "install", "-q", str(wheel))
    work = tmp_path / "elsewhere"  # not the source tree: nothing can be found by accident
    work.mkdir()
    where = sh(str(py), "-c", "import ascend_doctor.core.paths as p; print(p.builtin_checks_dir()); "
                              "print(p.builtin_dir('matrices'))", cwd=work).split()
    assert all(str(venv) in w and "_builtin" in w for w in where), where
    rows = json.loads(sh(str(venv / "bin" / "ascend-doctor"), "list", "--format", "json", cwd=work))
    builtin = {r["code"] for r in rows if r["source"] == "built-in"}
    in_tree = {p.stem for p in (REPO / "checks").glob("*.py")}
    assert "HOST101" in builtin and len(builtin) >= 10 and in_tree
    assert (Path(where[1]) / "host-policy.toml").is_file()
    # Every TOML in the source tree's matrices/ shipped.
    shipped = {p.name for p in Path(where[1]).glob("*.toml")}
    assert shipped == {p.name for p in (REPO / "matrices").glob("*.toml")}
    # The shipped matrix loads and validates from the installed copy.
    sh(str(venv / "bin" / "ascend-doctor"), "matrix", "validate", cwd=work)
    # The deployment model's data (chips, the model catalogue) ships too: plan answers from the installed copy.
    shipped_deploy = {p.relative_to(Path(where[1])) for p in (Path(where[1]) / "deploy").rglob("*") if p.is_file()}
    assert shipped_deploy == {p.relative_to(REPO / "matrices") for p in (REPO / "matrices" / "deploy").rglob("*")
                              if p.is_file()}
    plan = json.loads(sh(str(venv / "bin" / "ascend-doctor"), "plan", "--model", "Qwen3-8B", "--chip", "910B3",
                         "--npus", "1", "--format", "json", cwd=work))
    assert plan["plan"]["verdict"] == "fits" and plan["chip"]["id"] == "910B3"
