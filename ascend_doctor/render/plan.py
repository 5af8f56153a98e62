"""The plan for a terminal (wrapped by cells) or as markdown: decision, memory table with inputs, serve command."""

from __future__ import annotations

from typing import Any, Optional

from rich.cells import cell_len
from rich.text import Text

from ascend_doctor.deploy.arch import describe
from ascend_doctor.deploy.container import shell
from ascend_doctor.deploy.plan import Plan, gib
from ascend_doctor.deploy.report import PlanReport
from ascend_doctor.i18n import shown, tr
from ascend_doctor.render.console import make_console
from ascend_doctor.render.wrap import wrap
from ascend_doctor.text.redact import redact_values


def _lines(doc: PlanReport) -> list[tuple[str, str, str]]:
    """(style, head, body) rows, the same for both renderings."""
    w, want, chip, p, serve = doc.model.weights, doc.want, doc.chip, doc.plan, doc.serve
    rows = [("bold", tr("model:") + " ", f"{doc.model.path} — {shown(describe(doc.model.architecture))}"),
            ("", tr("weights:") + " ", f"{gib(w.total_bytes)} ({shown(w.source)})"),
            ("", tr("target:") + " ", tr("{ranks} × {chip} ({family}) on {nodes} node(s), --gpu-memory-utilization "
                                         "{gmu}, {n} request(s) at once", ranks=want.ranks, chip=chip.id,
                                         family=chip.family, nodes=want.nodes, gmu=f"{want.gmu:g}",
                                         n=want.concurrency))]
    if p.unknown:
        rows.append(("yellow", tr("cannot size the KV cache:") + " ", shown(p.unknown)))
    for note in p.notes:
        rows.append(("yellow", tr("note:") + " ", shown(note)))
    c = p.chosen
    if c is None:
        rows.append(("bold red", tr("verdict:") + " ", tr("no layout fits on {n} rank(s)", n=want.ranks)))
        for cand in p.candidates:
            rows.append(("", f"  {cand.layout.label()}: ", shown(cand.why) or tr("fits")))
        return rows + _alternatives(p)
    decided = tr("{layout} on {ranks} rank(s), --max-model-len {max_len}", layout=c.layout.label(),
                 ranks=c.layout.ranks, max_len=c.max_len)
    if p.verdict == "unknown":
        rows.append(("bold yellow", tr("verdict:") + " ", tr("unknown: the weights fit {decided}, but the KV cache "
                                                             "cannot be sized", decided=decided)))
    else:
        rows.append(("bold green", tr("verdict:") + " ", decided))
    if doc.replicas > 1:
        rows.append(("", "  ", tr("{n} such replicas fit the {ranks} ranks (--data-parallel-size or separate "
                                  "servers)", n=doc.replicas, ranks=want.ranks)))
    b = c.budget
    rows.append(("bold", tr("memory per rank:"), ""))
    mark = " " + tr("(estimate)") if b.visible.estimate else ""
    rows.append(("", f"  {shown(b.visible.name)}: ", f"{gib(b.visible.bytes)}{mark} — {shown(b.visible.inputs)}"))
    rows.append(("", f"  × {b.gmu:g} = ", gib(b.requested)))
    for t in b.terms:
        mark = " " + tr("(estimate)") if t.estimate else ""
        rows.append(("", f"  − {shown(t.name)}: ", f"{gib(t.bytes)}{mark} — {shown(t.inputs)}"))
    rows.append(("bold", "  = " + tr("KV cache:") + " ", gib(b.kv_bytes)))
    if c.kv.unknown:
        rows.append(("yellow", "  ", shown(c.kv.unknown)))
    else:
        rows.append(("", "  " + tr("per token:") + " ", f"{c.kv.bytes_per_token} B — {shown(c.kv.formula)}"))
        cap = c.capacity
        rows.append(("", "  " + tr("holds:") + " ", tr("{tokens} tokens ({blocks} blocks of {block}); {conc} "
                                                       "request(s) of {max_len} tokens at once",
                                                       tokens=cap.tokens, blocks=cap.num_blocks, block=cap.block,
                                                       conc=f"{cap.concurrency:.2f}", max_len=c.max_len)))
    rows.append(("bold", tr("serve:") + " ", serve.shell()))
    if serve.docker:
        rows.append(("", tr("container:") + " ", shell(serve.docker + serve.argv)))
    for why in serve.why:
        rows.append(("dim", "  ", shown(why)))
    rel = doc.release
    if rel:
        rows.append(("bold", tr("install:") + " ", tr("vllm-ascend {version} (vLLM {vllm}, CANN {cann}, torch_npu "
                                                      "{torch_npu}, Python {python}); image {image}",
                                                      version=rel.vllm_ascend, vllm=rel.vllm, cann=rel.cann,
                                                      torch_npu=rel.torch_npu, python=rel.python, image=rel.image)))
        rows.append(("dim", "  ", rel.pins))
        if rel.driver_note:
            rows.append(("dim", "  " + tr("driver:") + " ", shown(rel.driver_note)))
        for why in rel.passed_over:
            rows.append(("dim", "  " + tr("not chosen:") + " ", shown(why)))
    others = [x for x in p.candidates if x is not c]
    for cand in others:
        rows.append(("dim", f"  {cand.layout.label()}: ", shown(cand.why) or tr("fits")))
    for rule in p.rejected:
        rows.append(("dim", "  " + tr("refused:") + " ", shown(rule)))
    return rows


def _alternatives(p: Plan) -> list[tuple[str, str, str]]:
    short = [c for c in p.candidates if c.budget.kv_bytes <= 0]
    rows = []
    if short:
        need = min(-c.budget.kv_bytes for c in short)
        rows.append(("bold", tr("short by:") + " ", tr("{gib} per rank on the best layout", gib=gib(need))))
    for alt in p.alternatives:
        rows.append(("bold", tr("would fit:") + " ", shown(alt)))
    if not p.alternatives:
        rows.append(("bold", tr("would fit:") + " ", tr("nothing the plan tried (more NPUs up to 256, a W8A8 "
                                                          "checkpoint, a shorter context)")))
    return rows


def render_plan(doc: PlanReport, markdown: bool = False, file: Optional[Any] = None) -> None:
    # Secrets by their shape only (a token in a model path): `name: value` masking would eat "tokens: 4096".
    rows = [(style, head, redact_values(body)) for style, head, body in _lines(doc)]
    if markdown:
        import click

        out = ["## ascend-doctor plan", ""]
        for _style, head, body in rows:
            text = (head + body).rstrip()
            out.append(f"    {text}" if head.startswith("  ") else f"- {text}")
        click.echo("\n".join(out), file=file)
        return
    con = make_console(file)
    width = max(con.width, 60)
    for style, head, body in rows:
        lines = wrap(body, width, initial_indent=head, subsequent_indent=" " * min(cell_len(head), 12)) or [head]
        for line in lines:
            con.print(Text(line, style=style), soft_wrap=True)
