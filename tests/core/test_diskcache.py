"""diskcache: a pickle per (kind, content key) that fails soft; the shipped matrix read cold and warm is the same."""

import os
import pickle
from pathlib import Path

import pytest

from ascend_doctor import diskcache, matrix

KEY = "a" * 64


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv(diskcache.ENV, str(d))
    return d


def _entries(d):
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def test_cache_dir_follows_env_xdg_and_home(tmp_path, monkeypatch):
    monkeypatch.setenv(diskcache.ENV, str(tmp_path / "x"))
    assert diskcache.cache_dir() == tmp_path / "x"
    for off in ("off", "OFF", " off ", "0", "none"):
        monkeypatch.setenv(diskcache.ENV, off)
        assert diskcache.cache_dir() is None, off
    monkeypatch.delenv(diskcache.ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert diskcache.cache_dir() == tmp_path / "xdg" / "ascend-doctor"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert diskcache.cache_dir() == tmp_path / "home" / ".cache" / "ascend-doctor"


def _entry_file(d, kind):
    """The one entry file of `kind` (its name is the cache's business; tests only need to find it)."""
    files = [p for p in d.iterdir() if p.name.startswith(f"{kind}-") and p.name.endswith(".pickle")]
    assert len(files) == 1, files
    return files[0]


def test_store_then_load_round_trip(cache):
    value = ({"t": [1, 2.5, "x"]}, ["f1", "f2"])
    assert diskcache.load("thing", KEY) is None
    diskcache.store("thing", KEY, value)
    assert diskcache.load("thing", KEY) == value
    assert diskcache.load("thing", KEY) is not diskcache.load("thing", KEY)  # each load is a fresh copy
    assert _entries(cache) == [_entry_file(cache, "thing").name]  # no temp file left behind
    assert diskcache.load("other", KEY) is None  # kinds do not share entries


def test_store_overwrites_an_entry(cache):
    diskcache.store("thing", KEY, 1)
    diskcache.store("thing", KEY, 2)
    assert diskcache.load("thing", KEY) == 2 and len(_entries(cache)) == 1


def test_key_mismatch_is_a_miss(cache):
    diskcache.store("thing", KEY, "value")
    assert diskcache.load("thing", "b" * 64) is None
    assert diskcache.load("thing", KEY[:40] + "b" * 24) is None  # shares a long prefix with the stored key
    # An entry whose recorded key is not the one asked for (a name collision, a copied file) is a miss too.
    entry = _entry_file(cache, "thing")
    entry.write_bytes(pickle.dumps(("b" * 64, "value")))
    assert diskcache.load("thing", KEY) is None


@pytest.mark.parametrize("content", [b"", b"not a pickle at all", pickle.dumps("no tuple"), pickle.dumps((1, 2, 3)),
                                     pickle.dumps((KEY, "value"))[:-5]])
def test_corrupt_or_foreign_file_is_a_miss(cache, content):
    diskcache.store("thing", KEY, "value")
    assert diskcache.load("thing", KEY) == "value"
    _entry_file(cache, "thing").write_bytes(content)
    assert diskcache.load("thing", KEY) is None


def test_corrupt_entry_is_replaced_by_the_next_store(cache):
    diskcache.store("thing", KEY, "old")
    _entry_file(cache, "thing").write_bytes(b"garbage")
    diskcache.store("thing", KEY, "new")
    assert diskcache.load("thing", KEY) == "new"


def test_none_key_neither_stores_nor_loads(cache):
    diskcache.store("thing", None, "value")
    assert _entries(cache) == []
    assert diskcache.load("thing", None) is None


def test_off_disables_the_cache(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv(diskcache.ENV, "off")
    diskcache.store("thing", KEY, "value")
    assert diskcache.load("thing", KEY) is None
    assert sorted(os.listdir(tmp_path)) == []  # nothing written anywhere (not even a directory named "off")


def test_unwritable_cache_dir_fails_soft(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv(diskcache.ENV, str(blocker / "cache"))  # a directory cannot be made under a file
    diskcache.store("thing", KEY, "value")
    assert diskcache.load("thing", KEY) is None


def test_unpicklable_value_fails_soft_and_leaves_no_temp_file(cache):
    diskcache.store("thing", KEY, lambda: None)
    assert diskcache.load("thing", KEY) is None
    assert _entries(cache) == []


def test_content_key_tracks_file_bytes_name_and_salt(tmp_path):
    a = tmp_path / "a.toml"
    a.write_bytes(b"x = 1\n")
    k1 = diskcache.content_key([a])
    assert isinstance(k1, str) and k1
    assert diskcache.content_key([a]) == k1
    a.write_bytes(b"x = 2\n")  # same length, different bytes
    k2 = diskcache.content_key([a])
    assert k2 != k1
    a.write_bytes(b"x = 1\n")
    assert diskcache.content_key([a]) == k1
    assert diskcache.content_key([a], salt="v2") != k1
    b = tmp_path / "b.toml"
    b.write_bytes(b"x = 1\n")
    assert diskcache.content_key([b]) != k1  # the file name is part of the key
    assert diskcache.content_key([a, b]) != diskcache.content_key([b, a])
    # The length prefix keeps file boundaries apart: "ab" + "" is not "a" + "b".
    c = tmp_path / "c"
    d = tmp_path / "d"
    c.write_bytes(b"ab")
    d.write_bytes(b"")
    k_ab = diskcache.content_key([c, d])
    c.write_bytes(b"a")
    d.write_bytes(b"b")
    assert diskcache.content_key([c, d]) != k_ab


def test_content_key_is_none_for_a_missing_or_unreadable_file(tmp_path):
    a = tmp_path / "a.toml"
    a.write_text("x")
    assert diskcache.content_key([a, tmp_path / "missing.toml"]) is None
    assert diskcache.content_key([tmp_path]) is None  # a directory cannot be read as bytes


# -- the shipped matrix through the cache ----------------------------------------------------------------------------
def _summary(m):
    return {
        "files": list(m.files),
        "releases": [r.version for r in m.releases],
        "release_rows": [r.model_dump(mode="json") for r in m.releases],
        "torch_npu": [r.version for r in m.torch_npu],
        "parsers": [r.vllm for r in m.parsers],
        "advisories": [a.model_dump(mode="json") for a in m.advisories],
        "hdk": len(m.hdk),
        "driver_rules": len(m.driver_rules),
    }


def test_load_matrix_cold_and_warm_cache_agree(cache, monkeypatch):
    monkeypatch.setattr(matrix, "_cache", {})  # the in-process cache, restored afterwards
    calls = []
    real = matrix._shipped_tables

    def counting():
        calls.append(1)
        return real()

    monkeypatch.setattr(matrix, "_shipped_tables", counting)

    cold = matrix.load_matrix()
    assert len(calls) == 1
    assert [p.name for p in cache.iterdir() if p.name.startswith("matrix-")]  # the cold run stored an entry

    matrix._cache.clear()
    warm = matrix.load_matrix()
    assert len(calls) == 1  # served from disk: the TOML files were not read again
    assert warm is not cold
    assert cold.releases and _summary(warm) == _summary(cold)
    assert warm.releases == cold.releases

    matrix._cache.clear()
    monkeypatch.setenv(diskcache.ENV, "off")
    uncached = matrix.load_matrix()
    assert len(calls) == 2
    assert _summary(uncached) == _summary(cold)


def test_layered_file_over_a_warm_cache_does_not_leak_into_the_cached_tables(cache, monkeypatch):
    """A user file layered on the disk-cached shipped tables changes that Matrix only, not the next load."""
    monkeypatch.setattr(matrix, "_cache", {})
    golden = str(Path(__file__).resolve().parents[1] / "data" / "matrix" / "golden-stack.toml")
    cold = matrix.load_matrix()
    matrix._cache.clear()
    layered = matrix.load_matrix([golden])  # built on the tables read back from disk
    assert layered.vllm_ascend_release("0.31.0rc1") is not None and golden in layered.files
    matrix._cache.clear()
    warm = matrix.load_matrix()
    assert warm.vllm_ascend_release("0.31.0rc1") is None and golden not in warm.files
    assert _summary(warm) == _summary(cold)


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership")
def test_entry_writable_by_others_is_not_unpickled(tmp_path, monkeypatch):
    monkeypatch.setenv(diskcache.ENV, str(tmp_path))
    key = diskcache.content_key([], "salt")
    diskcache.store("kind", key, {"v": 1})
    (entry,) = tmp_path.glob("kind-*.pickle")
    assert diskcache.load("kind", key) == {"v": 1}
    entry.chmod(0o666)  # anyone could have replaced it
    assert diskcache.load("kind", key) is None
    entry.chmod(0o600)
    assert diskcache.load("kind", key) == {"v": 1}


def test_no_home_directory_disables_the_cache(monkeypatch):
    monkeypatch.delenv(diskcache.ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)

    def no_home():
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(diskcache.Path, "home", staticmethod(no_home))
    assert diskcache.cache_dir() is None
    assert diskcache.load("kind", "k") is None


def test_store_keeps_the_newest_entries_of_a_kind(tmp_path, monkeypatch):
    monkeypatch.setenv(diskcache.ENV, str(tmp_path))
    keys = [diskcache.content_key([], f"salt-{i}") for i in range(diskcache.KEEP + 2)]
    for i, key in enumerate(keys):
        diskcache.store("kind", key, i)
        for path in tmp_path.glob("kind-*.pickle"):  # make the order of writes visible to mtime
            os.utime(path, (path.stat().st_atime, path.stat().st_mtime - 1))
    diskcache.store("other", keys[0], "x")
    assert len(list(tmp_path.glob("kind-*.pickle"))) == diskcache.KEEP
    assert [diskcache.load("kind", k) for k in keys] == [None, None, 2, 3, 4, 5]
    assert diskcache.load("other", keys[0]) == "x"
