"""find_entry_points: entry_points.txt of *.dist-info / *.egg-info on sys.path, read without importlib.metadata."""

import importlib.metadata
import os
import sys

import pytest

from ascend_doctor.core.registry import find_entry_points

GROUP = "ascend_doctor_test.plugins"


def _dist(root, dirname, text):
    d = root / dirname
    d.mkdir(parents=True)
    if text is not None:
        (d / "entry_points.txt").write_text(text, encoding="utf-8")
    return d


def _pairs(group):
    return [(ep.name, ep.value) for ep in find_entry_points(group)]


NEEDS_310 = pytest.mark.skipif(sys.version_info < (3, 10), reason="importlib.metadata dedupes distributions by name "
                               "(first on sys.path wins, as we do) only from Python 3.10; 3.9 lists every copy")


def _metadata_eps(group):
    """importlib.metadata's view of a group (`entry_points(group=)` is 3.10+; 3.9 returns a dict)."""
    eps = importlib.metadata.entry_points()
    return eps.select(group=group) if hasattr(eps, "select") else eps.get(group, [])


def test_finds_group_in_dist_info_and_egg_info(tmp_path, monkeypatch):
    _dist(tmp_path, "alpha_pkg-1.0.dist-info", f"[{GROUP}]\none = alpha.plugin\ntwo = alpha.more:register\n")
    _dist(tmp_path, "beta-2.0-py3.11.egg-info", f"[{GROUP}]\nthree = beta.checks:setup [extra]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = _pairs(GROUP)
    assert ("one", "alpha.plugin") in found
    assert ("two", "alpha.more:register") in found
    assert ("three", "beta.checks:setup [extra]") in found
    assert len([p for p in found if p[0] in ("one", "two", "three")]) == 3
    assert _pairs(GROUP + ".nothing") == []


def test_ignores_other_sections_comments_and_blank_lines(tmp_path, monkeypatch):
    _dist(tmp_path, "gamma-0.1.dist-info", "\n".join([
        "# a comment = not.an.entry",
        "[console_scripts]",
        "gamma-cli = gamma.cli:main",
        "",
        f"[ {GROUP} ]",
        "  spaced   =   gamma.spaced  ",
        "; another = comment",
        "# hidden = gamma.hidden",
        "no equals sign here",
        f"[{GROUP}.other]",
        "elsewhere = gamma.elsewhere",
        "[gui_scripts]",
        "gui = gamma.gui:main",
    ]) + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _pairs(GROUP) == [("spaced", "gamma.spaced")]
    assert ("gamma-cli", "gamma.cli:main") in _pairs("console_scripts")
    assert _pairs(GROUP + ".other") == [("elsewhere", "gamma.elsewhere")]


def test_first_distribution_of_a_name_wins(tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(first, "Delta_Pkg-2.0.dist-info", f"[{GROUP}]\nd = delta.new\n")
    _dist(second, "delta.pkg-1.0.dist-info", f"[{GROUP}]\nd = delta.old\nonly_old = delta.only\n")
    # The same name also as an egg-info further along the same path entry.
    _dist(second, "delta_pkg.egg-info", f"[{GROUP}]\nd = delta.egg\n")
    monkeypatch.syspath_prepend(str(second))
    monkeypatch.syspath_prepend(str(first))  # first on sys.path
    assert sys.path.index(str(first)) < sys.path.index(str(second))
    assert [p for p in _pairs(GROUP) if p[0] in ("d", "only_old")] == [("d", "delta.new")]


def test_distribution_without_entry_points_still_shadows_later_ones(tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(first, "epsilon-2.0.dist-info", None)
    _dist(second, "epsilon-1.0.dist-info", f"[{GROUP}]\ne = epsilon.old\n")
    monkeypatch.syspath_prepend(str(second))
    monkeypatch.syspath_prepend(str(first))
    assert ("e", "epsilon.old") not in _pairs(GROUP)
    if sys.version_info >= (3, 10):  # see NEEDS_310
        assert {(e.name, e.value) for e in _metadata_eps(GROUP)} == set(_pairs(GROUP))


def test_unreadable_dir_is_skipped(tmp_path, monkeypatch):
    locked, open_ = tmp_path / "locked", tmp_path / "open"
    _dist(locked, "zeta-1.0.dist-info", f"[{GROUP}]\nz = zeta.plugin\n")
    _dist(open_, "zeta2-1.0.dist-info", f"[{GROUP}]\nz2 = zeta2.plugin\n")
    monkeypatch.syspath_prepend(str(open_))
    monkeypatch.syspath_prepend(str(locked))
    real_listdir = os.listdir

    def listdir(path="."):  # chmod 0 does not stop root, so refuse the way an unreadable directory would
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_listdir(path)

    monkeypatch.setattr(os, "listdir", listdir)
    found = _pairs(GROUP)
    assert ("z", "zeta.plugin") not in found
    assert ("z2", "zeta2.plugin") in found  # the entries after it are still read


def test_missing_file_and_broken_entries_are_skipped(tmp_path, monkeypatch):
    good = tmp_path / "good"
    _dist(good, "eta-1.0.dist-info", f"[{GROUP}]\neta = eta.plugin\n")
    # An entry_points.txt that is not UTF-8, and a dist-info whose entry_points.txt is a directory.
    bad = _dist(good, "theta-1.0.dist-info", None)
    (bad / "entry_points.txt").write_bytes(f"[{GROUP}]\ntheta = th\xe9ta\n".encode("latin-1"))
    (_dist(good, "iota-1.0.dist-info", None) / "entry_points.txt").mkdir()
    (good / "not-metadata.txt").write_text("x")  # files on the path entry are not distributions
    monkeypatch.syspath_prepend(str(tmp_path / "does-not-exist"))
    monkeypatch.syspath_prepend(str(good / "not-metadata.txt"))  # a file as a sys.path entry
    monkeypatch.syspath_prepend(str(good))
    found = _pairs(GROUP)
    assert ("eta", "eta.plugin") in found
    assert not [p for p in found if p[0] in ("theta", "iota")]


@pytest.mark.parametrize("entry", ["", "."])
def test_the_working_directory_on_sys_path_declares_no_plugin(tmp_path, monkeypatch, entry):
    """`python -m ascend_doctor` puts the working directory on sys.path; a *.dist-info someone left there is not an
    installed distribution, and loading its entry point would run their code (#23 item 9)."""
    _dist(tmp_path, "kappa-1.0.dist-info", f"[{GROUP}]\nk = kappa.plugin\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(entry or str(tmp_path))
    if entry:
        monkeypatch.syspath_prepend(entry)
    assert ("k", "kappa.plugin") not in _pairs(GROUP)


def test_loaded_entry_point_resolves_module_and_attribute():
    (ep,) = [e for e in find_entry_points("console_scripts") if e.name == "ascend-doctor"] or [None]
    if ep is None:
        pytest.skip("ascend-doctor is not installed with its console script")
    from ascend_doctor import cli

    assert ep.value == "ascend_doctor.cli:main" and ep.load() is cli.main


def test_agrees_with_importlib_metadata_for_console_scripts():
    ours = _pairs("console_scripts")
    theirs = {(e.name, e.value) for e in _metadata_eps("console_scripts")}
    assert theirs, "no console_scripts installed to compare against"
    assert set(ours) == theirs
    assert len(ours) == len(set(ours))


@NEEDS_310
def test_agrees_with_importlib_metadata_on_a_fake_path(tmp_path, monkeypatch):
    _dist(tmp_path / "a", "lambda_pkg-1.0.dist-info", f"[{GROUP}]\nl1 = lam.one\n# c\n[x]\ny = z\n")
    _dist(tmp_path / "a", "mu-3.egg-info", f"[{GROUP}]\nm = mu:reg\n")
    _dist(tmp_path / "b", "Lambda.Pkg-0.9.dist-info", f"[{GROUP}]\nl_old = lam.old\n")
    monkeypatch.syspath_prepend(str(tmp_path / "b"))
    monkeypatch.syspath_prepend(str(tmp_path / "a"))
    theirs = {(e.name, e.value) for e in _metadata_eps(GROUP)}
    assert set(_pairs(GROUP)) == theirs == {("l1", "lam.one"), ("m", "mu:reg")}
