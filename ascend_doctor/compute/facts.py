"""The `npu_compute` fact: what each rank of the compute smoke did, typed, and what its ending means.

The launcher reports raw endings (exit code, signal, "stopped by the launcher because …", the last stage announced);
`RankRun.ending()` turns them into the words a finding uses. The distinction that matters in a collective: a rank
that raised while waiting (gloo: "Timed out waiting …", "Connection closed by peer") is a victim, even when it then
died by a signal on its way out (gloo's teardown with a peer still hung can abort: "terminate called after throwing an
instance of 'gloo::EnforceNotMet'"); a rank that said nothing and had to be stopped in the all-reduce while its peers
raised is the one that hung.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pydantic import Field

from ascend_doctor.core.model import Model

_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt)\b:")
COLLECTIVE_STAGES = ("rendezvous", "allreduce")


class Step(Model):
    """One `ASCEND_DOCTOR_STEP` line; the fields each step kind adds are in `data`."""

    step: str
    ok: Optional[bool] = None
    error: Optional[str] = None
    data: dict[str, Any] = Field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)


class RankRun(Model):
    rank: int
    pid: Optional[int] = None
    stage: Optional[str] = Field(None, description="the last stage it announced (import, device, memory, "
                                                   "matmul:<dtype>, op:<name>, rendezvous, allreduce, done)")
    steps: list[Step] = Field(default_factory=list)
    returncode: Optional[int] = None
    signal: Optional[str] = None
    stopped: Optional[str] = Field(None, description="why the launcher killed it: budget | peer-gone | "
                                                     "collective-timeout")
    start_error: Optional[str] = None
    stderr_tail: str = ""
    stage_seconds: Optional[float] = None
    seconds: Optional[float] = None

    def step(self, name: str) -> Optional[Step]:
        return next((s for s in self.steps if s.step == name), None)

    def steps_of(self, name: str) -> list[Step]:
        return [s for s in self.steps if s.step == name]

    @property
    def stage_kind(self) -> str:
        return (self.stage or "").split(":", 1)[0]

    @property
    def done(self) -> bool:
        return self.stage == "done" and self.returncode == 0 and not self.stopped

    @property
    def raised_in_collective(self) -> bool:
        """It reported an error from the rendezvous or the all-reduce it was in (a wait that failed)."""
        step = self.step(self.stage_kind) if self.stage_kind in COLLECTIVE_STAGES else None
        return step is not None and bool(step.error)

    def last_error(self, limit: int = 400) -> Optional[str]:
        """The error it reported (on one line, cut at `limit`), else the last line of its stderr."""
        text = None
        for s in reversed(self.steps):
            if s.error:
                text = s.error
                break
        if text is None and self.returncode not in (0, None) and not self.signal:
            tail = [line.strip() for line in self.stderr_tail.splitlines() if line.strip()]
            # The exception line, not what a library logged after it (torch_npu adds "[ERROR] … ERR00100 …").
            raised = [line for line in tail if _EXCEPTION_LINE.match(line)]
            text = raised[-1] if raised else (tail[-1] if tail else None)
        if text is None:
            return None
        flat = " ".join(text.split())  # gloo puts its message on a second line: "RuntimeError:\n[…] Timed out …"
        return flat if len(flat) <= limit else flat[:limit] + " …"

    def ending(self) -> str:
        """done | missing | crashed | error | hung | stopped | exited — see `ComputeFact.hung_ranks` for `hung`."""
        if self.done:
            return "done"
        if self.start_error or (not self.steps and self.stage is None):
            return "missing"
        if self.stopped:
            return "stopped"
        if self.signal:
            return "crashed"
        if self.returncode not in (0, None):
            return "error"
        return "exited"


class ComputeFact(Model):
    """The compute smoke of one host: how it was run and every rank's record."""

    ran: bool
    skipped: Optional[str] = Field(None, description="why it did not run: no-torch | no-torch-npu (NPUs present, "
                                                      "torch_npu missing) | npus-busy | no-count | not-recorded "
                                                      "(a snapshot)")
    busy: list[str] = Field(default_factory=list, description="npus-busy: the processes npu-smi shows")
    python: str = ""
    device: str = Field("", description="npu | cpu: which path ran (cpu: no NPU was tested)")
    backend: str = ""
    chip: Optional[str] = Field(None, description="the chip npu-smi names (NPU path)")
    dtypes: list[str] = Field(default_factory=list)
    world: int = Field(0, description="ranks on this host")
    global_world: int = Field(0, description="ranks in the all-reduce (more than `world` across a fleet's nodes)")
    budget: float = 0.0
    collective_timeout: float = 0.0
    seconds: Optional[float] = None
    ranks: list[RankRun] = Field(default_factory=list)
    # The launcher itself: set when it printed no record (it crashed, or the doctor's deadline killed it).
    launcher_error: Optional[str] = None
    launcher_stderr: str = ""
    config: dict[str, Any] = Field(default_factory=dict)

    @property
    def all_ranks(self) -> int:
        return self.global_world or self.world

    @property
    def cpu_path(self) -> bool:
        return self.device == "cpu"

    def diagnosis(self) -> tuple[list[tuple[str, "RankRun"]], list["RankRun"]]:
        """([(kind, rank)] that ended the run — missing, crashed, hung, error, exited, stopped — and [ranks that
        only waited for them]: stopped because the collective could no longer form, or raised in the collective
        while a culprit was there). With no culprit, every rank that failed is one."""
        hung = set(self.hung_ranks())
        failed = [r for r in self.ranks if not r.done]
        kinds = {r.rank: ("hung" if r.rank in hung else r.ending()) for r in failed}
        for r in failed:
            if kinds[r.rank] == "crashed" and r.raised_in_collective:
                kinds[r.rank] = "error"  # its wait failed first; the signal came while it shut down
        blamed = [r for r in failed if kinds[r.rank] in ("missing", "crashed", "hung")
                  or (kinds[r.rank] in ("error", "exited") and r.stage_kind not in COLLECTIVE_STAGES)]
        victims = []
        if blamed:
            victims = [r for r in failed if r not in blamed and (r.stopped == "peer-gone" or (
                kinds[r.rank] in ("error", "stopped") and r.stage_kind in COLLECTIVE_STAGES))]
        culprits = [(kinds[r.rank], r) for r in failed if r not in victims]
        return culprits, victims

    def hung_ranks(self) -> list[int]:
        """Ranks stopped in the collective without a word while at least one peer raised waiting for them."""
        silent = [r for r in self.ranks if r.stopped and r.stage_kind in COLLECTIVE_STAGES
                  and not any(s.error for s in r.steps_of(r.stage_kind))]
        raised = [r for r in self.ranks if r.raised_in_collective]
        return [r.rank for r in silent] if raised and len(silent) < len(self.ranks) else []


def parse_record(data: dict[str, Any]) -> list[RankRun]:
    """The launcher's `ranks` list, typed (steps split into their common and their own fields)."""
    ranks = []
    for raw in data.get("ranks") or []:
        if not isinstance(raw, dict) or not isinstance(raw.get("rank"), int):
            continue
        steps = []
        for s in raw.get("steps") or []:
            if isinstance(s, dict) and isinstance(s.get("step"), str):
                extra = {k: v for k, v in s.items() if k not in ("step", "ok", "error")}
                steps.append(Step(step=s["step"], ok=s.get("ok") if isinstance(s.get("ok"), bool) else None,
                                  error=s.get("error") if isinstance(s.get("error"), str) else None, data=extra))
        fields = {k: v for k, v in raw.items() if k in RankRun.model_fields and k != "steps"}
        ranks.append(RankRun.model_validate({**fields, "steps": steps}))
    return sorted(ranks, key=lambda r: r.rank)
