"""The script one rank of the compute smoke runs, in a child of the serving interpreter (started by the launcher).

It reads its orders from `ASCEND_DOCTOR_COMPUTE` (JSON: rank, world, device kind, sizes, tolerances, rendezvous
address) and does, in this order, the steps that need no peer first — so a peer that dies cannot cost the others
their own results:

1. `import`: torch (and torch_npu on the NPU path, which registers the `npu` device and the `hccl` backend).
2. `device`: select its device; the NPU's name and how many NPUs torch sees.
3. `memory`: allocate the documented share of HBM (a fixed size on the CPU path) and touch every byte.
4. `matmul`: per dtype, a product checked against a float64 CPU reference (max |out - ref| / max |ref| within the
   dtype's tolerance), then timed: TFLOP/s. On an NPU the time is wall time around `torch.npu.synchronize()`; on the
   CPU path it is this process's CPU time with one thread, so eight ranks sharing two cores do not look slow.
5. `op`: the fused operators vllm-ascend calls on its hot path (an aclnn one and an ATB one), each against a plain
   torch reference on the CPU. The CPU path runs torch's own fused kernels of the same operations in their place.
6. `rendezvous` and `allreduce`: join the process group (hccl / gloo), all-reduce a known vector (every element must
   come back as 1 + 2 + … + world) and time a larger one: algorithm and bus bandwidth as nccl-tests define them.

Every step prints `ASCEND_DOCTOR_STEP {json}` (flushed) and every stage `ASCEND_DOCTOR_STAGE name`, so the launcher
knows how far a rank got when it crashes or hangs. A step that raises is recorded with the error and the rank goes
on, except that a rank that cannot import or select its device stops (nothing after it can run).
"""

from __future__ import annotations

