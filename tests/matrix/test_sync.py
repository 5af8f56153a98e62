"""`ascend-doctor matrix sync` on a small upstream tree built here: it proposes exactly the rows planted in it.

Planted: a vllm-ascend 0.31.0rc1 sdist (its own table row, pins, README/Dockerfile CANN that disagree with the table,
a triton-ascend pin PyPI lacks), an sdist of the vLLM release after the newest the matrix records (one new tool
parser, one new architecture and model_type on top of the newest's), a transformers 5.25.0 wheel (one new model_type on top of 5.24.0's) and saved PyPI JSON files.
The table copy also carries v0.30.0rc1 exactly as shipped, which must not be proposed.
"""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_doctor.cli import cli
from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.knowledge.matrix import load_matrix
from ascend_doctor.knowledge.tomlread import loads_toml
from ascend_doctor.sync.run import sync
from ascend_doctor.sync.tomlout import emit_rows

TABLE = """# Versioning policy

## Release compatibility matrix

| vLLM Ascend | vLLM     | Python          | Stable CANN | PyTorch/torch_npu      | Triton Ascend | Mooncake      |
|-------------|----------|-----------------|-------------|------------------------|---------------|---------------|
| v0.31.0rc1  | v0.31.0  | >= 3.10, < 3.13 | 9.2.0       | 2.10.0 / 2.10.0.post4  | 3.2.3         | v0.3.11.post1 |
| v0.30.0rc1  | v0.30.0  | >= 3.10, < 3.13 | 9.2.0       | 2.10.0 / 2.10.0.post4  | 3.2.2         | v0.3.11.post1 |

| vLLM Ascend | vLLM | Python | Stable CANN | PyTorch/torch_npu | Triton Ascend |
|-------------|------|--------|-------------|-------------------|---------------|
|     main    | {{main_vllm_commit}} | {{py}} | {{cann}} | {{torch}} / {{npu}} | {{triton}} |
"""


def _tar(path: Path, top: str, files: dict) -> str:
    with tarfile.open(path, "w:gz") as t:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return str(path)


BASE = load_matrix().newest_known("vllm")  # the newest vLLM the shipped matrix records
NEXT = f"0.{int(BASE.split('.')[1]) + 1}.0"  # the release the planted sdist stands for


