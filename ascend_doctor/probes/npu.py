"""NPU facts from `npu-smi`: the device table (`npu_smi`), per-card health (`npu_health`) and topology (`npu_topo`).

A missing `npu-smi` is itself the answer to "is there an Ascend driver here" (containers often lack the
`-v /usr/local/bin/npu-smi` mount), so `npu_smi` records it instead of giving up; a *timed-out* npu-smi tells
nothing (a wedged driver and a slow one look the same), so that fact is unavailable.
"""

from __future__ import annotations

import time
from typing import Optional

from pydantic import Field

from ascend_doctor.core.concurrency import NPU_SMI_IN_FLIGHT, bounded_map
from ascend_doctor.core.errors import FactUnavailable, ParseError
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import Localized, T
from ascend_doctor.parsers.npu_smi import NpuSmiInfo, find_npu_smi_error, parse_npu_smi_info
from ascend_doctor.parsers.npu_smi_detail import NpuHealth, NpuTopo, parse_npu_smi_health, parse_npu_smi_topo
from ascend_doctor.probes import probe
from ascend_doctor.seam.host import NOT_FOUND, TIMEOUT, CommandResult

NPU_SMI = "npu-smi"
# Tried in order when `npu-smi` is not on PATH (non-login shells, systemd units): the driver installs it in
# /usr/local/sbin on some boards (Atlas 200I) and vllm-ascend's docker run mounts /usr/local/bin/npu-smi.
NPU_SMI_FALLBACKS = ("/usr/local/bin/npu-smi", "/usr/local/sbin/npu-smi")
STDERR_TAIL_LINES = 5


class CommandSummary(Model):
    """How one command went, without its full output (the parsed fact carries what matters)."""

    argv: list[str]
    returncode: Optional[int] = None
    error: Optional[str] = Field(None, description="not_found | permission_denied | timeout | os_error | ...")
    error_message: str = ""
    stderr_tail: str = ""
    duration_s: float = 0.0
    why_not: Localized = Field("", description="One line: why it gave no usable output ('' when it did)")

    @classmethod
    def of(cls, r: CommandResult) -> "CommandSummary":
        tail = "\n".join(r.stderr.strip().splitlines()[-STDERR_TAIL_LINES:])
        return cls(argv=list(r.argv), returncode=r.returncode, error=r.error, error_message=r.error_message,
                   stderr_tail=tail, duration_s=r.duration_s,
                   why_not=r.why_not())  # a message: T() writes an undecodable byte as \\xff


class NpuSmiFact(Model):
    """`npu-smi info`: whether the tool exists, how the run went, and the parsed table or why there is none."""

    found: bool = Field(description="False when npu-smi is not installed / not mounted (no Ascend driver visible)")
    tool: str = Field(NPU_SMI, description="The npu-smi that answered (bare name, or a fallback absolute path)")
    command: CommandSummary
    info: Optional[NpuSmiInfo] = None
    parse_error: Optional[str] = None

    @property
    def usable(self) -> bool:
        """A table with at least one chip was read."""
        return self.info is not None and self.info.error is None and bool(self.info.chips)

    def reason(self) -> str:
        """One line: why there is no usable table ('' when there is)."""
        if not self.found:
            return T("npu-smi not found (no Ascend driver tools on PATH / not mounted into the container)")
        if self.info is not None and self.info.error is not None:
            code = f" (ret {self.info.error.code})" if self.info.error.code is not None else ""
            return T("npu-smi failed{code}: {message}", code=code, message=self.info.error.message)
        if self.parse_error:
            return T("could not read npu-smi output: {parse_error}", parse_error=self.parse_error)
        if self.command.why_not:
            return self.command.why_not
        if self.info is not None and not self.info.chips:
            return T("npu-smi listed no NPUs")
        return ""


def _output_text(r: CommandResult) -> str:
    """npu-smi prints its table on stdout, but a loader failure goes to stderr: parse what there is."""
    if r.stdout.strip():
        return r.stdout
    return r.stderr


@probe("npu_smi")
def npu_smi_probe(host, ctx) -> NpuSmiFact:
    """`npu-smi info`: the NPUs, their health, HBM and the processes on them."""
    r = host.run([NPU_SMI, "info"], timeout=ctx.options.probe_timeout)
    tool = NPU_SMI
    for path in NPU_SMI_FALLBACKS:
        if r.error != NOT_FOUND:
            break
        alt = host.run([path, "info"], timeout=ctx.options.probe_timeout)
        if alt.error != NOT_FOUND:
            r, tool = alt, path
    summary = CommandSummary.of(r)
    if r.error == NOT_FOUND:
        return NpuSmiFact(found=False, command=summary)
    if r.error == TIMEOUT:
        raise FactUnavailable("npu_smi", r.why_not() or "npu-smi info timed out")
    fact = NpuSmiFact(found=True, tool=tool, command=summary)
    if r.error is not None or r.crashed:  # permission denied / os error / killed: there, but gave no answer
        return fact
    try:
        fact.info = parse_npu_smi_info(_output_text(r))
    except ParseError as exc:
        err = find_npu_smi_error(r.stderr) if r.stderr.strip() else None
        if err is not None:
            fact.info = NpuSmiInfo(error=err)
        else:
            fact.parse_error = str(exc)
    return fact


