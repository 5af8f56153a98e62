"""The serve/kv-pool-env table: matrix sync reads each release's KV-pool guide table (both of its shapes), and the
shipped rows are what it extracts from the stored PyPI sdists (skipped on a plain clone)."""

from __future__ import annotations

import pytest

from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.knowledge.kv_pool_env import holds, numbers
from ascend_doctor.sync.kv_pool_env import clauses, merge_kv_pool_env, read_kv_pool_env
from tests.matrix.stored import VA_SDISTS as SDISTS

OLD = """# KV pool

```shell
# For detailed parameter descriptions, see 5.1 Environment Variables Description
export ASCEND_ENABLE_USE_FABRIC_MEM=1
```

### 5.1. Environment Variables Description

| Hardware | Dependencies | Export Command | Description |
| :--- | :--- | :--- | :--- |
| 800 I/T A3 series | HDK >= 26.0or HDK >= 25.5 with mooncake >= v0.3.11CANN >= 9.0.0LingQu Computing Network >= 1.5 | `export ASCEND_ENABLE_USE_FABRIC_MEM=1` | **Recommended**. |
| 800 I/T A3 series | 25.5.0<=HDK<26.0.0 | `export ASCEND_BUFFER_POOL=4:8` | buffers |
| 800 I/T A2 series | N/A | `export HCCL_INTRA_ROCE_ENABLE=1` | Required on A2 |
"""

NEW = """### HDK and CANN Version Compatibility Reference

| Hardware Series | HDK Requirement | CANN Requirement | Other Dependencies |
| :--- | :--- | :--- | :--- |
| 800 I/T A3 | >= 26.0 or >= 25.5 (with Mooncake >= v0.3.11) | >= 9.1.0 | LingQu Computing Network >= 1.5; recommended `ASCEND_ENABLE_USE_FABRIC_MEM=1` |
| 800 I/T A2 | >= 25.5 recommended | >= 9.1.0 | `HCCL_INTRA_ROCE_ENABLE=1` direct transfer |
"""


def _read(files: dict):
    return read_kv_pool_env(lambda p: files.get(p))


def test_the_older_shape_without_its_line_breaks_and_a_script_comment_that_names_the_heading():
    rows = {r["variable"]: r for r in _read({"docs/source/user_guide/feature_guide/kv_pool.md": OLD})}
    assert set(rows) == {"ASCEND_ENABLE_USE_FABRIC_MEM", "ASCEND_BUFFER_POOL"}  # N/A: no requirement, no row
    fabric = rows["ASCEND_ENABLE_USE_FABRIC_MEM"]
    assert fabric["hdk_any"] == ["hdk>=26.0", "hdk>=25.5,mooncake>=0.3.11"] and fabric["all_of"] == ["cann>=9.0.0"]
    assert fabric["unchecked"] == ["LingQu Computing Network >= 1.5"] and fabric["recommended"] is False
    assert fabric["hardware"] == "A3" and fabric["where"].endswith("kv_pool.md:12")
    assert rows["ASCEND_BUFFER_POOL"]["hdk_any"] == ["hdk>=25.5.0,hdk<26.0.0"]


def test_the_0_30_shape():
    rows = {r["variable"]: r for r in _read({
        "docs/source/user_guide/feature_guide/kv_cache_pool_ascend_store.md": NEW})}
    fabric, roce = rows["ASCEND_ENABLE_USE_FABRIC_MEM"], rows["HCCL_INTRA_ROCE_ENABLE"]
    assert fabric["hdk_any"] == ["hdk>=26.0", "hdk>=25.5,mooncake>=0.3.11"] and fabric["all_of"] == ["cann>=9.1.0"]
    assert fabric["recommended"] is False  # "recommended" names the variable there, not the HDK
    assert roce["hardware"] == "A2" and roce["recommended"] is True and roce["hdk_any"] == ["hdk>=25.5"]


def test_versions_compare_on_their_numbers():
    assert numbers("26.0.RC1") == (26, 0, 0) and numbers("v0.3.11.post1") == (0, 3, 11) and numbers("N/A") is None
    assert holds("hdk>=26.0", {"hdk": "26.0.rc1"}) is True and holds("hdk>=26.0", {"hdk": "25.5.1"}) is False
    assert holds("hdk<26.0.0", {"hdk": "25.5.0"}) is True and holds("cann>=9.0.0", {"cann": None}) is None
    assert clauses("N/A")["hdk_any"] == []


@pytest.mark.skipif(not SDISTS, reason="the vllm-ascend sdists are not stored here")
def test_the_shipped_rows_are_what_sync_extracts_from_the_sdists():
    from tests.matrix.stored import assert_shipped_rows_are, per_release

    assert_shipped_rows_are(merge_kv_pool_env(per_release(read_kv_pool_env)),
                            {r.id: r.model_dump() for r in Knowledge().kv_pool_env.requirement})


def test_sync_proposes_a_row_a_release_adds(tmp_path):
    import io
    import tarfile

    from ascend_doctor.knowledge.matrix import load_matrix
    from ascend_doctor.sync.run import sync

    path = tmp_path / "vllm_ascend-0.31.0rc1.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, text in {"PKG-INFO": "Metadata-Version: 2.1\nName: vllm_ascend\nVersion: 0.31.0rc1\n",
                           "docs/source/user_guide/feature_guide/kv_cache_pool_ascend_store.md": NEW}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"vllm_ascend-0.31.0rc1/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    k = Knowledge()
    res = sync(load_matrix(), ascend=[str(path)], kv_pool_env=k.kv_pool_env)
    props = [p for p in res.proposals if p.table == "kv_pool_env"]
    assert props and all("0.31.0rc1" in p.row["releases"] for p in props)
