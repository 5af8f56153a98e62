"""SERVE325: what the release notes retired (serve/release-changes), against the names a deployment sets; the
reader of the notes' change sections, and the shipped table against what it reads in the stored sdist."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ascend_doctor.knowledge.release_changes import retired_names
from ascend_doctor.report import Status
from tests.checks.test_serve_checks import facts, on_release, run_check
from tests.helpers import REPO, shipped

SDISTS = Path(os.environ.get("ASCEND_DOCTOR_SDISTS", REPO.parent / "sdists")) / "va"


@pytest.mark.parametrize("bullet,old,new", [
    ("`OLD_KNOB` was removed. Use `NEW_KNOB=1` or `OTHER_KNOB=1` instead.", ["OLD_KNOB"], ["NEW_KNOB", "OTHER_KNOB"]),
    ("**FOO_OPTIMIZE** is removed and `FOO_PREFETCH` is recommended to replace it.", ["FOO_OPTIMIZE"],
     ["FOO_PREFETCH"]),
    ("`FOO_OPTIMIZE` is removed and `FOO_PREFETCH` is recommend to replace it.", ["FOO_OPTIMIZE"], ["FOO_PREFETCH"]),
    ("`old_key` in `additional_config` is renamed to `new_key_path`.", ["old_key"], ["new_key_path"]),
    ("The former `both_c8` option was split into `left_c8` and `right_c8`.", ["both_c8"], ["left_c8", "right_c8"]),
    ("`AcmeConnector` is deprecated. We'll remove it in the next release.", [], []),  # still works
    ("Migrate the switch to `additional_config.enable_thing`.", [], ["enable_thing"]),
    ("The profiler envs `PROF_DIR` do not work with this plugin now. Please use `--profiler-config` instead.",
     ["PROF_DIR"], ["--profiler-config"]),
])
def test_the_names_a_bullet_retires_and_the_ones_it_says_to_use(bullet, old, new):
    assert retired_names(bullet) == (old, new)


def _on(cmd: str, release: str, env=None):
    f = on_release(facts(cmd, env=env), release)
    return run_check("SERVE325", f)


def test_a_variable_the_notes_removed_warns_with_their_words_from_that_release_on():
    out = _on("vllm serve /m", "0.23.0", env={"ASCEND_BUFFER_POOL": "4:8"})
    assert out.status == Status.WARN and "ASCEND_BUFFER_POOL=4:8" in out.message
    assert "HCCL_INTRA_ROCE_ENABLE" in out.message and "0.23.0" in out.message
    assert _on("vllm serve /m", "0.22.1rc1", env={"ASCEND_BUFFER_POOL": "4:8"}).status == Status.PASS
    assert _on("vllm serve /m", "0.23.0", env={"HCCL_INTRA_ROCE_ENABLE": "1"}).status == Status.PASS


def test_a_variable_vllm_reads_but_vllm_ascend_does_not_honour():
    out = _on("vllm serve /m", "0.14.0rc1", env={"VLLM_TORCH_PROFILER_DIR": "/tmp/p"})
    assert out.status == Status.WARN and "--profiler-config" in out.message


def test_config_keys_at_any_depth_and_a_name_a_later_release_brings_back():
    cfg = '--additional-config {"ascend_compilation_config":{"dump_config":{}}}'
    out = _on(f"vllm serve /m {cfg}", "0.13.0")
    assert out.status == Status.WARN and "ascend_compilation_config.dump_config" in out.message
    assert "dump_config_path" in out.message
    old = '--additional-config {"enable_flash_comm_v1":true}'
    assert _on(f"vllm serve /m {old}", "0.18.0").status == Status.WARN
    assert _on('vllm serve /m --additional-config {"enable_sp":true}', "0.18.0").status == Status.PASS


def test_a_paste_without_the_environment_leaves_its_variables_unjudged():
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.triage.run import triage_text

    text = "vllm-ascend: 0.23.0\nvllm: 0.23.0\nvllm serve /models/Qwen3-8B --tensor-parallel-size 1\n"
    f = next(x for x in triage_text(text, "p.md", load_registry(entry_points=False), RunOptions()).findings
             if x.code == "SERVE325")
    assert f.status == Status.PASS and "not judged" in f.message and "ASCEND_BUFFER_POOL" in f.message
    set_ = triage_text(text.replace("vllm serve", "export ASCEND_BUFFER_POOL=4:8\nvllm serve"), "p.md",
                       load_registry(entry_points=False), RunOptions())
    assert next(x for x in set_.findings if x.code == "SERVE325").status == Status.WARN


def test_the_shipped_table_is_what_sync_reads_from_the_stored_newest_sdist():
    from ascend_doctor.sync.archive import open_tree
    from ascend_doctor.sync.release_changes import read_release_changes
    from ascend_doctor.sync.release_notes import NOTES

    path = SDISTS / "vllm_ascend-0.30.0rc2.tar.gz"
    if not path.is_file():
        pytest.skip(f"{path} not stored here")
    read = {i: {"release": v, **f} for v, items in read_release_changes(open_tree(str(path)).read(NOTES)).items()
            for i, f in items.items()}
    rows = {r.id: r for r in shipped().release_changes.change}
    assert set(read) == set(rows)
    for i, f in read.items():
        r = rows[i]
        assert (r.release, r.section, r.text, r.links, r.old, r.new) == (
            f["release"], f["section"], f["text"], f["links"], f["old"], f["new"]), i


def test_an_unordered_version_is_unknown_and_no_vllm_ascend_skips():
    out = _on("vllm serve /m", "not-a-version", env={"ASCEND_BUFFER_POOL": "4:8"})
    assert out.status == Status.UNKNOWN and "not-a-version" in out.message
    f = facts("vllm serve /m", env={"ASCEND_BUFFER_POOL": "4:8"})
    f["python"].distributions = [d for d in f["python"].distributions if d.name != "vllm-ascend"]
    assert run_check("SERVE325", f).status == Status.SKIP


def test_hostile_nesting_is_read_to_a_bounded_depth():
    """A key buried deeper than vllm-ascend's sections go is not looked for (a paste may nest thousands deep)."""
    deep = "{" + '"a":{' * 40 + '"dump_config":{}' + "}" * 40 + "}"
    out = _on(f"vllm serve /m --additional-config {deep}", "0.13.0")
    assert out.status == Status.PASS