# -t health ---------------------------------------------------------------------------------------------------------
class NpuHealthResult(Model):
    npu_id: int
    command: CommandSummary
    health: Optional[NpuHealth] = None
    parse_error: Optional[str] = None


class NpuHealthFact(Model):
    """`npu-smi info -t health -i N` for every NPU the table lists, a few at a time within the time budget."""

    results: list[NpuHealthResult] = Field(default_factory=list)
    skipped: list[int] = Field(default_factory=list, description="NPU ids not queried: the probe ran out of time")
    unanswered: list[int] = Field(default_factory=list, description="NPU ids asked but with no readable answer "
                                                                    "(timed out, failed, unparseable)")

    def by_npu(self) -> dict[int, NpuHealthResult]:
        return {r.npu_id: r for r in self.results}

    def not_read(self) -> list[int]:
        """NPU ids whose `-t health` detail was not looked at: never asked, or asked without an answer."""
        return sorted(set(self.skipped) | set(self.unanswered))

    def unhealthy(self) -> list[NpuHealthResult]:
        """Cards that answered with a Health Status other than OK."""
        return [r for r in self.results if r.health and r.health.health and r.health.health.upper() != "OK"]


def _usable(ctx, name: str) -> NpuSmiFact:
    fact = ctx.fact("npu_smi")  # FactUnavailable propagates: no table, no per-card questions
    if not fact.usable:
        raise FactUnavailable(name, fact.reason() or "npu-smi info gave no NPUs")
    return fact


class NpuFamilyFact(Model):
    """The chip families of this host (`ascend_doctor.knowledge.hardware.families`): from `npu-smi info` on a host;
    in a paste without that table, from the official image's chip suffix (`-310p`, `-a3`), whose build names the
    family the user runs it on."""

    families: dict[str, list[str]] = Field(description="family -> chip names ([] when only the family is known)")
    source: str = Field(description="what told the family: npu-smi info, or the image tag of a paste")


def family_of(smi: NpuSmiFact) -> NpuFamilyFact:
    """The `npu_family` fact of an `npu_smi` one (a host's probe, a paste's table); FactUnavailable with npu-smi's
    reason when it gave no table."""
    from ascend_doctor.knowledge.hardware import families

    fams = families(smi)
    if fams is None:
        raise FactUnavailable("npu_family", smi.reason() or T("npu-smi gave no chip table"))
    return NpuFamilyFact(families=fams, source="npu-smi info")


@probe("npu_family", reads=("npu_smi",))
def npu_family_probe(host, ctx) -> NpuFamilyFact:
    """The chip families npu-smi shows (nothing is run: the `npu_smi` fact is read)."""
    return family_of(ctx.fact("npu_smi"))


@probe("npu_health", reads=("npu_smi",))
def npu_health_probe(host, ctx) -> NpuHealthFact:
    """Every NPU's `-t health` detail, NPU_SMI_IN_FLIGHT at a time, as soon as the table says which NPUs exist."""
    deadline = time.monotonic() + ctx.options.probe_timeout * 0.8  # leave the engine time to collect a partial answer
    smi = _usable(ctx, "npu_health")
    out = NpuHealthFact()

    def ask(npu: int, until: float) -> NpuHealthResult:
        r = host.run([smi.tool, "info", "-t", "health", "-i", str(npu)], timeout=max(until - time.monotonic(), 0.05))
        res = NpuHealthResult(npu_id=npu, command=CommandSummary.of(r))
        if r.error is None:
            try:
                res.health = parse_npu_smi_health(_output_text(r))
                res.health.npu_id = npu
            except ParseError as exc:
                res.parse_error = str(exc)
        return res

    for o in bounded_map(ask, smi.info.npu_ids(), NPU_SMI_IN_FLIGHT, deadline):
        if o.error is not None:
            raise o.error
        if not o.started:
            out.skipped.append(o.item)
        elif o.result is None:
            out.unanswered.append(o.item)  # still waiting on npu-smi at the deadline
        else:
            out.results.append(o.result)
            if o.result.health is None:
                out.unanswered.append(o.item)
    return out


# -t topo -----------------------------------------------------------------------------------------------------------
class NpuTopoFact(Model):
    command: CommandSummary
    topo: Optional[NpuTopo] = None
    parse_error: Optional[str] = None


@probe("npu_topo", reads=("npu_smi",))
def npu_topo_probe(host, ctx) -> NpuTopoFact:
    """`npu-smi info -t topo`: how the NPUs are linked to each other."""
    smi = _usable(ctx, "npu_topo")
    r = host.run([smi.tool, "info", "-t", "topo"], timeout=ctx.options.probe_timeout)
    if r.error == TIMEOUT:
        raise FactUnavailable("npu_topo", r.why_not())
    fact = NpuTopoFact(command=CommandSummary.of(r))
    if r.error is not None:
        raise FactUnavailable("npu_topo", r.why_not())
    try:
        fact.topo = parse_npu_smi_topo(_output_text(r))
    except ParseError as exc:
        fact.parse_error = str(exc)
    return fact
