"""Run one of the doctor's probe scripts in a child of the serving interpreter and read what it printed.

The import probe and the platform probe share the protocol: the script prints `ASCEND_DOCTOR_STAGE <name>` before
each step (flushed, so a segfault in the next step still leaves how far it got) and one `<MARKER> {json}` line at the
end. A signal, a timeout and the last lines of stderr are facts too; only a child that could not start at all is
"unavailable".
"""

from __future__ import annotations

import signal
from typing import Any, Optional

from pydantic import Field

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.core.model import Model
from ascend_doctor.seam.host import TIMEOUT
from ascend_doctor.text.jsonread import loads


class ChildRun(Model):
    """What one probe child did: how far it got, how it ended, and its JSON answer (empty when it printed none)."""

    stage: Optional[str] = None
    data: dict[str, Any] = Field(default_factory=dict)
    returncode: Optional[int] = None
    signal: Optional[str] = None
    timed_out: bool = False
    stderr_tail: str = ""


def run_child(host, exe: str, script: str, *, timeout: float, marker: str, fact: str) -> ChildRun:
    """Run `exe -c script`; FactUnavailable (naming `fact`) only when the child could not run at all."""
    res = host.run([exe, "-c", script], timeout=timeout)
    if res.error and res.error != TIMEOUT:
        raise FactUnavailable(fact, res.why_not())
    run = ChildRun(returncode=res.returncode, timed_out=res.error == TIMEOUT,
                   stderr_tail="\n".join(res.stderr.strip().splitlines()[-25:]))
    if res.returncode is not None and res.returncode < 0:
        try:
            run.signal = signal.Signals(-res.returncode).name
        except ValueError:
            run.signal = f"signal {-res.returncode}"
    for line in res.stdout.splitlines():
        if line.startswith("ASCEND_DOCTOR_STAGE "):
            run.stage = line.split(" ", 1)[1].strip()
        elif line.startswith(marker + " "):
            try:
                data = loads(line.split(" ", 1)[1])
            except ValueError:
                continue
            if isinstance(data, dict):
                run.data = data
    return run