def _py_dict(name: str, keys, value: str = '("m", "C")') -> str:
    body = "".join(f'    "{k}": {value},\n' for k in sorted(keys))
    return f"{name} = {{\n{body}}}\n"


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    d = tmp_path_factory.mktemp("upstream")
    m = load_matrix()
    ascend = _tar(d / "vllm_ascend-0.31.0rc1.tar.gz", "vllm_ascend-0.31.0rc1", {
        "PKG-INFO": "Metadata-Version: 2.1\nName: vllm_ascend\nVersion: 0.31.0rc1\nRequires-Python: >=3.10\n"
                    "Requires-Dist: torch==2.10.0\nRequires-Dist: torch-npu==2.10.0.post4\n"
                    "Requires-Dist: triton-ascend==3.2.3\nRequires-Dist: transformers==5.14.1\n"
                    "Requires-Dist: mindie-turbo==2.0; extra == \"turbo\"\n",
        "README.md": "# vLLM Ascend\n\n- Software:\n    - Python >= 3.10, < 3.13\n    - CANN == 9.1.0 (see notes)\n",
        "Dockerfile": 'ARG CANN_VERSION="9.1.0"\nFROM quay.io/ascend/cann:${CANN_VERSION}-910b-ubuntu22.04-py3.12\n'
                      "ARG VLLM_TAG=v0.31.0\nARG MOONCAKE_TAG=0.3.12\n",
        "csrc/version.info": 'Version=9.1.0\nversion_dir=cann\nrequired_package_runtime_version=">=9.1.0"\n',
        "docs/source/community/versioning_policy.md": TABLE,
        "vllm_ascend/ascend_config.py": "from vllm_ascend.config_utils import config\n\n\n@config\n"
                                        "class AscendConfig:\n    enable_cpu_binding: bool = True\n"
                                        "    planted_key: int = 0\n"})
    tools = sorted(m.parsers_in_vllm(BASE, "tool_parser")) + ["planted_parser"]
    vllm = _tar(d / f"vllm-{NEXT}.tar.gz", f"vllm-{NEXT}", {
        "PKG-INFO": f"Metadata-Version: 2.1\nName: vllm\nVersion: {NEXT}\nRequires-Dist: torch==2.14.0\n",
        "vllm/tool_parsers/__init__.py": _py_dict("_TOOL_PARSERS_TO_REGISTER", tools),
        "vllm/reasoning/__init__.py": _py_dict("_REASONING_PARSERS_TO_REGISTER",
                                               m.parsers_in_vllm(BASE, "reasoning_parser")),
        "vllm/config/model.py": 'TokenizerMode = Literal["auto", "hf", "mistral"]\n',
        "vllm/tokenizers/registry.py": _py_dict("_VLLM_TOKENIZERS", ["deepseek_v41", "kimi_audio"]),
        "vllm/model_executor/models/registry.py": _py_dict(
            "_TEXT_GENERATION_MODELS", sorted(m.vllm_architectures(BASE)) + ["PlantedForCausalLM"]),
        "vllm/transformers_utils/config.py": _py_dict("_CONFIG_REGISTRY",
                                                      sorted(m.vllm_model_types(BASE)) + ["planted"],
                                                      value='"PlantedConfig"'),
    })
    wheel = d / "transformers-5.25.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("transformers-5.25.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: transformers\n"
                                                             "Version: 5.25.0\n")
        z.writestr("transformers/models/auto/configuration_auto.py", "from collections import OrderedDict\n"
                   + "CONFIG_MAPPING_NAMES = OrderedDict(\n    [\n"
                   + "".join(f'        ("{k}", "C"),\n'
                             for k in sorted(m.transformers_model_types("5.24.0") | {"planted_type"}))
                   + "    ]\n)\n")
    pypi = {}
    for name, releases in (("vllm-ascend", {"0.30.0rc1": ["sdist"], "0.31.0rc1": ["sdist"]}),
                           ("triton-ascend", {"3.2.0": ["bdist_wheel"]})):
        files = {v: [{"filename": f"{name.replace('-', '_')}-{v}.tar.gz" if k == "sdist"
                      else f"{name.replace('-', '_')}-{v}-cp311-cp311-manylinux_2_28_aarch64.whl",
                      "packagetype": k, "upload_time": "2026-11-20T10:00:00", "yanked": False} for k in kinds]
                 for v, kinds in releases.items()}
        p = d / f"{name}.json"
        p.write_text(json.dumps({"info": {"name": name}, "releases": files}))
        pypi[name] = str(p)
    return {"ascend": ascend, "vllm": vllm, "transformers": str(wheel), "pypi": pypi}


def test_sync_proposes_exactly_the_planted_rows(upstream):
    res = sync(load_matrix(), ascend=[upstream["ascend"]], vllm=[upstream["vllm"]],
               transformers=[upstream["transformers"]], pypi_json=list(upstream["pypi"].values()))
    got = sorted((p.table, p.id, p.change) for p in res.proposals)
    assert got == [("additional_config", "0.31.0rc1", "new"),
                   ("images", "v0.31.0rc1", "new"),
                   ("package_index", "triton-ascend-not-on-pypi", "new"),
                   ("transformers_models", "5.25.0", "new"),
                   ("vllm_ascend_release", "0.31.0rc1", "new"),
                   ("vllm_models", NEXT, "new"),
                   ("vllm_parsers", NEXT, "new")]
    by = {p.table: p for p in res.proposals}
    row = by["vllm_ascend_release"].row
    assert row["vllm"] == ["0.31.0"] and row["python"] == ">=3.10,<3.13" and row["listed"] == "matrix"
    assert row["cann"] == ["9.2.0", "9.1.0"] and "README 9.1.0" in row["conflict"]["cann"]  # table vs own files
    assert row["torch_npu"] == ["2.10.0.post4"] and row["triton_ascend"] == ["3.2.3"]
    assert row["transformers"] == "==5.14.1" and row["pypi"] == "sdist-only"
    assert row["mooncake"] == "0.3.11.post1"  # the table's column wins over the Dockerfile's 0.3.12
    assert row["ops_cann"] == "9.1.0" and row["ops_cann_requires"] == ">=9.1.0"
    assert any("vllm_ascend-0.31.0rc1.tar.gz:docs/source/community/versioning_policy.md" in s for s in row["source"])
    assert "planted_parser" in by["vllm_parsers"].row["tool_parser"]
    assert by["vllm_parsers"].row["torch"] == "2.14.0"
    assert set(by["vllm_parsers"].row["tokenizer_mode"]) == {"auto", "hf", "mistral", "deepseek_v41", "kimi_audio"}
    models = by["vllm_models"].row
    assert models["after"] == BASE and models["architectures"] == ["PlantedForCausalLM"]
    assert models["model_types"] == ["planted"] and models["removed_architectures"] == []
    tf = by["transformers_models"].row
    assert tf["after"] == "5.24.0" and tf["model_types"] == ["planted_type"] and tf["removed_model_types"] == []
    index = by["package_index"].row
    assert index["versions"] == ["3.2.3"] and "0.31.0rc1" in index["note"]
    assert by["images"].row["cann"] == "9.1.0" and by["images"].row["python"] == "3.12"  # its Dockerfile's base
    keys = by["additional_config"].row
    assert keys["keys"] == ["enable_cpu_binding", "planted_key"] and keys["strict"] is True
    assert keys["source"].startswith("pypi:vllm_ascend-0.31.0rc1.tar.gz (sha256 ")


