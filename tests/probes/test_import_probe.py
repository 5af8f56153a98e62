"""The import probe in a real child interpreter, against fake torch/torch_npu packages that crash in known ways."""

import textwrap

import pytest

from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.probes import imports
from ascend_doctor.seam.localhost import LocalHost

pytestmark = pytest.mark.localhost


def fake_site(tmp_path, torch_npu_body: str):
    site = tmp_path / "site"
    for name, body in (("torch", "__version__ = '2.9.0'\nclass npu:\n    @staticmethod\n    def is_available():"
                                 " return True\n    @staticmethod\n    def device_count(): return 8\n"),
                       ("torch_npu", torch_npu_body)):
        pkg = site / name
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text(textwrap.dedent(body))
        dist = site / f"{name}-2.9.0.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: 2.9.0\n")
    return site


def probe(tmp_path, monkeypatch, body, timeout=None):
    monkeypatch.setenv("PYTHONPATH", str(fake_site(tmp_path, body)))
    if timeout:
        monkeypatch.setattr(imports, "IMPORT_TIMEOUT", timeout)
    return FactStore(LocalHost(), RunOptions()).fact("import_probe")


def test_clean_import_reports_devices(tmp_path, monkeypatch):
    f = probe(tmp_path, monkeypatch, "__version__ = '2.9.0'\n")
    assert f.ran and f.stage == "done" and f.torch == "2.9.0" and f.torch_npu == "2.9.0"
    assert f.device_count == 8 and f.npu_available is True and f.returncode == 0


def test_import_error_is_captured(tmp_path, monkeypatch):
    f = probe(tmp_path, monkeypatch, "raise ImportError('libascendcl.so: cannot open shared object file: "
                                     "No such file or directory')\n")
    assert f.stage == "torch_npu" and f.error_type == "ImportError" and "libascendcl.so" in f.error


def test_segfault_is_a_signal_not_a_crash_of_the_doctor(tmp_path, monkeypatch):
    f = probe(tmp_path, monkeypatch, "import ctypes\nctypes.string_at(0)\n")
    assert f.signal == "SIGSEGV" and f.stage == "torch_npu" and "Fatal Python error" in f.stderr_tail


def test_hang_times_out(tmp_path, monkeypatch):
    f = probe(tmp_path, monkeypatch, "import time\ntime.sleep(60)\n", timeout=1.5)
    assert f.timed_out and f.stage == "torch_npu"


def test_skipped_when_not_installed_or_disabled(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    f = FactStore(LocalHost(), RunOptions()).fact("import_probe")
    if f.ran:  # this interpreter really has torch and torch_npu: nothing to assert about skipping
        pytest.skip("torch and torch_npu installed here")
    assert "not installed" in f.skipped_reason
    f = FactStore(LocalHost(), RunOptions(import_probe=False)).fact("import_probe")
    assert not f.ran and "disabled" in f.skipped_reason
