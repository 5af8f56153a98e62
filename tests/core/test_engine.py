"""Engine behaviour: unknown on missing facts, error on crashing checks, probe timeouts, config, waivers."""

import textwrap
import time
from datetime import date, datetime, timezone

import pytest

from ascend_doctor.core.config import Config, WaiverRule, load_config, validate_against
from ascend_doctor.core.engine import run_static
from ascend_doctor.core.errors import FactUnavailable, InputError
from ascend_doctor.core.evaluator import CheckContext, apply_config
from ascend_doctor.core.evaluator import evaluate_one as evaluate
from ascend_doctor.core.options import RunOptions
from ascend_doctor.core.registry import Check, Registry, load_dir, load_registry
from ascend_doctor.facts import FactStore
from ascend_doctor.report import Severity, Status
from ascend_doctor.seam.snapshot import ReplayHost, Snapshot
from tests.helpers import REPO

DOC = "Title\n\nWhy it matters: because.\n\nHow to fix: do it.\n"


def _mk(code, func, severity="error", needs=()):
    return Check(code=code, slug=code.lower().replace("x", "x-"), severity=Severity(severity), func=func,
                 needs=tuple(needs), doc=DOC)


def _ctx(facts=None, probes=None, timeout=10.0):
    opts = RunOptions(probe_timeout=timeout)
    return CheckContext(FactStore(host=ReplayHost(Snapshot()), options=opts, probes=probes or {}, preset=facts), opts)


def test_missing_fact_gives_unknown_with_reason():
    c = _mk("TEST101", lambda ctx: ctx.ok(str(ctx.fact("nope"))), needs=["nope"])
    f = evaluate(c, _ctx())
    assert f.status == Status.UNKNOWN and "nope" in f.message and f.level is None


def test_crashing_check_is_an_error_finding_with_traceback():
    def boom(ctx):
        raise ZeroDivisionError("division by zero")

    f = evaluate(_mk("TEST102", boom), _ctx())
    assert f.status == Status.ERROR and "ZeroDivisionError" in f.message
    assert "Traceback" in f.traceback and f.level == Severity.ERROR


def test_check_returning_garbage_is_an_error():
    f = evaluate(_mk("TEST103", lambda ctx: "pass"), _ctx())
    assert f.status == Status.ERROR and "not an Outcome" in f.message


def test_probe_timeout_and_crash_become_unavailable():
    def slow(host, ctx):
        time.sleep(5)
        return 1

    def crash(host, ctx):
        raise KeyError("x")

    def unavailable(host, ctx):
        raise FactUnavailable("u", "npu-smi not found")

    ctx = _ctx(probes={"slow": slow, "crash": crash, "u": unavailable}, timeout=0.3)
    c = _mk("TEST104", lambda ctx: ctx.ok(str(ctx.fact("slow"))), needs=["slow"])
    f = evaluate(c, ctx)
    assert f.status == Status.UNKNOWN and "did not finish within 0.3s" in f.message
    f = evaluate(_mk("TEST105", lambda ctx: ctx.ok(str(ctx.fact("crash"))), needs=["crash"]), ctx)
    assert f.status == Status.ERROR and "probe crashed: KeyError" in f.message  # a bug of ours, not "could not look"
    assert "raise KeyError" in f.traceback and f.level is not None
    f = evaluate(_mk("TEST107", lambda ctx: ctx.ok(str(ctx.try_fact("crash"))), needs=["crash"]), ctx)
    assert f.status == Status.ERROR  # an optional fact whose probe crashed is still an error, never a quiet None
    f = evaluate(_mk("TEST106", lambda ctx: ctx.ok(str(ctx.fact("u"))), needs=["u"]), ctx)
    assert f.status == Status.UNKNOWN and "npu-smi not found" in f.message


def test_probes_run_concurrently():
    def slow(host, ctx):
        time.sleep(0.4)
        return 1

    store = FactStore(ReplayHost(Snapshot()), RunOptions(), probes={f"p{i}": slow for i in range(6)})
    t0 = time.monotonic()
    store.start_all([f"p{i}" for i in range(6)])
    assert [store.fact(f"p{i}") for i in range(6)] == [1] * 6
    # six 0.4s probes in parallel: well under their 2.4s serial sum
    assert time.monotonic() - t0 < 2.0


def test_warn_is_capped_at_warning_level_and_fail_on():
    reg = Registry()
    reg.add(_mk("TEST201", lambda ctx: ctx.warn("meh"), severity="critical"))
    rep = run_static(ReplayHost(Snapshot()), reg, RunOptions())
    f = rep.findings[0]
    assert f.level == Severity.WARNING and rep.exit_code == 0
    rep = run_static(ReplayHost(Snapshot()), reg, RunOptions(fail_on=Severity.WARNING))
    assert rep.exit_code == 1 and rep.counts.warn == 1


