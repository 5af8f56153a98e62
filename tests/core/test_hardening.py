"""Bad input loses nothing: undecodable bytes, atomic outputs, set-up errors inside the crash guard, config that would
run code from the working directory, no pickle in the package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_doctor.cli import cli
from ascend_doctor.seam.atomicfile import write_atomic
from ascend_doctor.text.textsafe import escape_text, json_escape_surrogates, undecodable_paths, xml_text
from tests.helpers import REPO

BROKEN = REPO / "examples" / "broken-host.snapshot.json"
HEALTHY = REPO / "examples" / "healthy-a2.snapshot.json"


def run(*args, cwd=None, env=None):
    e = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], cwd=cwd or REPO, env=e,
                          capture_output=True, timeout=120)


# Undecodable bytes -------------------------------------------------------------------------------------------------
def test_text_helpers_escape_undecodable_bytes_visibly_and_reversibly():
    s = os.fsdecode(b"/m\xfe/x")  # what Python hands us for a non-UTF-8 path
    assert escape_text(s) == "/m\\xfe/x"
    doc = json_escape_surrogates(json.dumps({"p": s}, ensure_ascii=False))
    assert "\\udcfe" in doc and os.fsencode(json.loads(doc)["p"]) == b"/m\xfe/x"  # lossless
    assert xml_text("a\x1b[31mb\udcff") == "a\\x1b[31mb\\xff"
    assert undecodable_paths({"env": {"X": s, "Y": "ok"}, "l": ["ok", s]}) == ["env.X", "l[1]"]


def _snapshot_with_bad_bytes(tmp_path: Path) -> Path:
    data = json.loads(BROKEN.read_text())
    data["env"]["WEIRD"] = "\udc80value"  # a lone surrogate, as json.loads gives for "\udc80"
    for c in data["commands"]:
        if c["argv"] == ["getenforce"]:
            c["stdout"] = "Enforcing \udcff\n"  # quoted as evidence by HOST102
    p = tmp_path / "bad.snapshot.json"
    p.write_text(json_escape_surrogates(json.dumps(data, ensure_ascii=False)))
    return p


@pytest.mark.parametrize("fmt", ["console", "json", "junit", "github"])
def test_a_lone_surrogate_in_a_snapshot_reaches_every_writer_intact(tmp_path: Path, fmt):
    snap = _snapshot_with_bad_bytes(tmp_path)
    out = tmp_path / f"report.{fmt}"
    out.write_text("prior report\n")
    r = run("check", "--replay", str(snap), "--format", fmt, "-o", str(out), "-v",
            "--model-dir", os.fsdecode(b"/m\xfe"))
    assert r.returncode == 1, r.stderr  # the broken host's findings, not exit 3
    text = out.read_text(encoding="utf-8")
    assert text != "prior report\n"
    if fmt == "json":
        rep = json.loads(text)
        assert any("not valid UTF-8" in n for n in rep["notes"])
    if fmt == "junit":
        ET.fromstring(text.encode())  # well-formed XML despite the bytes and ANSI in evidence
    r.stdout.decode("utf-8")  # the console view on stdout is valid UTF-8


@pytest.mark.parametrize("how", ["python -m", "--python"])
def test_an_undecodable_byte_in_the_interpreter_path_is_quoted_not_a_crash(tmp_path: Path, how):
    """The serving python's path came back from a snapshot as `\\udcff`; a message quoting it (`T(…)`, a str
    subclass) was refused by pydantic-core (`string_unicode`) and exec ended with exit 3."""
    data = json.loads(HEALTHY.read_text())
    env = data["python_envs"].pop("default")
    exe = env["executable"] = "/opt/v\udcffllm/bin/python3"
    data["python_envs"][exe] = env
    snap = tmp_path / "s.json"
    snap.write_text(json_escape_surrogates(json.dumps(data, ensure_ascii=False)))
    raw = os.fsencode(exe)  # argv as the shell passes it: the byte itself
    cmd = ([raw, b"-m", b"vllm.entrypoints.openai.api_server", b"--model", b"/m"] if how == "python -m"
           else [b"vllm", b"serve", b"/m"])
    extra = [b"--python", raw] if how == "--python" else []
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "exec", "--replay", str(snap), "--format", "json",
                        "-o", str(tmp_path / "r.json"), *extra, "--", *cmd],
                       cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr.decode(errors="replace")
    rep = json.loads((tmp_path / "r.json").read_text())
    assert not [f for f in rep["findings"] if f["code"] == "DOCTOR001"]
    assert "/opt/v\\xffllm/bin/python3" in r.stderr.decode()  # shown as an escape, not a raw byte


@pytest.mark.localhost
def test_collect_records_an_undecodable_env_value_losslessly(tmp_path: Path):
    out = tmp_path / "new" / "dir" / "s.json"  # collect -o creates the parent directory
    env = {os.fsencode(k): os.fsencode(v) for k, v in os.environ.items()}
    env[b"PYTHONPATH"] = os.fsencode(str(REPO))
    env[b"X"] = b"\xff"
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "collect", "-o", str(out), "--no-import-probe",
                        "--probe-timeout", "5"], env=env, capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr
    snap = json.loads(out.read_text())
    assert os.fsencode(snap["env"]["X"]) == b"\xff"
    assert any("env.X" in n for n in snap["notes"])


# Atomic writes -------------------------------------------------------------------------------------------------------
def test_write_atomic_replaces_whole_keeps_mode_and_never_writes_through_a_symlink(tmp_path: Path):
    """#23: another user's link `r.json -> /root/p` in a shared directory must not turn the report into a write of
    /root/p. The link is replaced by the report; its target keeps its bytes."""
    victim = tmp_path / "victim"
    victim.write_text("precious")
    victim.chmod(0o600)
    link = tmp_path / "r.json"
    link.symlink_to(victim)
    write_atomic(link, "new \udcff")
    assert not link.is_symlink() and link.read_text() == "new \\xff"
    assert victim.read_text() == "precious" and victim.stat().st_mode & 0o777 == 0o600
    own = tmp_path / "own.json"
    own.write_text("old")
    own.chmod(0o640)
    write_atomic(own, "x")
    assert own.read_text() == "x" and own.stat().st_mode & 0o777 == 0o640  # a regular file keeps its mode
    write_atomic(tmp_path / "a" / "b" / "c.txt", "x")
    assert (tmp_path / "a" / "b" / "c.txt").read_text() == "x"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_write_atomic_never_blocks_on_a_fifo_and_writes_dev_null(tmp_path: Path):
    """A FIFO planted at the output path used to block `check -o` forever; with nobody reading it is an error at
    once. /dev/null (a path under /dev) is written in place."""
    import time

    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    with pytest.raises(OSError):
        write_atomic(fifo, "x")
    assert time.monotonic() - t0 < 2
    write_atomic(os.devnull, "x")


def test_check_o_onto_a_planted_link_or_fifo(tmp_path: Path):
    """The reproductions of #23 item 1 through the CLI: the link's target is untouched; a FIFO is a one-line error
    (exit 2) within seconds."""
    victim = tmp_path / "p"
    victim.write_text("secret-of-root")
    (tmp_path / "r.json").symlink_to(victim)
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--replay", str(HEALTHY), "-o",
                        str(tmp_path / "r.json")], capture_output=True, text=True, timeout=120)
    assert victim.read_text() == "secret-of-root" and json.loads((tmp_path / "r.json").read_text())["findings"]
    os.mkfifo(tmp_path / "f.json")
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--replay", str(HEALTHY), "-o",
                        str(tmp_path / "f.json")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "cannot write" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_run_that_breaks_while_rendering_leaves_the_previous_report(tmp_path: Path, monkeypatch):
    out = tmp_path / "r.json"
    out.write_text("yesterday's report\n")

    def broken(report):
        raise RuntimeError("renderer bug")

    import ascend_doctor.render.json_out as json_out

    monkeypatch.setattr(json_out, "render_json", broken)
    r = CliRunner().invoke(cli, ["check", "--replay", str(BROKEN), "--format", "json", "-o", str(out)])
    assert r.exit_code == 3
    assert out.read_text() == "yesterday's report\n"


def test_internal_error_in_setup_still_writes_the_report(tmp_path: Path, monkeypatch):
    out = tmp_path / "r.json"
    import ascend_doctor.core.registry as registry

    def boom(*a, **k):
        raise RuntimeError("registry bug")

    monkeypatch.setattr(registry, "load_registry", boom)
    r = CliRunner().invoke(cli, ["check", "--replay", str(BROKEN), "--format", "json", "-o", str(out)])
    assert r.exit_code == 3
    rep = json.loads(out.read_text())
    assert rep["exit_code"] == 3 and rep["findings"][0]["code"] == "DOCTOR001"
    assert "registry bug" in rep["findings"][0]["message"] and rep["findings"][0]["traceback"]


def test_dash_means_stdout_for_reports(tmp_path: Path):
    r = run("check", "--replay", str(BROKEN), "--format", "json", "-o", "-")
    assert json.loads(r.stdout)["exit_code"] == 1


# Config from the working directory --------------------------------------------------------------------------------
PLANTED_CHECK = '''
from pathlib import Path
from ascend_doctor.core.registry import check

Path(__file__).with_name("RAN").write_text("planted code ran")


@check("EVIL101", "evil", severity="info")
def evil(ctx):
    """Planted

    Why it matters: it should never load.

    How to fix: nothing.
    """
    return ctx.ok("evil")
'''


@pytest.fixture()
def planted(tmp_path: Path) -> Path:
    checks = tmp_path / "checks"
    checks.mkdir()
    (checks / "evil.py").write_text(PLANTED_CHECK)
    cfg = tmp_path / "ascend-doctor.toml"
    cfg.write_text(f'[options]\nchecks_dirs = ["{checks}"]\n')
    return tmp_path


def test_world_writable_config_in_cwd_may_not_load_checks(planted: Path):
    cfg = planted / "ascend-doctor.toml"
    cfg.chmod(0o666)
    r = run("check", "--replay", str(BROKEN), "--select", "HOST101", cwd=planted)
    assert r.returncode == 2, r.stderr
    err = r.stderr.decode()
    assert err.count("\n") == 1 and "checks_dirs" in err and "world-writable" in err and "--config" in err
    assert not (planted / "checks" / "RAN").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the file to another user")
def test_config_owned_by_someone_else_may_not_load_checks(planted: Path):
    cfg = planted / "ascend-doctor.toml"
    os.chown(cfg, 65534, 65534)
    cfg.chmod(0o644)
    r = run("check", "--replay", str(BROKEN), "--select", "HOST101", cwd=planted)
    assert r.returncode == 2 and "belongs to" in r.stderr.decode()
    assert not (planted / "checks" / "RAN").exists()


def test_an_explicit_or_trusted_config_may_load_checks(planted: Path):
    cfg = planted / "ascend-doctor.toml"
    cfg.chmod(0o666)
    r = run("check", "--replay", str(BROKEN), "--select", "EVIL", "--config", str(cfg), cwd=planted)
    assert r.returncode == 0 and (planted / "checks" / "RAN").exists()
    (planted / "checks" / "RAN").unlink()
    cfg.chmod(0o644)
    r = run("check", "--replay", str(BROKEN), "--select", "EVIL", cwd=planted)
    assert r.returncode == 0 and (planted / "checks" / "RAN").exists()


@pytest.mark.parametrize("text, named", [
    ('[options]\nfail_on = "critical"\n', "options.fail_on"),
    ('[options]\nignore = ["HOST101"]\n', "options.ignore"),
    ('[severity]\nHOST101 = "info"\n', "severity"),
    ('[[waive]]\ncode = "HOST101"\nreason = "trust me"\n', "waive"),
])
def test_an_untrusted_config_may_not_weaken_the_gate(tmp_path: Path, text, named):
    """A world-writable config in the working directory that would let the HOST errors pass (#23 item 9: `exec`
    started a server with 5 failing checks because of one)."""
    cfg = tmp_path / "ascend-doctor.toml"
    cfg.write_text(text)
    cfg.chmod(0o666)
    r = run("check", "--replay", str(BROKEN), "--select", "HOST", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2 and named in err and "weaken the gate" in err and "--config" in err, err
    r = run("check", "--replay", str(BROKEN), "--select", "HOST", "--config", str(cfg), cwd=tmp_path)
    assert r.returncode in (0, 1) and not r.stderr, "named explicitly, it is the user's choice"


def test_an_untrusted_config_may_still_tighten_the_gate(tmp_path: Path):
    cfg = tmp_path / "ascend-doctor.toml"
    cfg.write_text('[options]\nfail_on = "warning"\nfail_on_unknown = true\n')
    cfg.chmod(0o666)
    r = run("check", "--replay", str(HEALTHY), "--format", "json", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    assert json.loads(r.stdout)["fail_on"] == "warning"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the link to another user")
def test_another_users_link_to_a_trusted_config_is_not_trusted(tmp_path: Path):
    target = tmp_path / "root-owned.toml"
    target.write_text('[options]\nfail_on = "critical"\n')
    target.chmod(0o644)
    work = tmp_path / "shared"
    work.mkdir(mode=0o1777)
    link = work / "ascend-doctor.toml"
    link.symlink_to(target)
    os.lchown(link, 65534, 65534)
    r = run("check", "--replay", str(BROKEN), "--select", "HOST", cwd=work)
    err = r.stderr.decode()
    assert r.returncode == 2 and "symbolic link" in err and "belongs to" in err, err


@pytest.mark.parametrize("mode_dir, mode_file", [(0o777, 0o644), (0o755, 0o666)])
def test_a_trusted_config_may_not_load_a_plugin_directory_others_can_change(planted: Path, mode_dir, mode_file):
    (planted / "checks").chmod(mode_dir)
    (planted / "checks" / "evil.py").chmod(mode_file)
    cfg = planted / "ascend-doctor.toml"
    cfg.chmod(0o644)
    r = run("check", "--replay", str(BROKEN), "--select", "EVIL", cwd=planted)
    err = r.stderr.decode()
    assert r.returncode == 2 and "will not load checks" in err and "world-writable" in err, err
    assert not (planted / "checks" / "RAN").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the plugin to another user")
def test_a_root_config_may_not_load_another_users_plugin(planted: Path):
    os.chown(planted / "checks" / "evil.py", 65534, 65534)
    r = run("check", "--replay", str(BROKEN), "--select", "EVIL", cwd=planted)
    assert r.returncode == 2 and "belongs to" in r.stderr.decode()
    assert not (planted / "checks" / "RAN").exists()


# No pickle -----------------------------------------------------------------------------------------------------------
def test_nothing_in_the_package_unpickles():
    for path in (REPO / "ascend_doctor").rglob("*.py"):
        text = path.read_text()
        assert "import pickle" not in text and "pickle.load" not in text, path


# Stuck children: a recorded timeout replays as a timeout -------------------------------------------------------------
def test_a_recorded_timeout_replays_as_timed_out_not_absent(tmp_path: Path):
    from ascend_doctor.seam.host import TIMEOUT, CommandResult
    from ascend_doctor.seam.snapshot import RecordingHost, ReplayHost

    class Hung:
        def describe(self):
            return "hung"

        def run(self, argv, timeout=10.0):
            return CommandResult(argv=list(argv), error=TIMEOUT, error_message=f"killed after {timeout:g}s",
                                 duration_s=timeout)

    rec = RecordingHost(Hung())
    rec.run(["npu-smi", "info"], timeout=3)
    entry = rec.snapshot.commands[0]
    assert entry.error == TIMEOUT and entry.returncode is None
    assert ReplayHost(rec.snapshot).run(["npu-smi", "info"]).why_not().endswith("timed out after 3.0s")

    data = json.loads((REPO / "examples" / "healthy-a2.snapshot.json").read_text())
    for c in data["commands"]:
        if c["argv"][:1] == ["npu-smi"]:
            c.update(stdout="", returncode=None, error="timeout", error_message="killed after 10s", duration_s=10.0)
    snap = tmp_path / "hung.snapshot.json"
    snap.write_text(json.dumps(data))
    r = run("check", "--replay", str(snap), "--select", "NPU", "--format", "json")
    rep = json.loads(r.stdout)
    for f in rep["findings"]:
        if f["code"] == "NPU100":  # the NPUs' presence is read from sysfs and /dev, not from npu-smi
            assert f["status"] == "pass"
            continue
        assert f["status"] == "unknown" and "timed out" in f["message"] and "not found" not in f["message"]


def test_npu_smi_stderr_in_gbk_is_a_finding_not_a_crashed_probe(tmp_path: Path):
    """#23 item 5: on a Chinese-locale host npu-smi writes GBK to stderr ('设备不存在' here, bytes c9e8b1b8…); the
    undecodable bytes reached a pydantic field through a translated message and 16 checks became `error`. Now they
    are kept in the reason and the checks judge (unknown: no table)."""
    snap = json.loads(HEALTHY.read_text(encoding="utf-8"))
    gbk = "设备不存在".encode("gbk").decode("utf-8", "surrogateescape")
    for c in snap["commands"]:
        if c["argv"] == ["npu-smi", "info"]:
            c.update(returncode=255, stdout="", stderr=gbk)
    p = tmp_path / "gbk.snapshot.json"
    p.write_text(json.dumps(snap), encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--replay", str(p), "--format", "json"],
                       capture_output=True, text=True, timeout=120)
    rep = json.loads(r.stdout)
    assert [f["code"] for f in rep["findings"] if f["status"] == "error"] == []
    npu101 = next(f for f in rep["findings"] if f["code"] == "NPU101")
    assert npu101["status"] == "unknown"


def test_write_through_truncates_a_regular_file(tmp_path: Path, monkeypatch):
    """A regular file written in place (paths under /dev, e.g. Kubernetes' /dev/termination-log) holds only the new
    text, never the tail of a longer previous one."""
    from ascend_doctor.seam.atomicfile import _write_through

    f = tmp_path / "termination-log"
    f.write_text("a much longer previous message\n")
    _write_through(f, b"short\n")
    assert f.read_text() == "short\n"


def test_bytecode_beside_a_trusted_plugin_never_runs(planted: Path):
    """#40 item 11: a `__pycache__/*.pyc` someone planted beside a trusted plugin, built to pass Python's freshness
    test (the source's mtime and size in its header), must not run in the source's place: the trust rule checked the
    .py, and the registry compiles the .py itself (core/registry.py `_SourceOnly`)."""
    import importlib.util
    import py_compile

    checks = planted / "checks"
    (planted / "ascend-doctor.toml").chmod(0o644)
    source = checks / "evil.py"
    source.write_text(PLANTED_CHECK.replace('write_text("planted code ran")', 'write_text("the source ran")'))
    # The bytecode of another text of the same size, stamped with the source's mtime and size.
    other = planted / "other.py"
    other.write_text(PLANTED_CHECK.replace('write_text("planted code ran")', 'write_text("BYTECODE ran!!")'))
    assert other.stat().st_size == source.stat().st_size
    os.utime(other, (source.stat().st_atime, source.stat().st_mtime))
    pyc = Path(importlib.util.cache_from_source(str(source)))
    pyc.parent.mkdir(exist_ok=True)
    py_compile.compile(str(other), cfile=str(pyc), invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    other.unlink()
    r = run("check", "--replay", str(BROKEN), "--select", "EVIL", cwd=planted, env={"PYTHONDONTWRITEBYTECODE": ""})
    assert r.returncode in (0, 1), r.stderr
    assert (checks / "RAN").read_text() == "the source ran"


@pytest.mark.skipif(not os.path.isdir("/dev/shm") or not os.access("/dev/shm", os.W_OK), reason="no writable /dev/shm")
def test_a_link_planted_under_dev_shm_is_replaced_not_followed(tmp_path: Path):
    """#40 item 11: paths under /dev were written in place, so a link planted in world-writable /dev/shm pointed the
    report at any file. Now such a link is replaced like anywhere else; the process's own descriptors (/dev/stdout,
    /proc/self/fd/N) and links to a pipe or terminal are still written through."""
    import tempfile

    victim = tmp_path / "victim"
    victim.write_text("root's file")
    d = Path(tempfile.mkdtemp(dir="/dev/shm", prefix="ad-test-"))
    try:
        link = d / "report.json"
        link.symlink_to(victim)
        write_atomic(link, '{"report": 1}\n')
        assert victim.read_text() == "root's file"
        assert not link.is_symlink() and link.read_text() == '{"report": 1}\n'
        dangling = d / "dangling.json"
        dangling.symlink_to(tmp_path / "created-by-the-link")
        write_atomic(dangling, "x\n")
        assert not (tmp_path / "created-by-the-link").exists() and dangling.read_text() == "x\n"
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        to_fifo = d / "to-fifo"
        to_fifo.symlink_to(fifo)
        r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            write_atomic(to_fifo, "through\n")  # a link to a pipe: written through
            assert os.read(r, 100) == b"through\n"
        finally:
            os.close(r)
    finally:
        for p in d.iterdir():
            p.unlink()
        d.rmdir()


def test_the_process_own_descriptors_are_written_through(tmp_path: Path):
    out = tmp_path / "redirected.txt"
    code = ("from ascend_doctor.seam.atomicfile import write_atomic; "
            "write_atomic('/dev/stdout', 'via stdout\\n'); write_atomic('/proc/self/fd/1', 'via fd\\n')")
    with open(out, "w") as fh:
        r = subprocess.run([sys.executable, "-c", code], stdout=fh, stderr=subprocess.PIPE, timeout=60,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr
    assert out.read_text().endswith("via fd\n")  # the shell's redirection target: a regular file, through the link
