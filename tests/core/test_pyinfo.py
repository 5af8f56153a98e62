"""The metadata dump run in the serving interpreter (localhost.PYINFO_SCRIPT): only METADATA headers count."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ascend_doctor.seam.localhost import PYINFO_SCRIPT

BODY = """
Acme
====

Requires-Dist: not-a-requirement (this line is in the long description)
Version: 9.9.9
"""


def _dump(site) -> dict:
    env = {**os.environ, "PYTHONPATH": str(site)}
    r = subprocess.run([sys.executable, "-c", PYINFO_SCRIPT], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return {d["name"]: d for d in json.loads(r.stdout)["distributions"]}


def test_headers_only_crlf_continuations_and_egg_info(tmp_path):
    site = tmp_path / "site"
    dist = site / "acme_pkg-1.2.3.dist-info"
    dist.mkdir(parents=True)
    meta = ("Metadata-Version: 2.1\nName: acme-pkg\nVersion: 1.2.3\nSummary: a long\n  folded summary\n"
            "Requires-Dist: torch (==2.5.1)\nRequires-Dist: numpy; python_version >= \"3.9\"\n" + BODY)
    (dist / "METADATA").write_bytes(meta.replace("\n", "\r\n").encode())
    egg = site / "old_egg.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: old-egg\nVersion: 0.4\n\nbody\n")
    (egg / "requires.txt").write_text("six>=1.0\n\n[extra]\nmock\n")
    got = _dump(site)
    acme = got["acme-pkg"]
    assert acme["version"] == "1.2.3"
    assert acme["requires"] == ["torch (==2.5.1)", 'numpy; python_version >= "3.9"']
    assert acme["location"] == str(site)
    old = got["old-egg"]
    assert old["version"] == "0.4" and old["requires"][0] == "six>=1.0" and any("mock" in r for r in old["requires"])


def test_agrees_with_importlib_metadata_here():
    """On this interpreter's own site-packages the header reading gives what importlib.metadata's parser gives."""
    from importlib import metadata

    got = _dump("")
    for d in metadata.distributions():
        name = d.metadata["Name"]
        if name in got and got[name]["location"] == str(d.locate_file("")):
            assert got[name]["version"] == d.version
            assert got[name]["requires"] == list(d.requires or [])
