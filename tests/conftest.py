"""Unit tests never touch the real machine: LocalHost refuses unless a test is marked `localhost`.

Every record built during the tests is type-checked (ascend_doctor.records strict mode): production code builds its
facts unchecked, so a wrong type must be caught here. Child processes (the CLI under test) inherit it.
"""

import atexit
import os
import shutil
import tempfile

import pytest

os.environ["ASCEND_DOCTOR_STRICT_RECORDS"] = "1"
# The on-disk cache (the validated shipped matrix) goes to a directory of this test session, never ~/.cache.
os.environ["ASCEND_DOCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="ascend-doctor-test-cache-")
atexit.register(shutil.rmtree, os.environ["ASCEND_DOCTOR_CACHE_DIR"], ignore_errors=True)

from ascend_doctor.localhost import FORBID_ENV


@pytest.fixture(autouse=True)
def _forbid_localhost(request, monkeypatch):
    if request.node.get_closest_marker("localhost"):
        monkeypatch.delenv(FORBID_ENV, raising=False)
    else:
        monkeypatch.setenv(FORBID_ENV, "1")
    yield
