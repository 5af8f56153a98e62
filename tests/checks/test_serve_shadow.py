"""SERVE209 a local vllm before the installed one (vllm-ascend#527, #5497, vllm#475): the probe over real
directories and the check's entry-point rule."""

from __future__ import annotations

from ascend_doctor.probes.shadow import shadow_probe
from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.helpers import parse_serve, run_check, shipped
from tests.hook.dirhost import DirHost


def probe(tmp_path, env):
    return shadow_probe(DirHost(env=env), None)


def judge(fact, command: str):
    py = PythonEnv(distributions=[Distribution(name="vllm", version="0.13.0", location="/opt/v/site-packages")])
    return run_check("SERVE209", {"serve_cmd": parse_serve(command.split(), shipped().matrix), "vllm_shadow": fact, "python": py})


def test_a_vllm_folder_in_the_working_directory_shadows_python_m(tmp_path):
    (tmp_path / "vllm").mkdir()
    fact = probe(tmp_path, {"PWD": str(tmp_path)})
    assert [h.name for h in fact.hits] == ["vllm"]
    f = judge(fact, "python -m vllm.entrypoints.openai.api_server --model /m")
    assert f.status == Status.FAIL and f"{tmp_path}/vllm (working directory)" in f.message
    assert judge(fact, "vllm serve /m").status == Status.PASS  # the console script does not look in the cwd


def test_pythonpath_shadows_any_entry_but_not_the_installed_location(tmp_path):
    (tmp_path / "vllm.py").write_text("")
    fact = probe(tmp_path, {"PYTHONPATH": f"{tmp_path}:/nonexistent"})
    assert judge(fact, "vllm serve /m").status == Status.FAIL
    assert any("/nonexistent" in u for u in fact.unreadable)
    site = tmp_path / "site"
    (site / "vllm").mkdir(parents=True)
    fact = probe(tmp_path, {"PYTHONPATH": str(site)})
    py_site = PythonEnv(distributions=[Distribution(name="vllm", version="0.13.0", location=str(site))])
    out = run_check("SERVE209", {"serve_cmd": parse_serve("vllm serve /m".split(), shipped().matrix), "vllm_shadow": fact,
                                 "python": py_site})
    assert out.status == Status.PASS


def test_python_m_without_a_known_working_directory_is_unknown(tmp_path):
    fact = probe(tmp_path, {})
    assert judge(fact, "python -m vllm.entrypoints.openai.api_server --model /m").status == Status.UNKNOWN
