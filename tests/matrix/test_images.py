"""The serve/images table: matrix sync reads each release's image recipes (its Dockerfiles and the requirements its
editable install brings), and triage reads a paste that names only an official image through them."""

from __future__ import annotations

import pytest
from packaging.specifiers import SpecifierSet

from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.sync.images import read_images, read_recipe, requirements
from tests.matrix.stored import VA_SDISTS

# A recipe written after the shape of the release Dockerfiles (0.18.0's Dockerfile.310p: the vLLM install, triton
# removed, the editable vllm-ascend install, an x86-only removal, a torch_npu wheel named through a shell variable).
RECIPE = """\
ARG CANN_VERSION="9.2.0_20260930220649"
FROM quay.io/ascend/cann:${CANN_VERSION}-310p-ubuntu22.04-py3.11
ARG VLLM_TAG=v0.18.0
# Install vLLM
RUN VLLM_TARGET_DEVICE="empty" python3 -m pip install -v -e /vllm-workspace/vllm/[audio] && \\
    python3 -m pip uninstall -y triton && \\
    python3 -m pip cache purge
RUN source /usr/local/Ascend/ascend-toolkit/set_env.sh && \\
    python3 -m pip install -v -e /vllm-workspace/vllm-ascend/ --extra-index https://download.pytorch.org/whl/cpu/ && \\
    if [ "$(uname -i)" = "x86_64" ]; then python3 -m pip uninstall -y triton; fi && \\
    if [ "$ARCH" = "aarch64" ]; then PTA_WHEEL="torch_npu-2.9.0.post1%2Bgit4c901a4-${PYTHON_TAG}-linux.whl"; fi && \\
    python3 -m pip install "https://example.invalid/vllm-ascend/${PTA_WHEEL}"
RUN python3 -m pip install modelscope 'ray>=2.47.1,<=2.48.0'
"""
REQUIREMENTS = "# deps\ntorch==2.9.0\ntorch-npu==2.9.0\ntriton-ascend==3.2.0\nnumpy<2.0.0  # pinned\n-e .\n"


def test_a_recipe_is_read_for_its_base_image_pins_removals_and_wheels():
    row = read_recipe(RECIPE, requirements(REQUIREMENTS))
    assert (row["cann"], row["python"], row["vllm"]) == ("9.2.0", "3.11", "0.18.0")
    assert row["installs"]["triton-ascend"] == "==3.2.0"
    assert SpecifierSet(row["installs"]["ray"]) == SpecifierSet(">=2.47.1,<=2.48.0")  # as packaging writes it
    assert row["installs"]["torch-npu"] == "wheel"  # the wheel replaced the pin: its version differs per machine
    assert row["removes"] == [] and row["removes_x86_64"] == ["triton"] and row["opaque"] is False


def test_what_a_row_claims_absent():
    from ascend_doctor.knowledge.images import ImageRecipe

    row = ImageRecipe(id="v0.18.0-310p", release="0.18.0", dockerfile="Dockerfile.310p", family="310P",
                      **read_recipe(RECIPE, requirements(REQUIREMENTS)))
    assert "triton" not in row.absent(None) and "triton" in row.absent("x86_64")
    assert "triton-ascend" not in row.absent(None) and "mindie-turbo" in row.absent(None)
    assert row.pinned(None)["triton-ascend"] == "3.2.0" and "torch-npu" not in row.pinned(None)
    opaque = row.model_copy(update={"opaque": True})  # a script the table does not read may install anything
    assert opaque.absent(None) == []


def test_a_script_the_recipe_runs_makes_it_opaque():
    assert read_recipe(RECIPE + "RUN BUILD_TYPE=daily bash /tmp/install_daily_deps.sh\n", {})["opaque"] is True
    assert read_recipe(RECIPE, {})["opaque"] is False  # `source …/set_env.sh` only sets the environment


