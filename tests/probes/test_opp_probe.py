"""The opp_kernels probe: the SoC directories of the operator kernels, read through the host seam (CANN108)."""

from __future__ import annotations

import json

from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.probes.cann import cann_probe
from ascend_doctor.probes.opp import KERNEL_CONFIG, opp_kernels_probe
from ascend_doctor.seam.snapshot import ReplayHost, Snapshot
from tests.helpers import REPO

OPP = "/usr/local/Ascend/cann/opp"  # the example host's ASCEND_OPP_PATH


def fact(dirs: dict):
    data = json.loads((REPO / "examples" / "healthy-a2.snapshot.json").read_text(encoding="utf-8"))
    data["dirs"] = {k: v for k, v in data["dirs"].items() if KERNEL_CONFIG not in k}
    data["dirs"].update(dirs)
    host = ReplayHost(Snapshot.model_validate(data))
    store = FactStore(host, RunOptions(), probes={"cann": cann_probe})
    return opp_kernels_probe(host, store)


def test_the_recorded_listing_is_the_fact():
    f = fact({f"{OPP}/{KERNEL_CONFIG}": {"entries": ["ascend910b", "ascend310p"]}})
    assert f.socs == ["ascend310p", "ascend910b"] and not f.missing and f.config_dir == f"{OPP}/{KERNEL_CONFIG}"


def test_recorded_absent_unrecorded_and_unreadable_are_told_apart():
    f = fact({f"{OPP}/{KERNEL_CONFIG}": {"entries": None, "error": "not_found", "error_message": "No such file"}})
    assert f.socs == [] and f.missing
    f = fact({})  # a snapshot from before the probe existed
    assert f.socs is None and "not in the snapshot" in f.error
    f = fact({f"{OPP}/{KERNEL_CONFIG}": {"entries": None, "error": "permission_denied",
                                          "error_message": "Permission denied"}})
    assert f.socs is None and f.error == "Permission denied"
