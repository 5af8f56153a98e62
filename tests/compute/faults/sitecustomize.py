"""Fault injection for the compute smoke tests, loaded by Python at start-up (a wrapper interpreter puts this folder on
PYTHONPATH). It acts only in a compute rank (ASCEND_DOCTOR_COMPUTE is set) whose RANK is the one named in
ASCEND_DOCTOR_TEST_FAULT=<kind>:<rank>, and only through torch's public functions, so the doctor's own child code runs
unchanged:

- slow:     torch.matmul computes every product three times (a rank at a third of its peers' speed);
- wrong:    torch.matmul returns its product off by 5% (a device that computes wrong without failing);
- hang:     torch.distributed.all_reduce never returns;
- crash:    torch.distributed.all_reduce kills the process with SIGSEGV (faulthandler prints the stack first);
- missing:  the rank ends before it reports anything, as a process that never started would look.
"""

import os

_spec = os.environ.get("ASCEND_DOCTOR_TEST_FAULT", "")
_kind, _, _rank = _spec.partition(":")
if _spec and "ASCEND_DOCTOR_COMPUTE" in os.environ and os.environ.get("RANK") == _rank:
    if _kind == "missing":
        os._exit(0)
    import signal
    import time

    import torch
    import torch.distributed as dist

    if _kind == "slow":
        _matmul = torch.matmul

        def _slow_matmul(*args, **kwargs):
            _matmul(*args, **kwargs)
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
    elif _kind == "crash":
        def _crash(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGSEGV)

        dist.all_reduce = _crash
