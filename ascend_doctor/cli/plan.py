"""`ascend-doctor plan --model DIR --chip C --npus N`: what to deploy, sized to fit (#24).

Exit codes: 0 a layout fits, 1 none does (the report says what is short and the nearest alternatives), 2 usage or
input error (no such chip, unreadable model directory), 3 internal error.
"""

from __future__ import annotations

import os
import sys
from typing import Optional

import click

from ascend_doctor import __version__
from ascend_doctor.cli.i18n_click import DoctorCommand
from ascend_doctor.cli.options import FiniteRange
from ascend_doctor.core.errors import InputError
from ascend_doctor.i18n import T
from ascend_doctor.render.formats import choices

PLAN_EXIT_HELP = """\b
Exit codes:
  0    a layout fits: the report gives the serve command
  1    nothing fits the ranks given (the report says what is short), or whether the context fits cannot be
       established (a model whose KV cache this version cannot size)
  2    usage or input error (unknown chip, unreadable model directory)
  3    internal error of ascend-doctor itself
"""


def _release(m, family: str, arch, version: Optional[str], driver: Optional[str], parsers: dict[str, str],
             checkpoint=None):
    from ascend_doctor.deploy.release import choose_release

    if version and m.vllm_ascend_release(version) is None:
        raise InputError(T("--vllm-ascend {version}: not a release of the matrix (`ascend-doctor matrix show`)",
                           version=version))
    return choose_release(m, family, arch.architectures[0] if arch.architectures else None, version, driver,
                          parsers, checkpoint)


def _quantization(files) -> Optional[str]:
    """The --quantization the plan's command gives this checkpoint (deploy/command.py: `ascend` for msModelSlim)."""
    from ascend_doctor.deploy.command import QUANTIZED

    return "ascend" if files.weight_format in QUANTIZED else None


def _checkpoint_judge(knowledge, family: str, files):
    """Why a release cannot serve the checkpoint on this chip family (SERVE311's checkpoint rows that refuse or
    break, read as the plan's command serves it), or None: the release `plan` installs must take the weights it
    sizes."""
    from ascend_doctor.knowledge.release_rules import checkpoint_rules

    def judge(version: str):
        bad = [(r, says) for r, says in checkpoint_rules(knowledge.release_rules, version, family, files.config,
                                                         _quantization(files))
               if r.effect in ("refuses", "breaks")]
        return T("{rule}: {says}", rule=bad[0][0].id, says=bad[0][1]) if bad else None
    return judge


def _driver(replay: Optional[str]) -> str:
    """The NPU driver version installed on this host (or in the snapshot), for --keep-driver."""
    from ascend_doctor.cli.options import make_host
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.facts import FactStore

    st = FactStore(make_host(replay), RunOptions()).try_fact("stack")
    driver = st.stack.driver if st is not None else None
    if not driver:
        raise InputError(T("--keep-driver: no NPU driver version readable on {where}", where=replay or T("this host")))
    return driver


def _tool_choice(m, files):
    """The parsers from the model family and the chat template's own markup (the smoke's leak table reads it)."""
    from ascend_doctor.deploy.template import read_template
    from ascend_doctor.deploy.toolparser import choose_parsers
    from ascend_doctor.smoke.leaks import detect_leaks

    template = None
    if files.chat_template:
        found = detect_leaks(files.chat_template, field="template", matrix=m)
        markup = [(x.family, m.markup_families[x.family].tool_parser) for x in found]
        template = read_template(files.chat_template, files.chat_template_source, markup)
    return choose_parsers(m, files.arch.model_type, files.name, template)


def _model_files(knowledge, model: str, fmt: Optional[str]):
    """A local directory when there is one, else the catalogue's entry of that name."""
    from ascend_doctor.deploy.catalogue import catalogue_files, close_models, find_model
    from ascend_doctor.deploy.modeldir import read_model_dir

    if not os.path.exists(model):
        entry = find_model(model, knowledge.catalogue)
        if entry is not None:
            return catalogue_files(entry, fmt)
        close = close_models(model, knowledge.catalogue)
        if close:
            raise InputError(T("--model {path}: not a directory, and no catalogue model has that name; did you mean "
                               "{close}? (`ascend-doctor plan --list-models` lists them all)", path=model,
                               close=", ".join(close)))
    return read_model_dir(model, fmt)


