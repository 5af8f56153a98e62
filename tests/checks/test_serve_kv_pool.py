"""SERVE407: the KV-pool transfer variables against the host versions the release's guide requires (vllm-ascend#8420),
on the fixture stack of test_serve_checks with the stack's versions set per case."""

from __future__ import annotations

import pytest

from ascend_doctor.report import Stack, Status
from ascend_doctor.seam.host import Distribution
from tests.checks.test_serve_checks import QWEN, facts, npu, on_release
from tests.helpers import run_check

KV = '{"kv_connector":"MooncakeConnectorV1","kv_role":"kv_producer"}'
A3 = "Ascend910"


def _npus(chip: str):
    fx = npu()
    return fx.model_copy(update={"info": fx.info.model_copy(update={
        "chips": [c.model_copy(update={"name": chip}) for c in fx.info.chips]})})


class _StackFact:
    def __init__(self, **kw):
        self.stack = Stack(**kw)


def _run(*, release="0.23.0", chip=A3, driver="26.0.rc1", cann="9.0.1", mooncake=None, env=None, kv=True):
    fx = on_release(facts(f"vllm serve {QWEN}" + (f" --kv-transfer-config {KV}" if kv else ""),
                          env=env if env is not None else {"ASCEND_ENABLE_USE_FABRIC_MEM": "1"},
                          npus=_npus(chip)), release)
    if mooncake:
        fx["python"].distributions.append(Distribution(name="mooncake-transfer-engine", version=mooncake))
    fx["stack"] = _StackFact(driver=driver, cann=cann)
    return run_check("SERVE407", fx)


@pytest.mark.parametrize("kw, status, words", [
    ({}, Status.PASS, "met (HDK 26.0.rc1, CANN 9.0.1)"),  # an RC of 26.0 is a 26.0 release
    ({"driver": "25.2.0"}, Status.FAIL, "this host has HDK 25.2.0, CANN 9.0.1, short of HDK >= 26.0 / HDK >= 25.5 "
                                        "with mooncake >= 0.3.11"),
    ({"driver": "25.5.0", "mooncake": "0.3.11.post1"}, Status.PASS, "met"),
    ({"driver": "25.5.0"}, Status.UNKNOWN, "not known here: mooncake"),
    ({"cann": "8.3.RC1"}, Status.FAIL, "short of CANN >= 9.0.0"),
    ({"driver": None}, Status.UNKNOWN, "not known here: HDK"),
    ({"chip": "910B3"}, Status.WARN, "gives ASCEND_ENABLE_USE_FABRIC_MEM for A3 only; this host's NPUs are A2"),
    ({"release": "0.18.0rc1", "driver": "25.5.0"}, Status.FAIL, "short of HDK >= 26.0.0"),
    ({"release": "0.30.0rc2", "cann": "9.0.1"}, Status.FAIL, "short of CANN >= 9.1.0"),
    ({"env": {"ASCEND_ENABLE_USE_FABRIC_MEM": "0"}}, Status.PASS, "none of the variables"),
    ({"kv": False}, Status.PASS, "no --kv-transfer-config"),
    ({"release": "0.17.0rc1"}, Status.SKIP, "no requirement table this doctor reads"),
    ({"release": "0.21.0rc1", "env": {"ASCEND_BUFFER_POOL": "4:8"}, "driver": "26.0.rc1"}, Status.WARN,
     "ASCEND_BUFFER_POOL=4:8 on A3 needs 25.5.0<=HDK<26.0.0"),  # past the range's top: a warning
    ({"release": "0.21.0rc1", "env": {"ASCEND_BUFFER_POOL": "4:8"}, "driver": "25.2.0"}, Status.FAIL,
     "short of HDK >= 25.5.0 with HDK < 26.0.0"),
    ({"chip": "910B3", "env": {"HCCL_INTRA_ROCE_ENABLE": "1"}, "driver": "25.2.0"}, Status.WARN,
     "HCCL_INTRA_ROCE_ENABLE=1 on A2 needs HDK >= 25.5 is recommended"),
])
def test_kv_pool_host_versions(kw, status, words):
    f = _run(**kw)
    assert f.status == status and words in f.message, f.message
    if status == Status.FAIL or words.startswith("met"):
        assert any(e.source.startswith("matrix: serve/kv-pool-env.toml") for e in f.evidence)


def test_the_lingqu_network_is_named_not_judged():
    f = _run()
    assert "not checked: LingQu Computing Network >= 1.5" in f.message
