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
    if not serve.nodes:  # a multi-node plan: only the per-node commands can start
        rows.append(("bold", tr("serve:") + " ", serve.shell()))
        if serve.docker:
            rows.append(("", tr("container:") + " ", shell(serve.docker + serve.argv)))
    for n in serve.nodes:
        head = tr("node {n} ({role}):", n=n.node, role=tr(n.role)) + " "
        for pre in n.before:
            rows.append(("bold", head, shell(pre)))
            head = "  "
        if n.argv:
            rows.append(("bold", head, n.shell()))
        if n.docker:
            rows.append(("", "  " + tr("container:") + " ", shell(n.docker + (n.argv or ["bash"]))))
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


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _heading(label: str) -> str:
    text = label.rstrip(":：").strip()
    return text[:1].upper() + text[1:]


def _markdown(doc: PlanReport) -> str:
    """The plan as GitHub Markdown: the decision as a list, the memory per rank as a table, commands in code
    blocks (a plan pasted into an issue or a runbook reads as one)."""
    w, want, chip, p, serve = doc.model.weights, doc.want, doc.chip, doc.plan, doc.serve
    out = ["## ascend-doctor plan", "",
           f"- **{tr('model:')}** `{doc.model.path}` — {shown(describe(doc.model.architecture))}",
           f"- **{tr('weights:')}** {gib(w.total_bytes)} ({shown(w.source)})",
           f"- **{tr('target:')}** " + tr("{ranks} × {chip} ({family}) on {nodes} node(s), --gpu-memory-utilization "
                                         "{gmu}, {n} request(s) at once", ranks=want.ranks, chip=chip.id,
                                         family=chip.family, nodes=want.nodes, gmu=f"{want.gmu:g}",
                                         n=want.concurrency)]
    if p.unknown:
        out.append(f"- **{tr('cannot size the KV cache:')}** {shown(p.unknown)}")
    out += [f"- **{tr('note:')}** {shown(n)}" for n in p.notes]
    c = p.chosen
    if c is None:
        out.append(f"- **{tr('verdict:')}** " + tr("no layout fits on {n} rank(s)", n=want.ranks))
        out += [f"  - {cand.layout.label()}: {shown(cand.why) or tr('fits')}" for cand in p.candidates]
        out += [f"- **{head.strip()}** {body}" for _s, head, body in _alternatives(p)]
        return "\n".join(out) + "\n"
    decided = tr("{layout} on {ranks} rank(s), --max-model-len {max_len}", layout=c.layout.label(),
                 ranks=c.layout.ranks, max_len=c.max_len)
    out.append(f"- **{tr('verdict:')}** " + (tr("unknown: the weights fit {decided}, but the KV cache cannot be sized",
                                                 decided=decided) if p.verdict == "unknown" else decided))
    if doc.replicas > 1:
        out.append("- " + tr("{n} such replicas fit the {ranks} ranks (--data-parallel-size or separate servers)",
                             n=doc.replicas, ranks=want.ranks))
    b = c.budget
    out += ["", f"### {_heading(tr('memory per rank:'))}", "", "| | GiB | |", "|---|---:|---|",
            f"| {_cell(shown(b.visible.name))} | {gib(b.visible.bytes)} | {_cell(shown(b.visible.inputs))} |",
            f"| × {b.gmu:g} | {gib(b.requested)} | |"]
    out += [f"| − {_cell(shown(t.name))} | {gib(t.bytes)}{' ' + tr('(estimate)') if t.estimate else ''} | "
            f"{_cell(shown(t.inputs))} |" for t in b.terms]
    out.append(f"| **= {_cell(tr('KV cache:').rstrip(':：'))}** | **{gib(b.kv_bytes)}** | |")
    out.append("")
    if c.kv.unknown:
        out.append(f"- {shown(c.kv.unknown)}")
    else:
        cap = c.capacity
        out.append(f"- **{tr('per token:')}** {c.kv.bytes_per_token} B — {shown(c.kv.formula)}")
        out.append(f"- **{tr('holds:')}** " + tr("{tokens} tokens ({blocks} blocks of {block}); {conc} request(s) of "
                                                 "{max_len} tokens at once", tokens=cap.tokens,
                                                 blocks=cap.num_blocks, block=cap.block,
                                                 conc=f"{cap.concurrency:.2f}", max_len=c.max_len))
    out += ["", f"### {_heading(tr('serve:'))}"]
    if not serve.nodes:
        out += ["", "```bash", serve.shell(), "```"]
        if serve.docker:
            out += ["", f"{tr('container:')}", "", "```bash", shell(serve.docker + serve.argv), "```"]
    for n in serve.nodes:
        out += ["", "#### " + tr("node {n} ({role}):", n=n.node, role=tr(n.role)).rstrip(":："), "", "```bash"]
        out += [shell(pre) for pre in n.before] + ([n.shell()] if n.argv else []) + ["```"]
        if n.docker:
            out += ["", "```bash", shell(n.docker + (n.argv or ["bash"])), "```"]
    out += [""] + [f"- {shown(why)}" for why in serve.why]
    rel = doc.release
    if rel:
        out += ["", f"### {_heading(tr('install:'))}", "",
                "- " + tr("vllm-ascend {version} (vLLM {vllm}, CANN {cann}, torch_npu {torch_npu}, Python {python}); "
                          "image {image}", version=rel.vllm_ascend, vllm=rel.vllm, cann=rel.cann,
                          torch_npu=rel.torch_npu, python=rel.python, image=rel.image), "", "```text", rel.pins,
                "```"]
        if rel.driver_note:
            out.append(f"- **{tr('driver:')}** {shown(rel.driver_note)}")
        out += [f"- **{tr('not chosen:')}** {shown(why)}" for why in rel.passed_over]
    others = [f"- {x.layout.label()}: {shown(x.why) or tr('fits')}" for x in p.candidates if x is not c] + [
        f"- **{tr('refused:')}** {shown(rule)}" for rule in p.rejected]
    if others:
        out += [""] + others
    return "\n".join(out) + "\n"


def render_plan(doc: PlanReport, markdown: bool = False, file: Optional[Any] = None) -> None:
    # Secrets by their shape only (a token in a model path): `name: value` masking would eat "tokens: 4096".
    rows = [(style, head, redact_values(body)) for style, head, body in _lines(doc)]
    if markdown:
        import click

        click.echo(redact_values(_markdown(doc)), file=file)
        return
    con = make_console(file)
    width = max(con.width, 60)
    for style, head, body in rows:
        lines = wrap(body, width, initial_indent=head, subsequent_indent=" " * min(cell_len(head), 12)) or [head]
        for line in lines:
            con.print(Text(line, style=style), soft_wrap=True)