def _planned_release(m, family: str, release: Optional[str]) -> Optional[str]:
    """The release the plan is for when none can be chosen to install: the one asked for, else the newest the matrix
    knows for the family."""
    return release or next((r.version for r in reversed(m.releases) if family in r.hardware), None)


def _context_cap(m, family: str, release: Optional[str]) -> tuple[Optional[int], str]:
    """(the longest context the hardware rules let a plan propose on `family`, the rule's id and words): the rules
    that want `--max-model-len` given above a length (HW-A2-001: the engine gets stuck above 65536 on A2)."""
    version = _planned_release(m, family, release)
    if version is None:
        return None, ""
    rules = [r for r in m.serve_rules_for(family, version, "required_flag")
             if r.flag == "--max-model-len" and r.above_model_len]
    if not rules:
        return None, ""
    r = min(rules, key=lambda x: x.above_model_len)
    return r.above_model_len, f"{r.id}: {r.says}"


def _list_models(knowledge) -> None:
    for m in knowledge.catalogue:
        click.echo(f"{m.id:40} " + ", ".join(f"{c.format} ({c.repo})" for c in m.checkpoints))


def _free_devices(smi) -> tuple[list[tuple[int, int]], list[str]]:
    """((the /dev/davinciN id, the logical id) of each chip npu-smi shows free, "NPU 0 chip 0: 61250 / 65536 MB" for
    the others): busy above BUSY_HBM_FRACTION, NPU103's threshold; /dev/davinciN is the chip's Phy-ID on A3, the NPU
    id elsewhere; the logical id (what ASCEND_RT_VISIBLE_DEVICES counts) is the chip's place in npu-smi's list
    (ascend_doctor.facts.scope)."""
    from ascend_doctor.knowledge.hardware import BUSY_HBM_FRACTION

    free, held = [], []
    for logical, c in enumerate(smi.info.chips):
        used, total = (c.hbm_used_mb, c.hbm_total_mb) if c.hbm_total_mb else (c.memory_used_mb, c.memory_total_mb)
        dev = c.phy_id if c.phy_id is not None else c.npu_id
        if total and used is not None and used / total > BUSY_HBM_FRACTION:
            held.append(f"NPU {c.npu_id} chip {c.chip_id} (/dev/davinci{dev}): {used} / {total} MB")
        else:
            free.append((dev, logical))
    return free, held


def _host_npus(replay: Optional[str]) -> tuple[str, int, list[tuple[int, int]], list[str], Optional[int]]:
    """(chip name, chip count, free (device, logical id)s, held chips, the smallest memory total of a free chip in
    MB) as npu-smi shows them on this host or in the snapshot; InputError when it shows none."""
    from ascend_doctor.cli.options import make_host
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.facts import FactStore

    host = make_host(replay)
    smi = FactStore(host, RunOptions()).try_fact("npu_smi")
    where = replay or T("this host")
    if smi is None or not smi.usable or not smi.info.chips:
        why = smi.reason() if smi is not None else T("the npu-smi probe gave nothing")
        raise InputError(T("no NPU seen on {where} ({why}): give --chip and --npus", where=where, why=why))
    names = sorted({c.name for c in smi.info.chips if c.name})
    if len(names) != 1:
        raise InputError(T("npu-smi on {where} shows {names}: give --chip", where=where,
                           names=", ".join(names) or T("no chip name")))
    free, held = _free_devices(smi)
    devs = {dev for dev, _logical in free}
    totals = [c.hbm_total_mb or c.memory_total_mb for c in smi.info.chips
              if (c.phy_id if c.phy_id is not None else c.npu_id) in devs]
    return names[0], len(smi.info.chips), free, held, min((t for t in totals if t), default=None)


@click.command("plan", cls=DoctorCommand, epilog=PLAN_EXIT_HELP)
@click.option("--model", "model_dir", metavar="DIR|NAME", help="The model's local directory "
              "(config.json, safetensors index or headers, msModelSlim quant_model_description.json), or a name "
              "from the shipped catalogue (--list-models).")
