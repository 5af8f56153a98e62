"""depcheck: pip-check logic over the `python` fact's distributions, markers, name normalisation, the allow-list."""

from pathlib import Path

import pytest

from ascend_doctor.core.errors import InputError
from ascend_doctor.knowledge.depcheck import AllowList, find_conflicts, marker_environment
from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.seam.host import Distribution, PythonEnv


def load_allowlist(layer=None):
    """The shipped allow-list, or with the rows of `layer` (a file without its `table` line) layered over it."""
    if layer is None:
        return Knowledge().allowlist
    text = Path(layer).read_text()
    Path(layer).write_text('table = "depcheck/dependency-allowlist"\n' + text)
    return Knowledge([layer]).allowlist


def env(*dists, version="3.11.7", machine="aarch64"):
    return PythonEnv(executable="/opt/v/bin/python", version=version, implementation="CPython", machine=machine,
                     distributions=[Distribution(name=n, version=v, requires=list(r)) for n, v, r in dists])


# vllm-ascend 0.13.0 with PyPI vllm 0.13.0: vllm wants CUDA torch 2.9.0, vllm-ascend wants 2.8.0 (matrix-facts §5).
STACK = [
    ("vllm", "0.13.0", ["torch==2.9.0", "transformers>=4.56.0", "xgrammar==0.1.27; platform_machine == 'x86_64'"]),
    ("vllm_ascend", "0.13.0", ["torch==2.8.0", "torch-npu==2.8.0.post2", "transformers<5,>=4.57.4"]),
    ("torch", "2.8.0", ["filelock", "sympy>=1.13.3"]),
    ("torch_npu", "2.8.0.post2", ["torch==2.8.0"]),
    ("transformers", "4.57.6", ["numpy>=1.17", "tqdm>=4.27"]),
    ("filelock", "3.16.1", []), ("sympy", "1.13.3", []), ("numpy", "1.26.4", []), ("tqdm", "4.67.1", []),
]


def test_clean_environment_has_no_conflicts():
    dists = [d for d in STACK if d[0] != "vllm"]
    assert find_conflicts(env(*dists)) == []


def test_version_conflict_worded_like_pip_check():
    cs = find_conflicts(env(*STACK))
    assert [c.line() for c in cs] == ["vllm 0.13.0 has requirement torch==2.9.0, but you have torch 2.8.0."]
    assert cs[0].kind == "version" and cs[0].allowed_by is None


def test_missing_requirement():
    dists = [d for d in STACK if d[0] != "torch_npu"]
    cs = [c for c in find_conflicts(env(*dists)) if c.kind == "missing"]
    assert [c.line() for c in cs] == ["vllm_ascend 0.13.0 requires torch-npu==2.8.0.post2, which is not installed."]


def test_names_are_normalised():
    # torch_npu installed, required as Torch.NPU: same project (PEP 503).
    cs = find_conflicts(env(("a", "1.0", ["Torch.NPU>=2.8"]), ("torch_npu", "2.8.0.post2", [])))
    assert cs == []


def test_markers_evaluated_for_that_interpreter():
    reqs = ["tomli>=2; python_version < '3.11'", "xgrammar==0.1.27; platform_machine == 'x86_64'",
            "cupy; sys_platform == 'win32'", "pytest; extra == 'test'"]
    assert find_conflicts(env(("pkg", "1.0", reqs), version="3.11.7", machine="aarch64")) == []
    missing = {c.name for c in find_conflicts(env(("pkg", "1.0", reqs), version="3.10.12", machine="x86_64"))}
    assert missing == {"tomli", "xgrammar"}


def test_marker_environment_from_fact():
    m = marker_environment(env(version="3.9.18", machine="x86_64"))
    assert m["python_version"] == "3.9" and m["platform_machine"] == "x86_64" and m["sys_platform"] == "linux"


def test_local_label_satisfies_exact_pin():
    assert find_conflicts(env(("torch_npu", "2.5.1", ["torch==2.5.1"]), ("torch", "2.5.1+cpu", []))) == []


def test_unreadable_requirement_and_version_are_not_conflicts():
    dists = [("a", "1.0", ["not a requirement ;;"]), ("b", "1.0", ["c>=1"]), ("c", "weird!", [])]
    assert find_conflicts(env(*dists)) == []


def test_shipped_allowlist_allows_the_documented_torch_pin():
    al = load_allowlist()
    cs = find_conflicts(env(*STACK), al)
    assert len(cs) == 1 and cs[0].allowed_by == "vllm-cuda-torch-pin"
    assert "vllm-project/vllm-ascend#754" in cs[0].allowed_source


def test_allowlist_does_not_cover_vllm_ascend_own_pin():
    # torch 2.9.0 satisfies vllm but not vllm-ascend: that conflict is real (vllm-ascend#7587) and stays.
    dists = [("torch", "2.9.0", []) if d[0] == "torch" else d for d in STACK]
    cs = find_conflicts(env(*dists), load_allowlist())
    bad = [c for c in cs if c.allowed_by is None]
    assert {c.requirer for c in bad} == {"vllm_ascend", "torch_npu"}


def test_allowlist_rule_needs_vllm_ascend_installed():
    dists = [d for d in STACK if d[0] not in ("vllm_ascend", "torch_npu")]
    cs = find_conflicts(env(*dists), load_allowlist())
    assert [c.allowed_by for c in cs] == [None]


def test_allowlist_schema_errors_name_the_file(tmp_path):
    p = tmp_path / "a.toml"
    p.write_text('schema_version = 1\nupdated = 2026-11-29\n[[allow]]\nid = "x"\nrequirer = "vllm"\n'
                 'requirement = "torch"\nreason = "r"\nsource = []\n')
    with pytest.raises(InputError, match=r"a\.toml: allow\[0\] \(x\)\.source"):
        load_allowlist(str(p))
    p.write_text('schema_version = 1\nupdated = 2026-11-29\n[[allow]]\nid = "x"\nrequirer = "vllm"\n'
                 'requirement = "torch"\nwhen = { vllm-ascend = ">=>1" }\nreason = "r"\nsource = ["a#1"]\n')
    with pytest.raises(InputError, match="when"):
        load_allowlist(str(p))


def test_allowlist_names_normalised():
    al = AllowList.model_validate({"schema_version": 1, "updated": "2026-11-29", "allow": [
        {"id": "r", "requirer": "VLLM", "requirement": "Torch", "when": {"vllm_ascend": ">=0.7"}, "reason": "x",
         "source": ["a#1"]}]})
    assert al.allow[0].requirer == "vllm" and "vllm-ascend" in al.allow[0].when
