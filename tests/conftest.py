"""Unit tests never touch the real machine: LocalHost refuses unless a test is marked `localhost`.

Every record built during the tests is type-checked (ascend_doctor.records strict mode): production code builds its
facts unchecked, so a wrong type must be caught here. Child processes (the CLI under test) inherit it.
"""

import os

import pytest

os.environ["ASCEND_DOCTOR_STRICT_RECORDS"] = "1"

from ascend_doctor.localhost import FORBID_ENV


@pytest.fixture(autouse=True)
def _forbid_localhost(request, monkeypatch):
    if request.node.get_closest_marker("localhost"):
        monkeypatch.delenv(FORBID_ENV, raising=False)
    else:
        monkeypatch.setenv(FORBID_ENV, "1")
    yield