@click.option("--list-models", is_flag=True,
              help="List the catalogue's models and their documented checkpoints, then exit.")
@click.option("--matrix", "matrix", multiple=True, metavar="FILE", type=click.Path(exists=True, dir_okay=False),
              help="A table layered over the shipped one (the chip table, the model catalogue, the compatibility "
                   "matrix, …: the file's `table` key says which); repeatable.")
@click.option("--chip", metavar="NAME", help="910B1, 910B2, 910B3, 910B4, 910B4-1, A3 or 310P3 (as npu-smi names "
              "it). Default: the chips npu-smi shows on this host (or in --replay SNAPSHOT).")
@click.option("--npus", type=click.IntRange(min=1), metavar="N",
              help="vLLM ranks in all: NPUs, or dies on A3 (two per card). Default: the chips npu-smi shows.")
@click.option("--replay", metavar="SNAPSHOT", help="Take the chip and its count from a recorded host "
              "(`ascend-doctor collect`) instead of this one.")
@click.option("--nodes", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
              help="Machines the NPUs are spread over (--npus counts them all).")
@click.option("--max-model-len", type=click.IntRange(min=1), metavar="TOKENS",
              help="The context to plan for (default: the model's own, shortened if it does not fit).")
@click.option("--concurrency", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
              help="Requests of --max-model-len tokens the KV cache must hold at once.")
@click.option("--gpu-memory-utilization", "gmu", type=FiniteRange(min=0.05, max=1.0), default=0.9,
              show_default=True, help="The share of each NPU's memory vLLM may take (vLLM's option of that name).")
@click.option("--max-num-batched-tokens", "batched", type=click.IntRange(min=1), default=4096, show_default=True,
              help="Tokens one scheduler step processes (vLLM's --max-num-batched-tokens): sizes the activation "
                   "memory of the profile run.")
@click.option("--vllm-ascend", "release", metavar="X", help="Plan for this vllm-ascend release (default: the newest "
              "final release of the matrix for the chip that lists the model's architecture).")
@click.option("--keep-driver", is_flag=True, help="Only releases whose CANN runs on the NPU driver installed on this "
              "host (or in --replay SNAPSHOT).")
@click.option("--weights", "fmt", type=click.Choice(["bf16", "fp16", "w8a8", "w4a8", "fp8", "mxfp4"]),
              help="The checkpoint's weight format when the directory does not tell.")
@click.option("--format", "out_fmt", type=click.Choice(choices("plan")), default="console",
              show_default=True, help="console for a terminal, markdown for an issue or a runbook (tables and code "
                                      "blocks), json for a program.")
@click.option("-o", "--output", "output", default="-", metavar="FILE",
              help="Write the plan here (atomically) instead of stdout.")
