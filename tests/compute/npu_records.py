"""Recorded outputs of the compute smoke's NPU path, for replay: what the launcher prints on an 8 x 910B3 host, built
from the torch_npu documentation and the issue threads below — no NPU is needed to test the NPU branch.

Every value that a check judges comes from a source:
- device name: torch.npu.get_device_name() returns aclrtGetSocName() (torch_npu csrc/npu/Module.cpp:183 @9e73e70);
  "NPU type: Ascend910B3" as pasted in https://github.com/hiyouga/LlamaFactory/issues/6671;
- HBM total: torch.npu.mem_get_info() gives (free, total) bytes from aclrtGetMemInfo (Module.cpp:293-301); a 64 GB
  910B reports "60.94 GiB total capacity" (https://github.com/vllm-project/vllm-ascend/issues/6572); an idle NPU is
  recorded with free = total (no thread prints mem_get_info before an allocation: an assumption, not judged);
- a busy NPU: "… 52.87 GiB already allocated; … 2.77 GiB free …" (https://github.com/vllm-project/vllm-ascend/issues/1617);
- matmul speed: 315.4 (bf16) / 314.5 (fp16) TFLOP/s, the one public measurement of a 910B at 4096^3
  (https://github.com/zzc0721/torch-performance-test-data/issues/109, a 910B2) — the outlier rule is relative, so the
  exact chip variant does not change a verdict;
- matmul and rms_norm errors: the values the CPU path measures for the same inputs (output rounding dominates);
- all-reduce: the HCCL Test docs' 8-rank sample row "67108864 | 2630.20 | 23.76245 | success"
  (https://www.hiascend.com/document/detail/zh/canncommercial/850/devaids/hccltool/HCCLpertest_16_0006.html);
- the errors: quoted from the threads each scenario names.
Times that no check judges (import, rendezvous) are round figures and say nothing.
"""

from __future__ import annotations

import copy

DEVICE_NAME = "Ascend910B3"
TOTAL = int(60.94 * 2**30)
TFLOPS = {"bfloat16": 315.4, "float16": 314.5}
MATMUL_ERR = {"bfloat16": 0.0029785, "float16": 0.00045089}
ALLREDUCE = {"bytes": 67108864, "seconds": 0.0026302, "algbw_gbps": 23.762}


def healthy_rank(rank: int, cfg: dict) -> dict:
    """One rank that did every step, as the launcher records it."""
    want = int(TOTAL * cfg["hbm_share"])
    n = cfg["bench_n"]
    steps = [
        {"step": "import", "seconds": 12.0, "torch": "2.8.0+cpu", "torch_npu": "2.8.0.post2"},
        {"step": "device", "device": f"npu:{rank}", "name": DEVICE_NAME, "count": cfg["world"]},
        {"step": "memory", "ok": True, "bytes": want, "free": TOTAL, "total": TOTAL, "read_back": [165, 165],
         "seconds": 0.05},
    ]
    for dtype in cfg["dtypes"]:
        iters = 255
        steps.append({"step": "matmul", "dtype": dtype, "tolerance": cfg["tolerance"][dtype], "ok": True,
                      "max_rel_err": MATMUL_ERR[dtype], "n": n, "iters": iters,
                      "seconds": round(2.0 * n ** 3 * iters / (TFLOPS[dtype] * 1e12), 6), "tflops": TFLOPS[dtype]})
    for op in cfg["ops"]:
        steps.append({"step": "op", "name": op["name"], "call": op["call"], "library": op["library"],
                      "dtype": cfg["dtypes"][0], "tolerance": 0.0 if op.get("exact") else cfg["tolerance"][
                          cfg["dtypes"][0]], "max_rel_err": 0.0 if op.get("exact") else 0.0066151, "ok": True,
                      "seconds": 0.01})
    world = cfg["world"]
    steps.append({"step": "rendezvous", "ok": True, "seconds": 1.0})
    steps.append({"step": "allreduce", "world": world, "expected": world * (world + 1) / 2.0,
                  "seen": [world * (world + 1) / 2.0] * 2, "ok": True, "bytes": ALLREDUCE["bytes"],
                  "iters": cfg["allreduce_iters"], "seconds": ALLREDUCE["seconds"],
                  "algbw_gbps": ALLREDUCE["algbw_gbps"], "busbw_gbps": round(ALLREDUCE["algbw_gbps"] * 2 * (world - 1)
                                                                             / world, 3)})
    return {"rank": rank, "pid": 300000 + rank, "stage": "done", "steps": steps, "returncode": 0, "signal": None,
            "stopped": None, "start_error": None, "stderr_tail": "", "stage_seconds": 0.1, "seconds": 20.0}


def record(cfg: dict, ranks: list[dict]) -> dict:
    return {"world": cfg["world"], "device": "npu", "backend": "hccl", "master_port": 29500,
            "python": "/opt/vllm/bin/python3", "budget": cfg["budget"], "seconds": 21.0, "ranks": ranks}


