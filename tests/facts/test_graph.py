"""The fact graph: declared by every check (`needs`) and probe (`reads`), checked when the registry loads; the
server's world (`serve_entry`, `serving_python`, `server_env`) derived once, so one rule gives one verdict."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from ascend_doctor.cli import cli
from ascend_doctor.core.errors import InputError
from ascend_doctor.core.options import RunOptions
from ascend_doctor.core.registry import load_registry
from ascend_doctor.facts import FactStore
from ascend_doctor.facts.graph import check_graph, cycle, literal_reads
from ascend_doctor.probes import load_probes
from tests.helpers import REPO

HEALTHY = str(REPO / "examples" / "healthy-a2.snapshot.json")


def plugin(tmp_path, body: str):
    d = tmp_path / "site_checks"
    d.mkdir()
    (d / "site.py").write_text(textwrap.dedent(body), encoding="utf-8")
    return str(d)


def test_the_built_in_checks_and_probes_declare_what_they_read():
    """The load-time rule, on the built-in code too (the registry skips reading their bytecode for speed)."""
    reg = load_registry(entry_points=False)
    check_graph(reg.all(), load_probes())  # raises on the first problem
    assert {"server_env", "python"} <= literal_reads(reg.get("ENV102").func)


def test_a_check_that_reads_an_undeclared_fact_fails_when_the_registry_loads(tmp_path):
    d = plugin(tmp_path, '''
        from ascend_doctor.plugin import check

        @check("SITE101", "site-driver", needs=["driver"])
        def site(ctx):
            """The driver is ours

            Why it matters: we qualify one driver.

            How to fix: reinstall it.
            """
            ctx.fact("driver")
            smi = ctx.try_fact("npu_smi")
            return ctx.ok("fine")
        ''')
    with pytest.raises(InputError, match=r"check SITE101 \(dir:.*\) reads npu_smi without declaring it in "
                                         r"needs=\['driver'\]"):
        load_registry([d], entry_points=False)


def test_a_check_that_needs_a_fact_no_probe_provides_fails_at_load(tmp_path):
    d = plugin(tmp_path, '''
        from ascend_doctor.plugin import check

        @check("SITE102", "site-thing", needs=["npu_smi_typo"])
        def site(ctx):
            """A thing

            Why it matters: x.

            How to fix: y.
            """
            return ctx.ok("fine")
        ''')
    with pytest.raises(InputError, match="check SITE102 .* needs npu_smi_typo, which no probe provides"):
        load_registry([d], entry_points=False)


def test_a_probe_cycle_fails_when_the_registry_loads(monkeypatch):
    from ascend_doctor import probes as P

    def a(host, ctx):
        return ctx.fact("site_b")

    def b(host, ctx):
        return ctx.fact("site_a")

    a.reads, b.reads = ("site_b",), ("site_a",)  # what @probe(reads=…) records
    monkeypatch.setitem(P.PROBES, "site_a", a)
    monkeypatch.setitem(P.PROBES, "site_b", b)
    with pytest.raises(InputError, match=r"the probes read each other in a circle: site_a -> site_b -> site_a"):
        load_registry(entry_points=False)


def test_cycle_finder():
    assert cycle({"a": ["b"], "b": ["c"], "c": []}) is None
    assert cycle({"a": ["b"], "b": ["c"], "c": ["b"]}) == ["b", "c", "b"]
    assert cycle({"a": ["a"]}) == ["a", "a"]


def test_a_probe_that_reads_an_undeclared_fact_is_a_probe_bug():
    from ascend_doctor.core.errors import ProbeCrashed
    from ascend_doctor.seam.snapshot import ReplayHost, load_snapshot

    def sneaky(host, ctx):
        return ctx.fact("env")

    sneaky.reads = ()
    probes = {**load_probes(), "site_sneaky": sneaky}
    store = FactStore(ReplayHost(load_snapshot(HEALTHY)), RunOptions(), probes=probes)
    with pytest.raises(ProbeCrashed, match="reads fact 'env' without declaring it") as e:
        store.fact("site_sneaky")
    assert "UndeclaredFact" in e.value.traceback


def test_explain_shows_the_chain_of_facts_and_a_retired_code_says_where_it_went():
    r = CliRunner().invoke(cli, ["explain", "ENV102"])
    assert r.exit_code == 0, r.output
    assert "Where its facts come from:" in r.output
    assert "server_env (derived.py, derived)" in r.output
    assert "    serve_cmd (serve.py, read off the host, with python)" in r.output
    assert "      python (host_facts.py, read off the host, with serving_python)" in r.output
    r = CliRunner().invoke(cli, ["explain", "SERVE401"])
    assert r.exit_code == 0 and "SERVE401 is retired" in r.output and "ENV102" in r.output
    r = CliRunner().invoke(cli, ["check", "--select", "ENV103"])
    assert r.exit_code == 2 and "ENV103 is retired" in r.output
    r = CliRunner().invoke(cli, ["explain", "HOTS103"])
    assert r.exit_code == 2 and "did you mean HOST103" in r.output


# One rule, one verdict ---------------------------------------------------------------------------------------------
def _exec(tmp_path, *command: str) -> dict:
    out = tmp_path / "r.json"
    r = CliRunner().invoke(cli, ["exec", "--replay", HEALTHY, "--format", "json", "-o", str(out), "--", *command])
    assert r.exit_code in (0, 1), r.output
    return {f["code"]: f for f in json.loads(out.read_text())["findings"]}


def test_each_server_variable_gets_one_verdict_the_right_one(tmp_path):
    """The reproduction of #36: the command's own `env` is the server's environment, judged once."""
    f = _exec(tmp_path, "env", "PYTORCH_NPU_ALLOC_CONF=expandable_segments:False", "VLLM_USE_V1=0", "vllm", "serve",
              "Qwen/Qwen3-8B")
    assert not {"SERVE401", "SERVE403", "ENV103"} & set(f)
    assert f["ENV101"]["status"] == "warn" and "expandable_segments:False turns expandable segments off" in \
        f["ENV101"]["message"]
    assert f["ENV101"]["evidence"][0]["source"] == "command line env: PYTORCH_NPU_ALLOC_CONF"
    assert f["ENV102"]["status"] == "warn" and "ignored by vLLM 0.13.0+empty" in f["ENV102"]["message"]
    plain = _exec(tmp_path, "vllm", "serve", "Qwen/Qwen3-8B")
    assert plain["ENV102"]["status"] == "pass" and plain["ENV101"]["evidence"][0]["source"] == \
        "env: PYTORCH_NPU_ALLOC_CONF"


def test_check_and_exec_judge_the_inherited_environment_alike(tmp_path):
    r = CliRunner().invoke(cli, ["check", "--replay", HEALTHY, "--select", "ENV", "--format", "json"])
    check = {f["code"]: f["status"] for f in json.loads(r.output)["findings"]}
    exe = {k: v["status"] for k, v in _exec(tmp_path, "vllm", "serve", "Qwen/Qwen3-8B").items() if k.startswith("ENV")}
    assert check == exe


def test_the_serving_interpreter_is_read_off_the_command_once(tmp_path):
    """`python -m …` names the interpreter: the serving_python fact says so, and nothing rewrites the options."""
    from ascend_doctor.seam.snapshot import ReplayHost, load_snapshot

    snap = load_snapshot(HEALTHY)
    exe = next(iter(snap.python_envs.values())).executable  # /opt/vllm/bin/python3
    opts = RunOptions(serve_argv=[exe, "-m", "vllm.entrypoints.openai.api_server", "--model", "/m"])
    store = FactStore(ReplayHost(snap), opts)
    chosen = store.fact("serving_python")
    assert chosen.path == exe and chosen.how == "the vllm serve command line"
    assert store.fact("serve_entry").launch.entry == "api_server"
    assert store.options is opts and opts.python is None
