"""Fault injection for the compute smoke tests, loaded by Python at start-up (a wrapper interpreter puts this folder on
PYTHONPATH). It acts only in a compute rank (ASCEND_DOCTOR_COMPUTE is set) whose RANK is the one named in
ASCEND_DOCTOR_TEST_FAULT=<kind>:<rank>, and only through torch's public functions, so the doctor's own child code runs
unchanged:

- slow:     torch.matmul computes every product ten times (a rank at a tenth of its peers' speed);
- wrong:    torch.matmul returns its product off by 5% (a device that computes wrong without failing);
- hang:     torch.distributed.all_reduce never returns;
- crash:    torch.distributed.all_reduce kills the process with SIGSEGV (faulthandler prints the stack first);
- missing:  the rank ends before it reports anything, as a process that never started would look;
- listen:   (rank `*`: every rank) before the all-reduce, append this process's listening TCP sockets, as
            `rank address:port` lines, to the file ASCEND_DOCTOR_TEST_LISTEN_LOG names — then all-reduce as usual.
"""

import os

_spec = os.environ.get("ASCEND_DOCTOR_TEST_FAULT", "")
_kind, _, _rank = _spec.partition(":")


def _listening() -> list:
    """This process's listening TCP sockets (its socket inodes in /proc/self/fd, matched in /proc/net/tcp{,6})."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            f = row.split()
            if len(f) > 9 and f[3] == "0A" and f[9] in inodes:  # 0A: LISTEN
                addr, port = f[1].split(":")
                out.append(f"{addr}:{int(port, 16)}")
    return out


if _spec and "ASCEND_DOCTOR_COMPUTE" in os.environ and _rank in (os.environ.get("RANK"), "*"):
    if _kind == "missing":
        os._exit(0)
    import signal
    import time

    import torch
    import torch.distributed as dist

    if _kind == "slow":
        _matmul = torch.matmul

        def _slow_matmul(*args, **kwargs):
            for _ in range(9):
                _matmul(*args, **kwargs)
            return _matmul(*args, **kwargs)

        torch.matmul = _slow_matmul
    elif _kind == "wrong":
        _matmul = torch.matmul

        def _wrong_matmul(*args, **kwargs):
            return _matmul(*args, **kwargs) * 1.05

        torch.matmul = _wrong_matmul
    elif _kind == "hang":
        def _hang(*args, **kwargs):
            while True:
                time.sleep(60)

        dist.all_reduce = _hang
    elif _kind == "listen":
        _all_reduce = dist.all_reduce

        def _recording(*args, **kwargs):
            with open(os.environ["ASCEND_DOCTOR_TEST_LISTEN_LOG"], "a") as fh:
                for where in _listening():
                    fh.write(f"{os.environ['RANK']} {where}\n")
            return _all_reduce(*args, **kwargs)

        dist.all_reduce = _recording
    elif _kind == "crash":
        def _crash(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGSEGV)

        dist.all_reduce = _crash
