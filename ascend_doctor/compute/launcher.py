"""The one command the doctor runs for the compute smoke: `python -c LAUNCHER '<config json>'` in the serving
interpreter. It starts one rank per device (ascend_doctor.compute.rank), reads their steps, and ends them when
there is nothing more to wait for:

- a rank that ended before the rendezvous (crash, error, never started) leaves the collective unable to form: the
  ranks already waiting at the rendezvous are stopped after `grace` seconds, instead of waiting for a timeout;
- a rank that ended during the all-reduce: the others get the collective timeout (gloo raises on its own, and its
  error text says which wait failed), then are stopped;
- a rank that stays in the rendezvous or the all-reduce past the collective timeout (plus grace) is stopped;
- at the budget every rank still running is stopped.

On one node nothing listens on the network: the ranks meet through a file store in a private directory (mode 0700,
removed at the end) instead of torch's TCPStore — whose server binds every interface whatever `master_addr` says —
and gloo's pairs bind loopback (GLOO_SOCKET_IFNAME=lo). HCCL's own host sockets are HCCL's (HCCL_IF_IP).

On a multi-node fleet (`fleet --compute`) each node's launcher starts its own ranks as global ranks `rank_offset` +
0..world-1 of `global_world`, all meeting at the first node's `master_addr`/`master_port`: one all-reduce across
the nodes. A rank elsewhere that fails is seen here only as this node's ranks timing out in the collective.

The ranks stay in the launcher's process group, so the doctor's own deadline (LocalHost.run kills the group) and
its stray sweep (the probe tag in every child's environment) reach them even if the launcher itself is killed; and
each asks the kernel for a parent-death signal (the launcher on the doctor, a rank on the launcher), so a doctor
killed with SIGKILL, which can stop nothing, still leaves nothing running.
The launcher prints one `ASCEND_DOCTOR_COMPUTE {json}` line: what every rank printed, how it ended and, for a rank
the launcher stopped, why. What that means is decided in the doctor (ascend_doctor.compute.facts), not here.
"""

from __future__ import annotations

import json

from ascend_doctor.compute.rank import RANK_SCRIPT

MARKER = "ASCEND_DOCTOR_COMPUTE"

