"""LocalHost turns every machine-side failure into a result. These touch the real machine (marked)."""

import os
import sys
import time

import pytest

from ascend_doctor.seam.host import NOT_FOUND, PERMISSION_DENIED, TIMEOUT
from ascend_doctor.seam.localhost import LocalHost

pytestmark = pytest.mark.localhost


def test_missing_binary_is_a_result():
    res = LocalHost().run(["definitely-not-a-binary-xyz", "--version"])
    assert res.error == NOT_FOUND and not res.ok
    assert "not found" in res.why_not()


def test_hanging_command_is_killed_with_its_children():
    start = time.monotonic()
    # A child that itself spawns a grandchild holding the pipes: the whole process group must die.
    res = LocalHost().run(["sh", "-c", "sleep 30 & sleep 30"], timeout=1)
    elapsed = time.monotonic() - start
    assert res.error == TIMEOUT and res.returncode is None
    assert elapsed < 1 + 1.0, f"took {elapsed:.2f}s for a 1s timeout"
    assert "timed out" in res.why_not()


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper that is not us does not count)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_grandchild_holding_stdout_costs_at_most_the_timeout_and_is_killed():
    # The child exits at once; the grandchild it leaves behind keeps the pipe open for 30 s. Before: 30 s, and the
    # grandchild lived on. Now: the deadline covers the pipes too, and the group is killed.
    start = time.monotonic()
    res = LocalHost().run(["sh", "-c", "sleep 30 & echo $!"], timeout=2)
    elapsed = time.monotonic() - start
    assert elapsed < 2 + 1.0, f"took {elapsed:.2f}s for a 2s timeout"
    assert res.error == TIMEOUT and "kept its output open" in res.error_message
    grandchild = int(res.stdout.split()[0])
    time.sleep(0.1)
    assert not _alive(grandchild)


def test_a_finished_command_leaves_no_process_behind():
    res = LocalHost().run(["sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!"], timeout=5)
    assert res.ok, res.why_not()
    time.sleep(0.1)
    assert not _alive(int(res.stdout.split()[0]))


def test_permission_denied(tmp_path):
    script = tmp_path / "noexec.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    os.chmod(script, 0o644)  # no execute bit: EACCES even for root
    res = LocalHost().run([str(script)])
    assert res.error == PERMISSION_DENIED


def test_non_utf8_output_is_decoded_not_raised():
    res = LocalHost().run([sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe\\xc3 end')"])
    assert res.ok
    assert res.stdout.startswith("ok ") and res.stdout.endswith(" end")
    assert os.fsencode(res.stdout) == b"ok \xff\xfe\xc3 end"  # lossless: surrogateescape gives the bytes back


def test_huge_output_is_capped_and_flagged():
    host = LocalHost(max_output=1024 * 1024)
    res = host.run(["head", "-c", "100000000", "/dev/zero"], timeout=30)
    assert res.ok and res.truncated
    assert len(res.stdout) == 1024 * 1024


def test_nonzero_exit_keeps_output():
    res = LocalHost().run(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert res.returncode == 3 and res.stdout == "out\n" and res.stderr == "err\n"
    assert "exited 3" in res.why_not()


def test_files_dirs_links_disk(tmp_path):
    host = LocalHost()
    (tmp_path / "a.txt").write_bytes(b"hello \xff")
    (tmp_path / "link").symlink_to(tmp_path / "a.txt")
    assert os.fsencode(host.read_file(str(tmp_path / "a.txt")).content) == b"hello \xff"
    assert host.read_file(str(tmp_path / "missing")).error == NOT_FOUND
    assert host.read_file(str(tmp_path / "a.txt"), max_bytes=3).truncated
    assert host.list_dir(str(tmp_path)).entries == ["a.txt", "link"]
    assert host.list_dir(str(tmp_path / "nope")).error == NOT_FOUND
    link = host.readlink(str(tmp_path / "link"))
    assert link.target == str(tmp_path / "a.txt") and link.resolved == str(tmp_path / "a.txt")
    assert host.disk_usage(str(tmp_path)).free_bytes > 0


def test_python_env_reads_metadata_without_imports():
    env = LocalHost().python_env()
    assert env.ok and env.implementation == "CPython" and env.pointer_bits == 64
    assert env.dist("pydantic") is not None and env.dist("PYDANTIC") is not None


def test_python_env_of_missing_interpreter():
    env = LocalHost().python_env("/nonexistent/bin/python")
    assert not env.ok and "not found" in env.error_message


def test_localhost_is_forbidden_in_unit_tests_unless_marked(monkeypatch):
    from ascend_doctor.seam.localhost import FORBID_ENV

    monkeypatch.setenv(FORBID_ENV, "1")
    with pytest.raises(RuntimeError):
        LocalHost()


@pytest.mark.parametrize("content, said", [
    ("127.0.0.1 localhost\n", "Exec format error"),          # /etc/hosts with an x bit
    ("#!/bin/sh\necho hi\n", "said 'hi'"),                    # a shell script
    ("#!/bin/sh\nexit 0\n", "exited 0 without a word"),
])
def test_python_that_is_not_python_is_a_one_line_usage_error(tmp_path, content, said):
    """#22 item 3: `check --python /etc/hosts` printed the doctor's whole probe script as the reason 12 checks could
    not run, exit 1."""
    import subprocess

    from tests.helpers import REPO

    fake = tmp_path / "python3"
    fake.write_text(content)
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "ASCEND_DOCTOR_FORBID_LOCALHOST"}
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--python", str(fake)], capture_output=True,
                       text=True, env={**env, "PYTHONPATH": str(REPO)}, timeout=60)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert "is not a Python interpreter" in r.stderr and said in r.stderr
