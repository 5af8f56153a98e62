"""Facts a source shows only in part (ascend_doctor.facts.partial, ServerEnv listings, partial package lists): an
unshown part is unknown, never an empty value, and checks need not know where their facts came from."""

from __future__ import annotations

import pytest

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.facts import FactStore
from ascend_doctor.facts.partial import Shown, if_shown
from ascend_doctor.facts.server_env import EnvListing, ListedEnv, ServerEnv
from ascend_doctor.probes.cann import CannFact, CannInstall, NnalFact
from ascend_doctor.seam.host import Distribution, PythonEnv


def _cann():
    inst = CannInstall(root="/usr/local/Ascend/ascend-toolkit/8.2.RC1", version="8.2.RC1", arch="aarch64")
    return CannFact(found=True, installs=[inst], active=inst, version="8.2.RC1", nnal=NnalFact(found=False))


def test_shown_parts_read_through_and_others_are_unknown_with_the_path():
    view = Shown(["found", "version", "active.root"], "only the version").view("cann", _cann())
    assert view.found is True and view.version == "8.2.RC1" and view.active.root.endswith("8.2.RC1")
    assert isinstance(view, CannFact) and isinstance(view.active, CannInstall)
    with pytest.raises(FactUnavailable) as e:
        view.nnal  # noqa: B018 - the read itself is the test
    assert e.value.fact == "cann.nnal" and e.value.reason == "only the version"
    with pytest.raises(FactUnavailable) as e:
        view.active.arch  # noqa: B018
    assert e.value.fact == "cann.active.arch"
    with pytest.raises(AttributeError):
        view.version = "9"


def test_list_items_and_methods_are_guarded_too():
    py = PythonEnv(version="3.11.10", distributions=[Distribution(name="torch", version="2.9.0",
                                                                  requires=["numpy"], location="/x")])
    view = Shown(["version", "distributions.name", "distributions.version", "listed_only", "listed_patterns"],
                 "a pip list").view("python", py)
    d = view.dist("torch")  # a method runs against the view: what it returns is guarded as well
    assert d.version == "2.9.0"
    with pytest.raises(FactUnavailable) as e:
        d.requires  # noqa: B018
    assert e.value.fact == "python.distributions.requires"
    assert if_shown(lambda: d.location) is None and if_shown(lambda: d.version) == "2.9.0"
    with pytest.raises(FactUnavailable):  # a missing *fact* is not a hidden part: if_shown lets it through
        if_shown(lambda: (_ for _ in ()).throw(FactUnavailable("cann", "no CANN")))


def test_a_store_hands_the_view_to_checks_and_records_what_they_lacked():
    from ascend_doctor.core.evaluator import CheckContext

    store = FactStore.given({"cann": _cann()}, missing={"npu_smi": "no table"},
                            partial={"cann": Shown(["found", "version"], "version only")})
    ctx = CheckContext(store, store.options)
    assert ctx.fact("cann").version == "8.2.RC1"
    assert ctx.try_fact("npu_smi") is None and ctx.unread == {"npu_smi": "no table"}
    with pytest.raises(FactUnavailable):
        ctx.fact("cann").nnal  # noqa: B018


def test_a_listed_environment_knows_only_what_its_listing_prints():
    listing = EnvListing("vllm-ascend's collect_env", ("ASCEND_", "VLLM_"), names=("LD_LIBRARY_PATH",),
                         hidden_terms=("token",))
    env = ServerEnv.of(ListedEnv({"ASCEND_RT_VISIBLE_DEVICES": "0,1"}, listing), {"HCCL_BUFFSIZE": "512"})
    assert env.get("ASCEND_RT_VISIBLE_DEVICES") == "0,1" and env["HCCL_BUFFSIZE"] == "512"
    assert env.get("VLLM_USE_V1") is None and "LD_LIBRARY_PATH" not in env  # printed when set: really unset
    with pytest.raises(FactUnavailable) as e:
        env.get("HCCL_CONNECT_TIMEOUT")
    assert e.value.fact == "server_env.HCCL_CONNECT_TIMEOUT" and "does not print HCCL_CONNECT_TIMEOUT" in e.value.reason
    with pytest.raises(FactUnavailable):
        "VLLM_API_TOKEN" in env  # noqa: B015 - a secret-looking name is never printed
    assert env.peek("HCCL_CONNECT_TIMEOUT") is None  # a hint reader may look without concluding
    assert (ServerEnv.of(ListedEnv({}, listing), None) or {"x": 1}) == {}  # an empty listing is still a listing
    plain = ServerEnv.of({"A": "1"}, None)
    assert plain.get("HCCL_CONNECT_TIMEOUT") is None  # a whole environment: absent means unset


def test_a_partial_package_list_cannot_say_a_package_is_missing():
    whole = PythonEnv(distributions=[Distribution(name="torch", version="2.9.0")])
    assert whole.dist("triton-ascend") is None
    grep = PythonEnv(distributions=[Distribution(name="torch", version="2.9.0")], listed_only=True)
    assert grep.dist("torch").version == "2.9.0" and grep.listed("triton-ascend") is None
    with pytest.raises(FactUnavailable) as e:
        grep.dist("Triton_Ascend")
    assert e.value.fact == "python.dist(triton-ascend)"
    # collect_env keeps every pip line holding "torch": a torch_npu it does not list is not installed
    collect_env = PythonEnv(distributions=[Distribution(name="torch", version="2.9.0")], listed_only=True,
                            listed_patterns=["torch", "numpy"])
    assert collect_env.dist("torch-npu") is None
    with pytest.raises(FactUnavailable):
        collect_env.vllm_dist()
