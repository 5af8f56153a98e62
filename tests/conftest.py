"""Unit tests never touch the real machine: LocalHost refuses unless a test is marked `localhost`."""

import pytest

from ascend_doctor.localhost import FORBID_ENV


@pytest.fixture(autouse=True)
def _forbid_localhost(request, monkeypatch):
    if request.node.get_closest_marker("localhost"):
        monkeypatch.delenv(FORBID_ENV, raising=False)
    else:
        monkeypatch.setenv(FORBID_ENV, "1")
    yield