def test_a_release_the_table_has_no_mooncake_column_for_gets_the_dockerfiles(tmp_path):
    """The release tables before v0.30.0rc1 have no Mooncake column; the Dockerfile's MOONCAKE_TAG says what the
    image installs (0.28.0rc1: 0.3.11.post1, recorded from its sdist). A sdist that says otherwise is a proposal."""
    sdist = _tar(tmp_path / "vllm_ascend-0.28.0rc1.tar.gz", "vllm_ascend-0.28.0rc1", {
        "PKG-INFO": "Metadata-Version: 2.1\nName: vllm_ascend\nVersion: 0.28.0rc1\n",
        "Dockerfile": "ARG MOONCAKE_TAG=0.3.12\n",
        "csrc/version.info": 'Version=9.1.0\nrequired_package_runtime_version=">=9.1.0"\n'})
    res = sync(load_matrix(), ascend=[sdist])
    assert [(p.id, p.differences) for p in res.proposals] == [
        ("0.28.0rc1", ["mooncake: matrix '0.3.11.post1', upstream '0.3.12'"])]


def test_proposed_rows_are_valid_matrix_toml(upstream, tmp_path):
    """The TOML output loads as a matrix layer (after the maintainer confirms the hardware) and answers queries."""
    r = CliRunner().invoke(cli, ["matrix", "sync", "--vllm-ascend", upstream["ascend"], "--vllm", upstream["vllm"],
                                 "--transformers", upstream["transformers"], "--pypi-json", upstream["pypi"]["vllm-ascend"],
                                 "--pypi-json", upstream["pypi"]["triton-ascend"], "--format", "toml"])
    assert r.exit_code == 1, r.output  # rows proposed
    data = loads_toml(r.output, "sync output")
    assert {k: len(v) for k, v in data.items()} == {"vllm_ascend_release": 1, "vllm_parsers": 1, "vllm_models": 1,
                                                    "transformers_models": 1, "package_index": 1, "release": 1,
                                                    "image": 1}
    data.pop("image")  # serve/images rows go to their own table's file
    keys = tmp_path / "keys.toml"  # the --additional-config row goes to its own table's file
    keys.write_text('table = "serve/additional-config"\n' + emit_rows("release", data.pop("release")))
    assert Knowledge([str(keys)]).additional_config.row_for("0.31.0rc1")[0].top_keys == {"enable_cpu_binding",
                                                                                         "planted_key"}
    layer = tmp_path / "layer.toml"
    layer.write_text("schema_version = 1\n" + "\n".join(emit_rows(k, v) for k, v in data.items()))
    m = load_matrix([str(layer)])
    assert m.has_parser(NEXT, "tool_parser", "planted_parser") is True
    assert "PlantedForCausalLM" in m.vllm_architectures(NEXT)
    assert m.first_transformers_with("planted_type") == "5.25.0"
    assert m.vllm_ascend_release("0.31.0rc1").triton_ascend == ["3.2.3"]
    assert m.index_for("triton-ascend", "3.2.3") is not None


def test_nothing_to_propose_exits_0_and_bad_inputs_exit_2(upstream, tmp_path):
    runner = CliRunner()
    # The shipped rows for v0.30.0rc1 agree with a table copy that has only that row.
    only = tmp_path / "vllm-ascend-checkout"
    (only / "docs/source/community").mkdir(parents=True)
    (only / "docs/source/community/versioning_policy.md").write_text(
        "\n".join(line for line in TABLE.splitlines() if "v0.31.0rc1" not in line))
    r = runner.invoke(cli, ["matrix", "sync", "--vllm-ascend", str(only)])
    assert r.exit_code == 0, r.output
    assert "nothing to propose" in r.output
    r = runner.invoke(cli, ["matrix", "sync", "--vllm", str(tmp_path / "missing.tar.gz")])
    assert r.exit_code == 2 and "no such file" in r.output
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not a tarball")
    r = runner.invoke(cli, ["matrix", "sync", "--vllm", str(junk)])
    assert r.exit_code == 2 and "cannot read it as a directory, sdist or wheel" in r.output
    r = runner.invoke(cli, ["matrix", "sync", "--vllm", upstream["ascend"]])
    assert r.exit_code == 2 and "not a vLLM release" in r.output
    r = runner.invoke(cli, ["matrix", "sync"])
    assert r.exit_code == 2 and "nothing to read" in r.output


