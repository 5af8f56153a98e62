"""The known issues of vllm-ascend's release notes (serve/known-issues): the reader, sync's merge of several trees'
notes, the shipped rows against the stored sdists, and the conditions a row states against a deployment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.knowledge.known_issues import KnownIssue, applies
from ascend_doctor.knowledge.serve_options import parse_serve
from ascend_doctor.sync.release_notes import issue_id, merge, read_known_issues
from tests.helpers import REPO

SDISTS = Path(os.environ.get("ASCEND_DOCTOR_SDISTS", REPO.parent / "sdists"))

NOTES = """# Release notes

## v0.31.0rc1 - 2026.11.01

### Highlights

- Something new. [#1](https://github.com/vllm-project/vllm-ascend/pull/1)

### Known Issues

- **Planted**: GLM-5.1 with Expert Parallel and FULL graph mode can fail with `MoeDistributeDispatchV2 failed at
  capture time`. Disable Expert Parallel. [#9503](https://github.com/vllm-project/vllm-ascend/issues/9503)
- Log noise only.

## v0.30.0rc1 - 2026.10.01

### Known issue

- An older issue.
"""


def test_the_reader_takes_each_known_issue_bullet_under_its_release():
    got = read_known_issues(NOTES)
    assert sorted(got) == ["0.30.0rc1", "0.31.0rc1"]
    first = next(iter(got["0.31.0rc1"].values()))
    assert first["text"].startswith("**Planted**: GLM-5.1 with Expert Parallel and FULL graph mode can fail with")
    assert "capture time`. Disable" in first["text"]  # the continuation line is joined
    assert first["links"] == ["https://github.com/vllm-project/vllm-ascend/issues/9503"]
    assert first["quoted"] == ["MoeDistributeDispatchV2 failed at capture time"]
    assert len(got["0.31.0rc1"]) == 2 and "Something new" not in str(got)
    assert issue_id("0.30.0rc1", "An older issue.") in got["0.30.0rc1"]


def test_a_bullet_reworded_in_a_later_tree_is_one_issue_in_the_newest_wording():
    new = read_known_issues(NOTES)
    old = read_known_issues(NOTES.replace("An older issue.", "An oldr issue."))
    merged = merge([new, old])
    texts = sorted(r["text"] for r in merged.values() if r["release"] == "0.30.0rc1")
    assert texts == ["An older issue."]


@pytest.mark.parametrize("name", ["vllm_ascend-0.30.0rc2.tar.gz", "vllm_ascend-0.21.0rc1.tar.gz"])
def test_every_shipped_row_of_a_release_is_in_its_sdists_notes(name):
    """The stored PyPI sdist (ASCEND_DOCTOR_SDISTS/va; skipped on a plain clone): every known issue sync reads in
    the sdist's notes is a shipped row of the same release (by id, or a newer sdist's wording of it)."""
    from ascend_doctor.sync.archive import open_tree
    from ascend_doctor.sync.release_notes import NOTES as PATH

    path = SDISTS / "va" / name
    if not path.is_file():
        pytest.skip(f"{path} not stored here")
    notes = read_known_issues(open_tree(str(path)).read(PATH))
    rows = Knowledge().known_issues.known_issue
    import difflib

    have = {r.id: r for r in rows}
    for version, items in notes.items():
        for i, fields in items.items():
            assert i in have or any(r.release == version and difflib.SequenceMatcher(
                None, r.text, fields["text"]).ratio() > 0.9 for r in rows), i


def _issue(**kw) -> KnownIssue:
    base = {"id": "KI-0.21.0rc1-abcdef", "release": "0.21.0rc1", "text": "t", "source": "s"}
    return KnownIssue.model_validate({**base, **kw})


class _Model:
    def __init__(self, path, config):
        self.path, self.model, self.config = path, path, config


def test_conditions_match_fail_or_stay_unjudged():
    k = Knowledge()
    cmd = parse_serve("vllm serve /models/GLM-5.1-w8a8 --enable-expert-parallel --compilation-config "
                      "{\"cudagraph_mode\":\"FULL_DECODE_ONLY\"}".split(), k.matrix)
    glm = _Model("/models/GLM-5.1-w8a8", {"model_type": "glm_moe_dsa"})
    row = _issue(models=["GLM-5.1", "glm_moe_dsa"], features=["Expert Parallel", "Fullgraph AclGraph"])
    ok, seen = applies(row, versions={}, families={"A3"}, cmd=cmd, env={}, model=glm, model_seen=True)
    assert ok is True and "--enable-expert-parallel" in seen and "GLM-5.1" in seen  # the folder names the generation
    by_type = _Model("/models/w8a8-ckpt", {"model_type": "glm_moe_dsa"})
    assert applies(row, versions={}, families={"A3"}, cmd=cmd, env={}, model=by_type, model_seen=True)[1][0] == \
        "glm_moe_dsa"
    eager = parse_serve("vllm serve /models/GLM-5.1-w8a8 --enable-expert-parallel".split(), k.matrix)
    assert applies(row, versions={}, families=None, cmd=eager, env={}, model=glm, model_seen=True)[0] is False
    qwen = _Model("/models/Qwen3-8B", {"model_type": "qwen3"})
    assert applies(row, versions={}, families=None, cmd=cmd, env={}, model=qwen, model_seen=True)[0] is False
    # no command: the features are not seen; the row is neither matched nor cleared
    ok, unseen = applies(row, versions={}, families=None, cmd=None, env={}, model=glm, model_seen=True)
    assert ok is None and "Expert Parallel" in unseen
    stack = _issue(stack={"driver": "<25.5.1"}, chips=["A3"])
    assert applies(stack, versions={"driver": "25.3.rc1"}, families={"A3"}, cmd=None, env={}, model=None,
                   model_seen=False)[0] is True
    assert applies(stack, versions={"driver": "25.5.1"}, families={"A3"}, cmd=None, env={}, model=None,
                   model_seen=False)[0] is False
    assert applies(stack, versions={}, families={"A3"}, cmd=None, env={}, model=None, model_seen=False)[0] is None
    assert _issue(vllm_ascend=">=0.20.2rc1,<0.22.1rc1").for_release("0.21.0rc1")
    assert not _issue().for_release("0.22.1rc1") and _issue().for_release("0.21.0rc1")


def test_a_fix_in_a_development_build_leaves_the_final_the_release_accepts_affected():
    """A known issue whose workaround installs a development or pre-release build (`triton-ascend==3.2.0.dev20260322`)
    bounds the affected versions below it; PEP 440 puts that build before its final 3.2.0, which the release itself
    pins and which was built before the fix (vllm-ascend#8239). Every such row must count the final the release
    accepts as affected, or say otherwise with an explicit range."""
    import re

    from ascend_doctor.text.versions import SpecifierSet, parse_version

    k = Knowledge()
    missing = []
    for row in k.known_issues.known_issue:
        release = k.matrix.vllm_ascend_release(row.release)
        for pkg, spec in row.stack.items():
            for bound in re.findall(r"<\s*([0-9][0-9A-Za-z.]*)", spec):
                b = parse_version(bound)
                final = ".".join(str(x) for x in b.release)
                accepted = getattr(release, pkg.replace("-", "_"), []) if release is not None else []
                if b.is_prerelease() and any(parse_version(a) == parse_version(final) for a in accepted) \
                        and not SpecifierSet(spec).contains(final):
                    missing.append(f"{row.id} {pkg} {spec!r} leaves {final} out")
    assert missing == []