def plan(model_dir, list_models, matrix, chip, npus, replay, nodes, max_model_len, concurrency, gmu, batched, release,
         keep_driver, fmt, out_fmt, output) -> None:
    """Plan a deployment: the parallel layout, the memory per rank term by term, the KV cache it leaves, the
    `vllm serve` command and the release to install — from the model's own files and the chip table."""
    from ascend_doctor.deploy.command import serve_plan
    from ascend_doctor.deploy.plan import Want, alternatives, make_plan, replicas
    from ascend_doctor.deploy.report import PlannedModel, PlanReport
    from ascend_doctor.deploy.weights import as_loaded
    from ascend_doctor.knowledge.door import Knowledge

    knowledge = Knowledge(matrix)
    knowledge.check()  # an invalid layer is an input error, before anything is planned
    if list_models:
        _list_models(knowledge)
        sys.exit(0)
    if not model_dir:
        raise InputError(T("--model DIR|NAME is required (or --list-models)"))
    c, npus, free, held = _target(knowledge.chips, chip, npus, replay, nodes)
    files = _model_files(knowledge, model_dir, fmt)
    if files.weight_format == "fp32":  # vLLM's `--dtype auto` loads a float32 checkpoint in 16 bits
        files.weights = files.weights.model_copy(update={
            "total_bytes": files.weights.total_bytes // 2, "expert_bytes": files.weights.expert_bytes // 2,
            "vocab_bytes": files.weights.vocab_bytes // 2,
            "source": T("{source}; float32 loaded as 16-bit (vLLM --dtype auto)", source=files.weights.source)})
    tools, parsers, driver, rel = _release_for(knowledge, c, files, release, keep_driver, replay)
    # the release the plan installs decides its context cap, a 310P's halving and a hybrid's page rule
    planned = rel.vllm_ascend if rel is not None else _planned_release(knowledge.matrix, c.family, release)
    files.weights, loaded = as_loaded(files.weights, files.arch, knowledge.release_rules, planned, c.family,
                                      files.config, quantization=_quantization(files))  # REL-B27-008: FP8 -> BF16
    cap, rule = _context_cap(knowledge.matrix, c.family, planned)
    want = Want(ranks=npus, nodes=nodes, max_len=max_model_len, concurrency=concurrency, gmu=gmu,
                batched_tokens=batched, dtype_bytes=2, max_len_cap=cap, max_len_cap_rule=rule,
                kv_halved_by=c.kv_halved_by(planned), vllm_ascend=planned, page_rules=knowledge.hybrid_pages,
                dsa_rules=knowledge.dsa_pages, reserve_rules=knowledge.runtime_reserve,
                hccl_rules=knowledge.hccl_groups)
    p = make_plan(files.arch, files.weights, c, want)
    p.notes.extend(_free_note(free, held) + ([loaded] if loaded else []))
    if p.verdict == "none":
        from ascend_doctor.deploy.weights import estimate

        fmt_now = files.weight_format or "bf16"
        w8a8 = estimate(files.arch, "w8a8") if fmt_now in ("bf16", "fp16", "fp32") else None
        p.alternatives = alternatives(files.arch, files.weights, c, want, w8a8)
    p.notes.extend(tools.notes)
    if files.chat_template_error:
        p.notes.append(T("the chat template was not read ({error}): the tool parser comes from the model family alone",
                         error=files.chat_template_error))
    if rel is None:
        from ascend_doctor.deploy.release import why_none

        p.notes.append(why_none(knowledge.matrix, c.family, files.arch.architectures[0] if files.arch.architectures
                                else None, driver, parsers, _checkpoint_judge(knowledge, c.family, files)))
    serve = (serve_plan(files.path, files.arch, p.chosen, want, c.family, files.weight_format, tools.tool_parser,
                        tools.reasoning_parser, remote_code=_needs_remote_code(knowledge.matrix, files.config, planned))
             if p.chosen is not None else None)
    if serve is not None:
        _commands(serve, p.chosen.layout, nodes, rel, c, free, files.path)
    report = PlanReport(tool_version=__version__, chip=c, want=want, plan=p, replicas=replicas(p, want),
                        serve=serve, release=rel, template=tools.template,
                        model=PlannedModel(path=files.path, name=files.name, architecture=files.arch,
                                           weights=files.weights, weight_format=files.weight_format),
                        exit_code=0 if p.verdict in ("fits", "shortened") else 1)
    _write(report, out_fmt, output)
    sys.exit(report.exit_code)


def _needs_remote_code(matrix, config: dict, release: Optional[str]) -> bool:
    """SERVE201's rule for the release planned: a config with its own code (`auto_map`) whose model_type no recorded
    transformers knows and the release's vLLM does not configure itself loads only with --trust-remote-code."""
    from ascend_doctor.deploy.arch import text_config

    if not isinstance(config.get("auto_map"), dict):
        return False
    mt = str(config.get("model_type") or text_config(config).get("model_type") or "")
    row = matrix.vllm_ascend_release(release) if release else None
    vllm_types = set()
    for v in (row.vllm if row is not None else []):
        vllm_types |= set(matrix.vllm_model_types(v) or ())
    return mt not in vllm_types and matrix.first_transformers_with(mt) is None


def _release_for(knowledge, c, files, release: Optional[str], keep_driver: bool, replay: Optional[str]):
    """(the tool choice, its parsers, the driver kept or None, the release to install or None): decided before the
    plan is sized, since the release's rules size it."""
    tools = _tool_choice(knowledge.matrix, files)
    parsers = {k: v for k, v in (("tool_parser", tools.tool_parser), ("reasoning_parser", tools.reasoning_parser))
               if v}
    driver = _driver(replay) if keep_driver else None
    return tools, parsers, driver, _release(knowledge.matrix, c.family, files.arch, release, driver, parsers,
                                            _checkpoint_judge(knowledge, c.family, files))