def test_a_changed_upstream_row_is_proposed_as_changed_with_the_difference(tmp_path):
    """A table copy that says v0.30.0rc1 supports Python < 3.14 and Triton 3.2.3: one changed row, both fields."""
    checkout = tmp_path / "vllm-ascend"
    (checkout / "docs/source/community").mkdir(parents=True)
    (checkout / "docs/source/community/versioning_policy.md").write_text(
        "\n".join(line.replace("< 3.13", "< 3.14").replace("3.2.2  ", "3.2.3  ") for line in TABLE.splitlines()
                  if "v0.31.0rc1" not in line))
    res = sync(load_matrix(), ascend=[str(checkout)])
    assert [(p.table, p.id, p.change) for p in res.proposals] == [("vllm_ascend_release", "0.30.0rc1", "changed")]
    p = res.proposals[0]
    assert "python: matrix '>=3.10,<3.13', upstream '>=3.10,<3.14'" in p.differences
    assert any(d.startswith("triton_ascend: matrix ['3.2.2'], upstream names ['3.2.3'] too") for d in p.differences)
    # Only the table was read: the package's own pin (3.2.2) stays first, the table's value is the other document's.
    assert p.row["triton_ascend"] == ["3.2.2", "3.2.3"] and "triton_ascend" in p.row["conflict"]
    assert p.row["python"] == ">=3.10,<3.14"


def _tar_gz(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


def test_an_archive_bomb_is_refused_before_it_fills_memory(tmp_path):
    """40 members of 4 MiB of zeros pack into ~160 KB and would expand to 160 MiB (1.07 GB was measured read before
    the bound); what is read stays within expansion_limit of the archive's size."""
    from ascend_doctor.core.errors import InputError
    from ascend_doctor.sync.archive import MAX_MEMBER, expansion_limit, open_tree

    bomb = _tar_gz(tmp_path / "vllm-9.9.9.tar.gz", {f"vllm-9.9.9/vllm/m{i}.py": b"\0" * MAX_MEMBER for i in range(40)})
    assert bomb.stat().st_size < 2 * 1024 * 1024
    with pytest.raises(InputError, match="expands past 64 MiB"):
        open_tree(str(bomb))
    whl = tmp_path / "vllm-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(40):
            z.writestr(f"vllm/m{i}.py", b"\0" * MAX_MEMBER)
    with pytest.raises(InputError, match="expands past 64 MiB"):
        open_tree(str(whl))
    assert expansion_limit(48 * 2**20) == 960 * 2**20  # vllm-0.34.0.tar.gz (48 MiB) keeps 93 MiB of text
    small = _tar_gz(tmp_path / "vllm-9.9.8.tar.gz", {"vllm-9.9.8/vllm/a.py": b"x = 1\n"})
    assert open_tree(str(small)).read("vllm/a.py") == "x = 1\n"


def test_a_checkout_link_that_leaves_the_checkout_is_not_read(tmp_path):
    from ascend_doctor.sync.archive import open_tree

    outside = tmp_path / "secret.txt"
    outside.write_text("root:x:0:0\n")
    tree = tmp_path / "vllm-ascend"
    (tree / "vllm_ascend").mkdir(parents=True)
    (tree / "vllm_ascend" / "envs.py").write_text("A = 1\n")
    (tree / "vllm_ascend" / "leak.py").symlink_to(outside)
    (tree / "vllm_ascend" / "loop.py").symlink_to(tree / "vllm_ascend" / "loop.py")
    (tree / "README.md").symlink_to(tree / "vllm_ascend" / "envs.py")  # inside: kept
    t = open_tree(str(tree))
    assert t.read("vllm_ascend/leak.py") is None and t.read("vllm_ascend/loop.py") is None
    assert t.read("README.md") == "A = 1\n" and t.read("vllm_ascend/envs.py") == "A = 1\n"
