"""`ascend-doctor matrix validate|show|pins` through the real CLI entry."""

from __future__ import annotations

import json

from click.testing import CliRunner

from ascend_doctor.cli import cli
from tests.helpers import DATA

D = DATA / "matrix"


def run(*args):
    return CliRunner().invoke(cli, ["matrix", *args], catch_exceptions=False)


def test_validate_shipped():
    r = run("validate")
    assert r.exit_code == 0, r.output
    assert r.output.startswith("ok: 49 vllm-ascend releases")


def test_validate_user_layer():
    r = run("validate", str(D / "golden-stack.toml"))
    assert r.exit_code == 0, r.output
    assert "50 vllm-ascend releases" in r.output


def test_validate_bad_file_exit_2_one_line():
    r = run("validate", str(D / "bad-unknown-key.toml"))
    assert r.exit_code == 2
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1
    assert "bad-unknown-key.toml" in lines[0] and "torch_npu[0] (2.9.0).cuda: unknown key" in lines[0]


def test_show_table():
    r = run("show")
    assert r.exit_code == 0, r.output
    assert "0.30.0rc2" in r.output and "0.7.1rc1" in r.output


def test_show_one_release_json():
    r = run("show", "--vllm-ascend", "v0.18.0", "--format", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["version"] == "0.18.0" and data["cann"] == ["8.5.1", "8.5.0", "9.0.0"]  # 9.0.0: the release notes, for 310P and x86
    assert data["torch_npu_row"]["version"] == "2.9.0"
    assert [h["id"] for h in data["hdk_for_cann"]] == ["hdk-cann-8.5.0", "hdk-cann-9.0.0"]


def test_show_one_release_console():
    r = run("show", "--vllm-ascend", "0.13.0")
    assert r.exit_code == 0, r.output
    assert "8.5.0" in r.output and "conflict" in r.output


def test_show_all_json_with_layer():
    r = run("show", "--format", "json", "--matrix", str(D / "golden-stack.toml"))
    assert r.exit_code == 0, r.output
    assert "0.31.0rc1" in [x["version"] for x in json.loads(r.output)]


def test_show_unknown_release_exit_2():
    r = run("show", "--vllm-ascend", "0.99.0")
    assert r.exit_code == 2
    assert "not in the matrix" in r.output and "0.30.0rc2 (newer-than-matrix)" in r.output


def test_pins():
    r = run("pins", "--vllm-ascend", "0.13.0")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    reqs = [ln for ln in lines if ln and not ln.startswith("#")]
    assert reqs == ["vllm-ascend==0.13.0", "vllm==0.13.0", "torch==2.8.0",
                    "torch-npu==2.8.0.post2  # other documents name: 2.8.0", "triton-ascend==3.2.0",
                    "transformers>=4.57.4,<5"]
    text = r.output
    assert "# CANN 8.5.0 (also named: 8.3.RC2)" in text
    assert "# CONFLICT cann: README@v0.13.0" in text
    assert "# Ascend HDK for CANN 8.5.0: driver 25.5.0 / 25.5.1" in text
    assert "# Python >=3.10,<3.12" in text
    assert "# source: vllm-project/vllm-ascend@182b75e:docs/source/community/versioning_policy.md" in text


def test_pins_unpinned_and_mirror_only():
    r = run("pins", "--vllm-ascend", "0.10.0rc1")
    assert r.exit_code == 0, r.output
    assert "# triton-ascend: not pinned by this release" in r.output
    assert "torch-npu==2.7.1.dev20250724\n" in r.output
    assert ("# NOT ON PYPI torch-npu==2.7.1.dev20250724: add --extra-index-url "
            "https://mirrors.huaweicloud.com/ascend/repos/pypi") in r.output


def test_pins_requires_release():
    r = run("pins")
    assert r.exit_code == 2
    r = run("pins", "--vllm-ascend", "nightly")
    assert r.exit_code == 2 and "nightly is not in the matrix" in r.output