def test_severity_lowering_and_waivers():
    reg = Registry()
    reg.add(_mk("TEST301", lambda ctx: ctx.fail("bad"), severity="error"))
    reg.add(_mk("TEST302", lambda ctx: ctx.fail("bad too"), severity="error"))
    reg.add(_mk("TEST303", lambda ctx: ctx.fail("still bad"), severity="error"))
    cfg = Config(severity={"TEST301": Severity.WARNING},
                 waive=[WaiverRule(code="TEST302", reason="known, ticket OPS-1", expires=date(2999, 1, 1)),
                        WaiverRule(code="TEST303", reason="old excuse", expires=date(2020, 1, 1))])
    rep = run_static(ReplayHost(Snapshot()), reg, RunOptions(), cfg)
    by = {f.code: f for f in rep.findings}
    assert by["TEST301"].severity == Severity.WARNING and by["TEST301"].level == Severity.WARNING
    assert by["TEST302"].waived.reason == "known, ticket OPS-1"
    assert by["TEST303"].waived is None and any("TEST303" in n and "expired" in n for n in rep.notes)
    assert rep.counts.waived == 1 and rep.exit_code == 1  # TEST303 still fails the gate


def test_config_may_not_raise_severity_and_names_file_and_key(tmp_path):
    reg = Registry()
    reg.add(_mk("TEST401", lambda ctx: ctx.ok("x"), severity="warning"))
    p = tmp_path / "ascend-doctor.toml"
    p.write_text('[severity]\nTEST401 = "critical"\n')
    with pytest.raises(InputError, match=r"ascend-doctor.toml: severity.TEST401: may only lower"):
        validate_against(load_config(str(p)), reg)
    p.write_text('[[waive]]\ncode = "TEST401"\n')
    with pytest.raises(InputError, match=r"ascend-doctor.toml: waive\[0\].reason"):
        load_config(str(p))
    p.write_text('[options]\nfail_on = "warning"\n[bogus]\nx = 1\n')
    with pytest.raises(InputError, match=r"bogus"):
        load_config(str(p))
    p.write_text('[options\n')
    with pytest.raises(InputError, match=r"not valid TOML"):
        load_config(str(p))


def test_config_found_in_cwd(tmp_path):
    (tmp_path / "ascend-doctor.toml").write_text('[options]\nfail_on = "warning"\n')
    assert load_config(None, cwd=tmp_path).options == {"fail_on": "warning"}
    (tmp_path / "empty").mkdir()
    assert load_config(None, cwd=tmp_path / "empty").options == {}


def test_registry_rejects_duplicates_undocumented_and_bad_codes():
    reg = Registry()
    reg.add(_mk("TEST501", lambda ctx: None))
    with pytest.raises(InputError, match="duplicate check code TEST501"):
        reg.add(_mk("TEST501", lambda ctx: None))
    bad = _mk("TEST502", lambda ctx: None)
    bad.doc = "Only a title"
    with pytest.raises(InputError, match="has no doc"):
        reg.add(bad)
    with pytest.raises(InputError, match="must be LETTERS"):
        reg.add(_mk("T1", lambda ctx: None))


def test_select_and_ignore_by_code_prefix_and_unknown():
    reg = load_registry(entry_points=False)
    codes = [c.code for c in reg.select(["HOST10"], ["HOST102"])]
    assert "HOST101" in codes and "HOST102" not in codes
    assert [c.code for c in reg.select(["selinux-mode"])] == ["HOST102"]
    with pytest.raises(InputError, match="unknown check code or prefix 'NOPE9'"):
        reg.select(["NOPE9"])


def test_checks_dir_plugin_loads_like_builtins(tmp_path):
    (tmp_path / "site.py").write_text(textwrap.dedent('''
        from ascend_doctor.core.registry import check

        @check("SITE101", "golden-stack", severity="warning")
        def golden(ctx):
            """Our golden stack

            Why it matters: internal policy.

            How to fix: reinstall from the golden image.
            """
            return ctx.warn("not golden")
    '''))
    reg = load_registry([tmp_path], entry_points=False)
    c = reg.get("SITE101")
    assert c.source == f"dir:{tmp_path}" and c.family == "SITE"
    rep = run_static(ReplayHost(Snapshot()), reg, RunOptions(select=["SITE"]))
    assert rep.findings[0].status == Status.WARN and rep.findings[0].remediation == "reinstall from the golden image."