_LAUNCHER = r'''
# ascend-doctor-script: compute-smoke
import sys
sys.path[:] = [p for p in sys.path if p not in ("", ".")]
import collections, json, os, queue, shutil, signal, socket, subprocess, tempfile, threading, time
cfg = json.loads(sys.argv[1])
RANK_SCRIPT = __RANK_SCRIPT__


def die_with_parent():
    # Linux: SIGKILL from the kernel when the doctor's thread that started us ends (PR_SET_PDEATHSIG = 1) — the
    # doctor killed with SIGKILL can stop nobody, and the ranks follow us the same way (#40 item 10).
    parent = os.getppid()
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except Exception:
        return
    if os.getppid() != parent:  # it died before we asked
        os._exit(1)


die_with_parent()
t0 = time.monotonic()
deadline = t0 + cfg["budget"]
COLLECTIVE = ("rendezvous", "allreduce")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


ONE_NODE = not cfg.get("global_world")  # fleet --compute gives every node the global world and the first node's address
port = cfg.get("master_port") or (0 if ONE_NODE else free_port())
store_dir = tempfile.mkdtemp(prefix="ascend-doctor-rendezvous-") if ONE_NODE else None  # 0700
events = queue.Queue()
ranks = []


def reader(r, name, stream):
    for raw in iter(stream.readline, b""):
        events.put((r, name, raw.decode("utf-8", "replace").rstrip("\n")))
    events.put((r, name, None))


for r in range(cfg["world"]):
    env = dict(os.environ)
    env.update(cfg.get("env") or {})
    order = {k: v for k, v in cfg.items() if k not in ("env", "budget", "rank_offset", "global_world")}
    rank, world = cfg.get("rank_offset", 0) + r, cfg.get("global_world") or cfg["world"]
    order.update(rank=rank, local_rank=r, world=world, master_port=port)
    if store_dir:
        order["store_file"] = os.path.join(store_dir, "store")
        if cfg["backend"] == "gloo":
            env["GLOO_SOCKET_IFNAME"] = "lo"
    env["ASCEND_DOCTOR_COMPUTE"] = json.dumps(order)
    env["ASCEND_DOCTOR_LAUNCHER_PID"] = str(os.getpid())
    env.update(RANK=str(rank), LOCAL_RANK=str(r), WORLD_SIZE=str(world))
    now = time.monotonic()
    rec = {"rank": r, "pid": None, "stage": None, "stage_since": now, "steps": [], "returncode": None,
           "signal": None, "stopped": None, "stderr": collections.deque(maxlen=40), "eof": 0, "started": now}
    try:
        proc = subprocess.Popen([sys.executable, "-c", RANK_SCRIPT], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    except OSError as exc:
        rec.update(returncode=-1, start_error=str(exc), eof=2, ended=now)
        ranks.append((rec, None))
        continue
    rec["pid"] = proc.pid
    ranks.append((rec, proc))
    for name, stream in (("out", proc.stdout), ("err", proc.stderr)):
        threading.Thread(target=reader, args=(r, name, stream), daemon=True).start()


def handle(r, name, line):
    rec = ranks[r][0]
    if line is None:
        rec["eof"] += 1
    elif name == "err":
        rec["stderr"].append(line[:600])
    elif line.startswith("ASCEND_DOCTOR_STAGE "):
        rec["stage"], rec["stage_since"] = line.split(" ", 1)[1].strip(), time.monotonic()
    elif line.startswith("ASCEND_DOCTOR_STEP "):
        try:
            rec["steps"].append(json.loads(line.split(" ", 1)[1]))
        except ValueError:
            rec["stderr"].append("unreadable step line: " + line[:300])


def stop(rec, proc, why):
    if proc is not None and proc.poll() is None:
        try:
            proc.kill()
        except OSError:
            pass
        rec["stopped"] = why


def settle(rec, proc):
    if proc is None or rec["returncode"] is not None or proc.poll() is None:
        return
    rc = proc.returncode
    rec["returncode"], rec["ended"] = rc, time.monotonic()
    if rc < 0:
        try:
            rec["signal"] = signal.Signals(-rc).name
        except ValueError:
            rec["signal"] = "signal %d" % -rc


grace, ctimeout = cfg["grace"], cfg["collective_timeout"]
while True:
    try:
        handle(*events.get(timeout=0.1))
        while True:
            handle(*events.get_nowait())
    except queue.Empty:
        pass
    now = time.monotonic()
    for rec, proc in ranks:
        settle(rec, proc)
    # alive is what settle saw: a second poll here could see an exit settle missed, and the loop would end with that
    # rank's exit code never read
    alive = [(rec, proc) for rec, proc in ranks if proc is not None and rec["returncode"] is None]
    if not alive and all(rec["eof"] >= 2 for rec, _ in ranks):
        break
    if not alive and now > deadline + grace:  # a grandchild holds a pipe open: stop reading
        break
    ended = [rec for rec, proc in ranks if rec["returncode"] is not None and rec["stage"] != "done"]
    gone_early = [rec for rec in ended if rec["stage"] not in COLLECTIVE]
    for rec, proc in alive:
        waited = now - rec["stage_since"]
        if now >= deadline:
            stop(rec, proc, "budget")
        elif rec["stage"] in COLLECTIVE and gone_early and now - min(e["ended"] for e in gone_early) >= grace:
            stop(rec, proc, "peer-gone")
        elif rec["stage"] in COLLECTIVE and waited >= ctimeout + grace:
            stop(rec, proc, "collective-timeout")

out = {"world": cfg["world"], "global_world": cfg.get("global_world") or cfg["world"], "device": cfg["device"],
       "backend": cfg["backend"], "master_port": port, "python": sys.executable, "budget": cfg["budget"],
       "seconds": round(time.monotonic() - t0, 3), "ranks": []}
now = time.monotonic()
for rec, proc in ranks:
    if proc is not None and proc.poll() is None:
        stop(rec, proc, "budget")
        proc.wait()
    settle(rec, proc)
    out["ranks"].append({
        "rank": rec["rank"] + cfg.get("rank_offset", 0), "pid": rec["pid"], "stage": rec["stage"],
        "steps": rec["steps"],
        "returncode": rec["returncode"], "signal": rec["signal"], "stopped": rec["stopped"],
        "start_error": rec.get("start_error"), "stderr_tail": "\n".join(rec["stderr"]),
        "stage_seconds": round(rec.get("ended", now) - rec["stage_since"], 3),
        "seconds": round(rec.get("ended", now) - rec["started"], 3)})
if store_dir:
    shutil.rmtree(store_dir, ignore_errors=True)
print("ASCEND_DOCTOR_COMPUTE " + json.dumps(out, default=str), flush=True)
'''

LAUNCHER_SCRIPT = _LAUNCHER.replace("__RANK_SCRIPT__", repr(RANK_SCRIPT))


def launcher_argv(python: str, config: dict) -> list[str]:
    """The command the compute probe runs (and a snapshot records): the launcher and its orders as JSON."""
    return [python, "-c", LAUNCHER_SCRIPT, json.dumps(config, sort_keys=True, separators=(",", ":"))]