def _cut(rank: dict, before: str) -> dict:
    """The rank as it looks when it ended at the step `before` (that step and everything after it missing)."""
    out = copy.deepcopy(rank)
    names = [s["step"] for s in out["steps"]]
    out["steps"] = out["steps"][:names.index(before)]
    return out


def _waiting(rank: dict, stage: str = "rendezvous", why: str = "peer-gone") -> dict:
    out = _cut(rank, stage)
    out.update(stage=stage, returncode=-9, signal="SIGKILL", stopped=why, stage_seconds=2.0)
    return out


# https://github.com/vllm-project/vllm-ascend/issues/1558 (set_device on rank 1 of a TP job)
SET_DEVICE_ERROR = "\n".join([
    "Traceback (most recent call last):",
    '  File ".../torch_npu/npu/utils.py", line 80, in set_device',
    "    torch_npu._C._npu_setDevice(device_id)",
    "RuntimeError: Initialize:torch_npu/csrc/core/npu/sys_ctrl/npu_sys_ctrl.cpp:146 NPU function error: "
    "c10_npu::SetDevice(device_id_), error code is 507033",
    "[ERROR] 2025-07-01-08:38:50 (PID:114020, Device:-1, RankID:1) ERR00100 PTA call acl api failed"])

# https://github.com/Ascend/pytorch/issues/99 (NNAL's ATB library does not match torch_npu)
NNAL_MISMATCH = ("OSError: /usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1/lib/libtbe_adapter.so: undefined symbol: "
                 "_ZN3Mki2DlC1ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEb")

# https://github.com/vllm-project/vllm-ascend/issues/2712 (HCCL communicator init fails at the first collective)
HCCL_INIT = ("RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:148 HCCL function error: "
             "hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error code is 1")

# Python's faulthandler (enabled in every rank) on a segfault inside an operator; vllm-ascend#10136 shows the same
# death in the engine core ("Failed core proc(s): {'EngineCore': -11}") after "basic torch-npu op OK".
SEGFAULT = """Fatal Python error: Segmentation fault

Current thread 0x0000ffff8f7d7020 (most recent call first):
  File "<string>", line 139 in op_reshape_and_cache
  File "<string>", line 152 in <module>"""


def scenario(name: str, cfg: dict) -> dict:
    """The launcher record of one scenario on the replayed 8 x 910B3 host."""
    ranks = [healthy_rank(r, cfg) for r in range(cfg["world"])]
    if name == "healthy":
        pass
    elif name == "busy-hbm":  # #1617: NPU 1 already holds 52.87 GiB, 2.77 GiB free
        mem = next(s for s in ranks[1]["steps"] if s["step"] == "memory")
        mem.update(ok=False, free=int(2.77 * 2**30), seconds=None)
        mem.pop("read_back")
    elif name == "set-device":  # #1558: rank 1 cannot open its NPU; the others wait at the rendezvous
        bad = _cut(ranks[1], "device")
        bad.update(stage="device", returncode=1, stderr_tail=SET_DEVICE_ERROR, seconds=14.0)
        ranks = [bad if r["rank"] == 1 else _waiting(r) for r in ranks]
    elif name == "nnal-mismatch":  # Ascend/pytorch#99 on every rank
        for r in ranks:
            op = next(s for s in r["steps"] if s["step"] == "op" and s["name"] == "reshape_and_cache")
            op.update(ok=False, error=NNAL_MISMATCH)
            op.pop("max_rel_err")
    elif name == "segfault-op":  # rank 5 dies in the ATB operator
        bad = _cut(ranks[5], "op")
        bad.update(stage="op:reshape_and_cache", returncode=-11, signal="SIGSEGV", stderr_tail=SEGFAULT)
        bad["steps"].append(next(s for s in ranks[5]["steps"] if s["step"] == "op" and s["name"] == "rms_norm"))
        ranks = [bad if r["rank"] == 5 else _waiting(r) for r in ranks]
    elif name == "hccl-init":  # #2712 on every rank, at the first collective
        for r in ranks:
            ar = next(s for s in r["steps"] if s["step"] == "allreduce")
            for key in ("expected", "seen", "bytes", "iters", "seconds", "algbw_gbps", "busbw_gbps"):
                ar.pop(key)
            ar.update(ok=False, error=HCCL_INIT)
            r.update(stage="allreduce", returncode=4)
    elif name == "hccl-hang":  # every rank waits in HCCL (HCCL_EXEC_TIMEOUT is 1836 s); the launcher stops them
        ranks = [_waiting(r, "allreduce", "collective-timeout") for r in ranks]
        for r in ranks:
            r["stage_seconds"] = cfg["collective_timeout"] + cfg["grace"]
    elif name == "slow-npu":  # rank 6 at 62% of its peers
        for s in ranks[6]["steps"]:
            if s["step"] == "matmul":
                s["tflops"] = round(s["tflops"] * 0.62, 1)
                s["seconds"] = round(s["seconds"] / 0.62, 6)
    else:
        raise KeyError(name)
    return record(cfg, ranks)


SCENARIOS = ("healthy", "busy-hbm", "set-device", "nnal-mismatch", "segfault-op", "hccl-init", "hccl-hang", "slow-npu")
