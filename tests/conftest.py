"""Unit tests never touch the real machine (LocalHost refuses unless a test is marked `localhost`) and compare
English console text whatever the developer's locale."""

import pytest

from ascend_doctor.seam.localhost import FORBID_ENV


@pytest.fixture(autouse=True)
def _forbid_localhost(request, monkeypatch):
    if request.node.get_closest_marker("localhost"):
        monkeypatch.delenv(FORBID_ENV, raising=False)
    else:
        monkeypatch.setenv(FORBID_ENV, "1")
    yield


@pytest.fixture(autouse=True)
def _english_unless_asked(monkeypatch):
    """Console texts are compared in English: a developer's zh_CN locale must not change them (the i18n tests ask
    for Chinese explicitly)."""
    from ascend_doctor import i18n

    monkeypatch.setenv("ASCEND_DOCTOR_LANG", "en")
    i18n.set_option(None)
    i18n.set_config(None)
    yield
    i18n.set_option(None)
    i18n.set_config(None)