def test_broken_plugin_file_is_an_input_error(tmp_path):
    (tmp_path / "broken.py").write_text("import not_a_module_xyz\n")
    with pytest.raises(InputError, match="cannot load checks from .*broken.py: ModuleNotFoundError"):
        load_dir(tmp_path, "dir")


def test_entry_point_plugins(tmp_path, monkeypatch):
    pkg = tmp_path / "acme_checks.py"
    pkg.write_text(textwrap.dedent('''
        from ascend_doctor.core.registry import check

        @check("ACME101", "acme-thing", severity="info")
        def acme(ctx):
            """Acme thing

            Why it matters: acme.

            How to fix: acme fix.
            """
            return ctx.ok("fine")
    '''))
    dist = tmp_path / "acme_checks-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-checks\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[ascend_doctor.checks]\nacme = acme_checks\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = load_registry()
    assert reg.get("ACME101").source == "plugin:acme"


def test_apply_config_leaves_passes_unwaived():
    from ascend_doctor.report import Finding

    f = Finding(code="X101", slug="x", title="x", family="X", status=Status.PASS, severity=Severity.ERROR,
                message="ok")
    apply_config([f], Config(waive=[WaiverRule(code="X101", reason="r")]), datetime.now(timezone.utc))
    assert f.waived is None


def test_a_fact_read_without_being_declared_is_an_error_and_raises_in_tests():
    """A check's `needs` is what the engine starts early and what `explain` lists: the evaluator answers only those
    facts. Reading another is a bug of the check — an error finding in a run, an exception under run_check."""
    from ascend_doctor.core.evaluator import UndeclaredFact
    from ascend_doctor.core.evaluator import evaluate as evaluate_all
    from ascend_doctor.testing import run_check

    c = _mk("TEST301", lambda ctx: ctx.ok(str(ctx.try_fact("npu_smi"))), needs=["env"])
    store = FactStore.given({"env": {}, "npu_smi": None})
    (f,) = evaluate_all([c], store)
    assert f.status == Status.ERROR and "TEST301 reads fact 'npu_smi' without declaring it" in f.message
    with pytest.raises(UndeclaredFact, match="npu_smi"):
        evaluate_all([c], store, strict=True)
    reg = Registry()
    reg.add(c)
    with pytest.raises(UndeclaredFact):
        run_check("TEST301", {"env": {}}, registry=reg)


@pytest.mark.parametrize("example", sorted(p.name for p in (REPO / "examples").glob("*.snapshot.json")))
def test_no_check_reads_an_undeclared_fact_on_any_example(example):
    """Every static and serve check over every example host (the serve lint with a full command line): none reads
    a fact it did not declare (HCCL101-105 read npu_smi and container through helpers without declaring them)."""
    from ascend_doctor.seam.snapshot import load_snapshot

    host = ReplayHost(load_snapshot(str(REPO / "examples" / example)))
    cmd = ["vllm", "serve", "/models/m", "--tensor-parallel-size", "8", "--enable-auto-tool-choice",
           "--tool-call-parser", "hermes", "--reasoning-parser", "deepseek_r1", "--max-model-len", "32768"]
    rep = run_static(host, load_registry(entry_points=False), RunOptions(), stages=("static", "serve"),
                     preset_facts={"serve_cmd": cmd})
    undeclared = [f"{f.code}: {f.message}" for f in rep.findings if "UndeclaredFact" in f.message]
    assert undeclared == []


def test_shipped_run_check_runs_a_plugin_check_from_its_directory(tmp_path):
    """ascend_doctor.testing.run_check is what a plugin author tests with (README, "Writing checks"): the check from
    --checks-dir, hand-made facts, the unknown path for a fact left out."""
    from ascend_doctor.testing import run_check

    d = tmp_path / "site_checks"
    d.mkdir()
    (d / "golden.py").write_text(
        "from ascend_doctor.core.registry import check\n\n"
        "@check('SITE101', 'golden-driver', severity='error', needs=['driver'])\n"
        "def golden_driver(ctx):\n"
        "    '''The NPU driver is our golden version\n\n    Why it matters: qualified once a quarter.\n\n"
        "    How to fix: reinstall the golden driver.\n    '''\n"
        "    drv = ctx.fact('driver')\n"
        "    return ctx.ok('golden') if drv == '24.1.rc3' else ctx.fail(f'driver {drv} is not 24.1.rc3')\n")
    assert run_check("SITE101", {"driver": "23.0.3"}, checks_dirs=[str(d)]).status == "fail"
    assert run_check("SITE101", {"driver": "24.1.rc3"}, checks_dirs=[str(d)]).status == "pass"
    f = run_check("SITE101", {}, checks_dirs=[str(d)], missing={"driver": "no version.info"})
    assert f.status == "unknown" and "no version.info" in f.message