@pytest.mark.skipif(not VA_SDISTS, reason="the vllm-ascend sdists are not stored here")
def test_the_shipped_rows_are_what_sync_extracts_from_the_sdists():
    from ascend_doctor.sync.archive import open_tree
    from ascend_doctor.sync.ascend import cite, read_own
    from tests.matrix.stored import assert_shipped_rows_are

    extracted = {}
    for path in VA_SDISTS:
        tree = open_tree(str(path))
        for row in read_images(tree.read, tree.listdir, read_own(tree).version, cite(tree)):
            extracted[row["id"]] = {k: v for k, v in row.items() if v not in (None, [], {}, False, "")}
    assert_shipped_rows_are(extracted, {r.id: r.model_dump() for r in Knowledge().images.image})


def test_sync_proposes_the_images_of_a_release_it_reads(tmp_path):
    import io
    import tarfile

    from ascend_doctor.knowledge.matrix import load_matrix
    from ascend_doctor.sync.run import sync

    path = tmp_path / "vllm_ascend-0.31.0rc1.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, text in {"PKG-INFO": "Metadata-Version: 2.1\nName: vllm_ascend\nVersion: 0.31.0rc1\n",
                           "Dockerfile.310p": RECIPE, "requirements.txt": REQUIREMENTS}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"vllm_ascend-0.31.0rc1/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    res = sync(load_matrix(), ascend=[str(path)], images=Knowledge().images)
    props = [p for p in res.proposals if p.table == "images"]
    assert [p.id for p in props] == ["v0.31.0rc1-310p"] and props[0].row["family"] == "310P"


def _triage(text: str) -> dict:
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.triage.run import triage_text

    return {f.code: f for f in triage_text(text, "p.md", load_registry(entry_points=False), RunOptions()).findings}


def test_a_paste_that_names_only_the_image_is_judged_by_its_recipe():
    """vllm-ascend 0.10.2rc1's image installs no triton-ascend (its requirements.txt has none, its Dockerfile installs
    none), which its own Qwen3-Next tutorial requires (REL-B11-001); the v0.18.0rc1-310p image installs
    triton-ascend 3.2.0 through its requirements, which the 300I Duo guide forbids (HW-310P-009, vllm-ascend#8186)."""
    qwen3_next = ("image: quay.io/ascend/vllm-ascend:v0.10.2rc1\nvllm serve Qwen/Qwen3-Next-80B-A3B-Instruct "
                  "--tensor-parallel-size 4 --max-model-len 4096 --enforce-eager\n")
    f = _triage(qwen3_next)["SERVE311"]
    assert f.status.value in ("warn", "fail") and "REL-B11-001" in f.message, f.message
    listed = _triage("```\n$ pip list | grep triton\ntriton-ascend     3.2.0\n```\n" + qwen3_next)["SERVE311"]
    assert "REL-B11-001" not in listed.message  # the paste's own list beats the recipe
    duo = _triage("image: quay.io/ascend/vllm-ascend:v0.18.0rc1-310p\nvllm serve /models/Qwen3-8B --max-model-len "
                  "4096 --dtype float16 --enforce-eager\n")["HW104"]
    assert duo.status.value == "warn" and "triton-ascend 3.2.0" in duo.message, duo.message


def test_the_official_image_is_a_documented_torch_npu_and_cann_pair():
    """The 0.21.0rc1-310p image builds torch_npu 2.10.0 over a CANN 9.1.0 base (the other images of that release over
    9.0.0): the release ships that pair, so TORCH102 does not call it untested; an advisory about a torch_npu/CANN
    pair whose other condition (the NNAL) the paste does not show does not match."""
    f = _triage("image: quay.io/ascend/vllm-ascend:v0.21.0rc1-310p\nvllm serve /models/Qwen3-8B --max-model-len 4096 "
                "--dtype float16 --enforce-eager\n")["TORCH102"]
    assert f.status.value == "pass" and "documented pair" in f.message, f.message
    adv = _triage("image: quay.io/ascend/vllm-ascend:v0.11.0rc1\nvllm serve /models/Qwen3-8B\n")["VLLM103"]
    assert "ADV-2026-009" not in adv.message and "NNAL" in adv.message, adv.message