def _target(chips, chip: Optional[str], npus: Optional[int], replay: Optional[str], nodes: int):
    """(chip row, NPUs to plan for, free (device, logical id)s or None when no host was read, held chips): the flags,
    else what npu-smi shows on the host or in the snapshot, less the chips another job holds; the host's own chip at
    the memory npu-smi shows for it."""
    from ascend_doctor.deploy.chips import find_chip

    free, held, total, seen_chip = None, [], None, None
    if chip is None or npus is None or replay:
        seen_chip, _seen, free, held, total = _host_npus(replay)
        if not free:
            raise InputError(T("every NPU npu-smi shows on {where} is in use by another job: {held}",
                               where=replay or T("this host"), held="; ".join(held)))
        chip, npus = chip or seen_chip, npus or len(free) * nodes
    c = find_chip(chip, chips)
    if c is None:
        raise InputError(T("--chip {chip}: not in the chip table (known: {known})", chip=chip,
                           known=", ".join(x.id for x in chips)))
    if npus % nodes:
        raise InputError(T("--npus {npus} is not a multiple of --nodes {nodes}", npus=npus, nodes=nodes))
    if seen_chip is not None and find_chip(seen_chip, chips) is c:  # the host's own chips: at their memory
        c = c.with_total(total)
    return c, npus, free, held


def _free_note(free, held) -> list:
    if free is None:
        return [T("the NPUs were assumed free (no host or snapshot read: run plan on the host, or give --replay "
                  "SNAPSHOT)")]
    if held:
        return [T("planned on the {n} free NPU(s) only: {held} are held by another job", n=len(free),
                  held="; ".join(held))]
    return []


def _commands(serve, layout, nodes: int, rel, chip, free, model_path: str) -> None:
    """The per-node commands of a multi-node plan, and the containers: the free NPUs' device nodes where the host
    was read, one container per node. Where the free NPUs are not the first ones, the bare-metal command names them
    (ASCEND_RT_VISIBLE_DEVICES, logical ids); a container sees only its devices and needs no such variable."""
    from ascend_doctor.deploy.command import node_commands
    from ascend_doctor.deploy.container import docker_run

    serve.why.extend(node_commands(serve, layout, nodes))
    if rel is None:
        return
    per_node = layout.ranks // max(nodes, 1) or 1
    chosen = free[:per_node] if free is not None and len(free) >= per_node else None
    devices = [dev for dev, _logical in chosen] if chosen else per_node
    mount = model_path if os.path.isdir(model_path) else None
    whole = chip.family == "A5" and layout.ranks > 1
    serve.docker = docker_run(rel.image, devices, serve.env, mount, network=layout.ranks > 1, whole_driver=whole)
    logical = [lg for _dev, lg in chosen] if chosen else []
    if logical and logical != list(range(len(logical))):
        ids = ",".join(str(i) for i in logical)
        serve.env["ASCEND_RT_VISIBLE_DEVICES"] = ids
        serve.why.append(T("ASCEND_RT_VISIBLE_DEVICES={ids}: the free NPUs, for the command on the host (the "
                           "container gets their device nodes instead)", ids=ids))
    for n in serve.nodes:  # every node its own container: its env, its share of the NPUs
        n.docker = docker_run(rel.image, per_node, n.env, mount, network=True, whole_driver=whole)


def _write(report, out_fmt: str, output: str) -> None:
    from ascend_doctor.cli.output import console_text, write_output
    from ascend_doctor.render.plan import render_plan
    from ascend_doctor.text.redact import redact_tree
    from ascend_doctor.text.textsafe import dump_json

    if out_fmt == "json":
        write_output(output, dump_json(redact_tree(report.model_dump(mode="json"))) + "\n", "plan")
    elif output != "-" or out_fmt == "markdown":
        write_output(output, console_text(render_plan, report, markdown=out_fmt == "markdown"), "plan")
    else:
        render_plan(report)