RANK_SCRIPT = r'''
# ascend-doctor-script: compute-rank
import sys
sys.path[:] = [p for p in sys.path if p not in ("", ".")]
import datetime, faulthandler, json, os, platform, time
faulthandler.enable()


def die_with_launcher():
    # Linux: the kernel sends SIGKILL when the launcher dies (PR_SET_PDEATHSIG = 1), killed or not; a rank must never
    # outlive it, holding an NPU and its HBM (#40 item 10). If it already died, go now.
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)
    except Exception:
        return
    if str(os.getppid()) != os.environ.get("ASCEND_DOCTOR_LAUNCHER_PID", str(os.getppid())):
        os._exit(1)


die_with_launcher()
cfg = json.loads(os.environ["ASCEND_DOCTOR_COMPUTE"])
rank, world, kind, local = cfg["rank"], cfg["world"], cfg["device"], cfg["local_rank"]


def stage(name):
    print("ASCEND_DOCTOR_STAGE " + name, flush=True)


def emit(step, **rec):
    rec["step"] = step
    print("ASCEND_DOCTOR_STEP " + json.dumps(rec, default=str), flush=True)


def error_text(exc):
    return (type(exc).__name__ + ": " + str(exc)).strip()[:1500]


stage("import")
t0 = time.perf_counter()
import torch
import torch.distributed as dist
if kind == "npu":
    import torch_npu  # registers the npu device and the hccl backend
emit("import", seconds=round(time.perf_counter() - t0, 3), torch=torch.__version__,
     torch_npu=getattr(sys.modules.get("torch_npu"), "__version__", None))

stage("device")
if kind == "npu":
    torch.npu.set_device(local)
    device = torch.device("npu", local)
    emit("device", device=str(device), name=torch.npu.get_device_name(local), count=torch.npu.device_count())

    def sync():
        torch.npu.synchronize()

    clock = time.perf_counter
else:
    torch.set_num_threads(1)
    device = torch.device("cpu")
    emit("device", device="cpu", name=platform.machine(), count=None)

    def sync():
        pass

    clock = time.process_time  # this rank's CPU time: ranks sharing cores do not look slow

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}
gen = torch.Generator().manual_seed(20261202)


def rel_err(out, ref):
    out, ref = out.detach().to("cpu", torch.float64), ref.to(torch.float64)
    return float((out - ref).abs().max() / ref.abs().max().clamp_min(1e-30))


stage("memory")
want = None
try:
    t = time.perf_counter()
    if kind == "npu":
        free, total = torch.npu.mem_get_info(local)
        want = int(total * cfg["hbm_share"])
    else:
        free = total = None
        want = int(cfg["cpu_bytes"])
    if free is not None and want > free:
        emit("memory", ok=False, bytes=want, free=free, total=total)  # not tried: another process holds the HBM
    else:
        buf = torch.empty(want, dtype=torch.uint8, device=device)
        buf.fill_(0xA5)
        sync()
        lo, hi = int(buf.min()), int(buf.max())
        del buf
        if kind == "npu":
            torch.npu.empty_cache()
        emit("memory", ok=lo == hi == 0xA5, bytes=want, free=free, total=total, read_back=[lo, hi],
             seconds=round(time.perf_counter() - t, 4))
except Exception as exc:
    emit("memory", ok=False, bytes=want, error=error_text(exc))


def bench(fn, min_seconds, max_iters):
    fn()
    sync()
    iters, spent = 0, 0.0
    batch = 1
    while spent < min_seconds and iters < max_iters:
        t = clock()
        for _ in range(batch):
            fn()
        sync()
        spent += clock() - t
        iters += batch
        batch = min(batch * 2, max_iters - iters) or 1
    return iters, spent


for name in cfg["dtypes"]:
    stage("matmul:" + name)
    rec = {"dtype": name, "tolerance": cfg["tolerance"][name]}
    try:
        dt = DTYPES[name]
        n = cfg["check_n"]
        a, b = torch.randn(n, n, generator=gen), torch.randn(n, n, generator=gen)
        out = torch.matmul(a.to(device, dt), b.to(device, dt))
        rec["max_rel_err"] = rel_err(out, a.double() @ b.double())
        n = cfg["bench_n"]
        x = torch.randn(n, n, generator=gen).to(device, dt)
        y = torch.randn(n, n, generator=gen).to(device, dt)
        iters, spent = bench(lambda: torch.matmul(x, y), cfg["bench_seconds"], cfg["bench_max_iters"])
        rec.update(n=n, iters=iters, seconds=round(spent, 6), tflops=2.0 * n ** 3 * iters / max(spent, 1e-9) / 1e12)
        rec["ok"] = rec["max_rel_err"] <= rec["tolerance"]
    except Exception as exc:
        rec.update(ok=False, error=error_text(exc))
    emit("matmul", **rec)


def rms_norm_case(dt):
    x = torch.randn(16, 1024, generator=gen)
    w = torch.rand(1024, generator=gen) + 0.5
    eps = 1e-6
    ref = x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + eps) * w.double()
    return x, w, eps, ref


def op_rms_norm(dt):
    x, w, eps, ref = rms_norm_case(dt)
    if kind == "npu":
        out = torch_npu.npu_rms_norm(x.to(device, dt), w.to(device, dt), eps)[0]
    else:
        out = torch.nn.functional.rms_norm(x.to(dt), (x.shape[-1],), w.to(dt), eps)
    return rel_err(out, ref)


def op_reshape_and_cache(dt):
    # vllm-ascend's paged KV write: key/value [tokens, heads, head_size] into caches [blocks, block_size, heads,
    # head_size] at slot = block * block_size + offset. Every written slot must hold its token; the others stay 0.
    tokens, heads, hs, blocks, bs = 12, 4, 64, 8, 16
    key = torch.randn(tokens, heads, hs, generator=gen)
    value = torch.randn(tokens, heads, hs, generator=gen)
    slots = torch.randperm(blocks * bs, generator=gen)[:tokens].to(torch.int32)
    ref_k = torch.zeros(blocks * bs, heads, hs, dtype=torch.float64)
    ref_v = torch.zeros(blocks * bs, heads, hs, dtype=torch.float64)
    ref_k[slots.long()] = key.to(dt).double()  # a copy: the reference is the key as stored in the cache's dtype
    ref_v[slots.long()] = value.to(dt).double()
    if kind == "npu":
        kc = torch.zeros(blocks, bs, heads, hs, dtype=dt, device=device)
        vc = torch.zeros(blocks, bs, heads, hs, dtype=dt, device=device)
        torch_npu._npu_reshape_and_cache(key=key.to(device, dt), value=value.to(device, dt), key_cache=kc,
                                         value_cache=vc, slot_indices=slots.to(device))
    else:
        kc = torch.zeros(blocks * bs, heads, hs, dtype=dt)
        vc = torch.zeros(blocks * bs, heads, hs, dtype=dt)
        kc.index_copy_(0, slots.long(), key.to(dt))
        vc.index_copy_(0, slots.long(), value.to(dt))
    return max(rel_err(kc.reshape(blocks * bs, heads, hs), ref_k), rel_err(vc.reshape(blocks * bs, heads, hs), ref_v))


OPS = {"rms_norm": op_rms_norm, "reshape_and_cache": op_reshape_and_cache}
for op in cfg["ops"]:
    stage("op:" + op["name"])
    dt = DTYPES[cfg["dtypes"][0]]
    rec = {"name": op["name"], "call": op["call"], "library": op["library"], "dtype": cfg["dtypes"][0],
           "tolerance": 0.0 if op.get("exact") else cfg["tolerance"][cfg["dtypes"][0]]}
    try:
        t = time.perf_counter()
        rec["max_rel_err"] = OPS[op["name"]](dt)
        sync()
        rec["seconds"] = round(time.perf_counter() - t, 4)
        rec["ok"] = rec["max_rel_err"] <= rec["tolerance"]
    except Exception as exc:
        rec.update(ok=False, error=error_text(exc))
    emit("op", **rec)

stage("rendezvous")
t = time.perf_counter()
try:
    init = ("file://" + cfg["store_file"] if cfg.get("store_file")  # one node: no listener (launcher.py)
            else "tcp://%s:%d" % (cfg["master_addr"], cfg["master_port"]))
    dist.init_process_group(cfg["backend"], init_method=init, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=cfg["collective_timeout"]))
except Exception as exc:
    emit("rendezvous", ok=False, seconds=round(time.perf_counter() - t, 3), error=error_text(exc))
    sys.exit(3)
emit("rendezvous", ok=True, seconds=round(time.perf_counter() - t, 3))

stage("allreduce")
rec = {"world": world}
try:
    probe = torch.full((1024,), float(rank + 1), dtype=torch.float32, device=device)
    dist.all_reduce(probe)
    sync()
    expected = world * (world + 1) / 2.0
    got = probe.to("cpu")
    rec.update(expected=expected, seen=[float(got.min()), float(got.max())])
    rec["ok"] = bool((got == expected).all())
    nbytes = int(cfg["allreduce_bytes"]) // 4 * 4
    x = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
    dist.all_reduce(x)
    sync()
    dist.barrier()
    iters = cfg["allreduce_iters"]
    t = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(x)
    sync()
    per = (time.perf_counter() - t) / iters
    algbw = nbytes / per / 1e9
    rec.update(bytes=nbytes, iters=iters, seconds=round(per, 6), algbw_gbps=round(algbw, 3),
               busbw_gbps=round(algbw * 2.0 * (world - 1) / world, 3))
except Exception as exc:
    rec.update(ok=False, error=error_text(exc))
    emit("allreduce", **rec)
    # Out at once: tearing down a process group whose peer is still hung can block or abort (gloo:
    # "terminate called after throwing an instance of 'gloo::EnforceNotMet'"), and the error is already reported.
    sys.stderr.flush()
    os._exit(4)
emit("allreduce", **rec)
# Done, and out without tearing the process group down: every collective above has completed on every rank, and
# destroy_process_group on a rank whose rendezvous host (rank 0, on the first node) has already exited can abort in
# C++ (gloo: "terminate called after throwing an instance of 'gloo::EnforceNotMet'"), which no `except` catches — a
# healthy run then read as a crashed rank. Process exit releases the device and the sockets.
stage("done")
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)
'''
