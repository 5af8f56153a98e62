"""The subpackages a vllm-ascend release's wheel leaves out (ascend_doctor.sync.package_holes): the extractor on a
tree written here, and the shipped wheel-only release rules against what it reads in the stored sdists."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ascend_doctor.sync.package_holes import covered_module, hole_review, package_holes
from ascend_doctor.text.versions import SpecifierSet
from tests.helpers import REPO, shipped

SDISTS = Path(os.environ.get("ASCEND_DOCTOR_SDISTS", REPO.parent / "sdists")) / "va"
# the sdists of the releases the rules name, and their neighbours that fixed them
STORED = ["0.8.4rc1", "0.8.4rc2", "0.9.0rc1", "0.9.0rc2", "0.13.0rc3", "0.13.0", "0.19.1rc1", "0.20.2rc1"]

TREE = {
    "setup.py": "setup(packages=find_packages(exclude=('docs', 'tests*')))\n",
    "vllm_ascend/__init__.py": "",
    "vllm_ascend/platform.py": "def backend():\n    return 'vllm_ascend.compilation.piecewise.NPUBackend'\n",
    "vllm_ascend/compilation/piecewise.py": "class NPUBackend: ...\n",  # no __init__.py: left out
    "vllm_ascend/ops/__init__.py": "",
    "vllm_ascend/ops/fused.py": "from vllm_ascend.lora.punica.npu import Wrapper\n",
    "vllm_ascend/lora/punica/__init__.py": "",  # lora/ itself has none: lora and all below are left out
    "vllm_ascend/lora/punica/npu.py": "class Wrapper: ...\n",
    "vllm_ascend/compilationx.py": "x = 'vllm_ascend.compilationx'\n",  # a longer name is not the hole's
}


def test_a_directory_without_init_is_a_hole_with_the_lines_that_name_it():
    holes = {h.module: h for h in package_holes(TREE)}
    assert sorted(holes) == ["vllm_ascend.compilation", "vllm_ascend.lora"]
    assert holes["vllm_ascend.compilation"].named_by == ["vllm_ascend/platform.py:2"]
    assert holes["vllm_ascend.lora"].modules == ["vllm_ascend/lora/punica/__init__.py", "vllm_ascend/lora/punica/npu.py"]
    assert holes["vllm_ascend.lora"].named_by == ["vllm_ascend/ops/fused.py:1"]
    # a setup.py that does not build with find_packages says nothing of what its wheel holds
    assert package_holes({**TREE, "setup.py": "setup(packages=['vllm_ascend'])\n"}) == []


def test_a_hole_no_wheel_only_rule_names_is_left_for_review():
    rules = shipped().release_rules
    holes = {"0.9.0rc1": (package_holes(TREE), "tree")}
    review = hole_review(rules, holes)  # REL-A2-001 names vllm_ascend.compilation on 0.9.0rc1; nothing names lora
    assert len(review) == 1 and "vllm_ascend.lora" in review[0] and "vllm_ascend/ops/fused.py:1" in review[0]
    assert len(hole_review(rules, {"0.9.0rc2": (package_holes(TREE), "tree")})) == 2


@pytest.mark.parametrize("version", STORED)
def test_the_wheel_only_rules_are_what_the_stored_sdist_shows(version):
    """Every hole the extractor finds in a release's stored PyPI sdist has a wheel-only rule of that release naming
    its module, and every such rule of the release names a hole there (skipped where the sdist is not stored)."""
    from ascend_doctor.sync.archive import open_tree

    path = SDISTS / f"vllm_ascend-{version}.tar.gz"
    if not path.is_file():
        pytest.skip(f"{path} not stored here")
    found = {h.module for h in package_holes(open_tree(str(path)).files)}
    named = {covered_module(r) for r in shipped().release_rules if SpecifierSet(r.vllm_ascend).contains(version)}
    assert found == named - {""}, (version, found, named)


def test_matrix_sync_lists_a_hole_no_rule_names():
    """`matrix sync` on a stored sdist, compared with no rules: the hole is a line to review (exit 1 in the CLI)."""
    from ascend_doctor.sync.run import render_text, sync

    path = SDISTS / "vllm_ascend-0.9.0rc1.tar.gz"
    if not path.is_file():
        pytest.skip(f"{path} not stored here")
    k = shipped()
    bare = sync(k.matrix, ascend=[str(path)], release_rules=[])
    assert len(bare.review) == 1 and "vllm_ascend.compilation" in bare.review[0]
    assert "vllm_ascend/platform.py:267" in bare.review[0] and "to read and write by hand" in render_text(bare)
    assert sync(k.matrix, ascend=[str(path)], release_rules=k.release_rules).review == []
