"""`ascend-doctor fleet` and `ascend-doctor diff` (lazy subcommands: `check` never imports this module or Ray)."""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime, timezone

import click

from ascend_doctor.cli.exits import DEBUG_ENV, EXIT_HELP, EXIT_INPUT, EXIT_INTERNAL, internal_error_report, say_error
from ascend_doctor.cli.i18n_click import DoctorCommand
from ascend_doctor.cli.options import (
    SECONDS,
    build_options,
    check_local_paths,
    compute_options,
    output_options,
    python_option,
    selection_options,
    split_codes,
)
from ascend_doctor.cli.output import clean_record, console_text, emit, output_kwargs, write_output
from ascend_doctor.core.errors import InputError
from ascend_doctor.i18n import T
from ascend_doctor.render.formats import choices


def emit_fleet(report, outputs) -> None:
    """The CLI's `emit`, with the node-by-check table as the console view."""
    from ascend_doctor.fleet.render import render_fleet

    emit(report, outputs, console=render_fleet)


def _hard_exit(code: int) -> None:
    """Leave without ray.shutdown(), which can block on a task stuck on a frozen node (ray-notes)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _serve_command(argv: list[str], knowledge):
    """The serve command the cluster is meant to run, parsed with every recorded vLLM release's option syntax (the
    nodes' vLLM is not known yet); a --config file is read here, where `vllm serve` is usually started."""
    if not argv:
        return None
    from ascend_doctor.knowledge.serve_options import parse_serve
    from ascend_doctor.seam.inputs import read_text

    def read(path: str):
        try:
            return read_text(path, "config")
        except InputError:  # the parser records "cannot be read" as the command's config_error
            return None

    cmd = parse_serve(argv, knowledge.matrix, read)
    if not cmd.recognized:
        raise InputError(T("the command after `--` is not `vllm serve …`: {command}", command=cmd.display))
    return cmd


@click.command(cls=DoctorCommand, epilog=EXIT_HELP)
@click.option("--ray-address", metavar="ADDRESS", help="Check every alive node of this Ray cluster ('auto': the one "
                                                        "this machine belongs to; or HOST:PORT of the head's GCS).")
@click.option("--snapshots", "snapshots", multiple=True, metavar="GLOB",
              help="Snapshot files of the nodes (`ascend-doctor collect` run by ssh/pdsh/Ansible/k8s); repeatable.")
@click.option("--node-timeout", type=SECONDS, default=60.0, show_default=True, metavar="SECONDS",
              help="Ray: a node that has not answered within this time is a finding (FLEET101).")
@click.option("--connect-timeout", type=SECONDS, default=30.0, show_default=True, metavar="SECONDS",
              help="Ray: give up (exit 2) when no cluster answers at --ray-address within this time.")
@python_option("Ray: interpreter of the serving environment on the nodes.")
@click.option("--model-dir", metavar="DIR", help="Ray: model weights directory on the nodes.")
@selection_options
@click.option("--probe-timeout", type=SECONDS, default=None, metavar="SECONDS",
              help="Ray: per-probe timeout on the nodes.")
@click.option("--no-import-probe", "no_import_probe", is_flag=True, default=False,
              help="Ray: do not run the isolated `import torch, torch_npu` child process on the nodes.")
@click.option("--import-timeout", type=SECONDS, default=None, metavar="SECONDS",
              help="Ray: time the import and vLLM platform probes may take on the nodes (default 90 and 120).")
@compute_options
@output_options
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="[-- vllm serve ...]")
def fleet(ray_address, snapshots, node_timeout, connect_timeout, python, model_dir, matrix, checks_dirs, select, ignore,
          config_path, fail_on, fail_on_unknown, probe_timeout, no_import_probe, import_timeout, compute, compute_ranks,
          compute_timeout, command, **kw):
    """Check every node of a multi-node deployment and find the odd node out: every static check node by node,
    plus FLEET checks across nodes (versions, NPUs, HCCL IPs, clock skew, environment).

    Given the `vllm serve` command after `--`, also judge the Ray placement it will ask for (FLEET108). With
    --compute (Ray only), run the compute smoke on every node, ending in one all-reduce across all nodes' NPUs."""
    from ascend_doctor.core.config import load_config, validate_against
    from ascend_doctor.core.registry import load_registry

    if bool(ray_address) == bool(snapshots):
        raise InputError(T("give exactly one of --ray-address ADDRESS or --snapshots GLOB"))
    if node_timeout <= 0 or connect_timeout <= 0:
        raise InputError(T("--node-timeout and --connect-timeout must be positive"))
    if compute and not ray_address:
        raise InputError(T("--compute needs --ray-address: snapshots cannot compute"))
    started_at, t0 = datetime.now(timezone.utc), time.monotonic()
    outputs = output_kwargs(kw)
    stuck = False
    try:
        config = load_config(config_path)
        options = build_options(config, python=python, model_dir=model_dir, matrix=list(matrix),
                                checks_dirs=list(checks_dirs), select=split_codes(select),
                                ignore=split_codes(ignore), fail_on=fail_on, fail_on_unknown=fail_on_unknown,
                                probe_timeout=probe_timeout, import_timeout=import_timeout,
                                import_probe=False if no_import_probe else None, compute_ranks=compute_ranks,
                                compute_timeout=compute_timeout)
        check_local_paths(options, config)
        registry = load_registry(options.checks_dirs)
        outputs.for_run(registry, options)
        validate_against(config, registry)
        registry.select(options.select, options.ignore)
        from ascend_doctor.fleet.evaluate import FleetEvaluator
        from ascend_doctor.knowledge.door import Knowledge

        knowledge = Knowledge.for_options(options)
        knowledge.check()  # an invalid --matrix layer is an input error, before any node is asked
        evaluator = FleetEvaluator(registry, options, config, serve=_serve_command(list(command), knowledge))
        if snapshots:
            from ascend_doctor.fleet.files import results_from_files

            results, source, notes = results_from_files(list(snapshots)), "snapshots: " + " ".join(snapshots), []
        else:
            from ascend_doctor.fleet.ray_runner import (
                ConnectTimeout,
                fake_from_env,
                run_on_ray,
            )

            try:
                # Nodes judge themselves, unless --checks-dir names checks that exist only here.
                run = run_on_ray(ray_address, options, node_timeout=node_timeout,
                                 fake=fake_from_env(dict(os.environ)), on_result=evaluator.prepare,
                                 connect_timeout=connect_timeout, evaluate_on_nodes=not options.checks_dirs)
            except ConnectTimeout as exc:  # ray.init is still trying in a thread: leave without ray.shutdown()
                say_error(str(exc))
                _hard_exit(EXIT_INPUT)
            results, source, notes, stuck = run.results, f"ray: {ray_address}", run.notes, run.stuck
            if compute:
                import ray

                from ascend_doctor.fleet.compute import compute_on_ray, judge_compute

                facts, compute_stuck, compute_notes = compute_on_ray(ray, results, options)
                judge_compute(registry, options, evaluator, results, facts)
                stuck, notes = stuck or compute_stuck, [*notes, *compute_notes]
        report = evaluator.report(results, source=source, notes=notes, started=(started_at, t0))
    except InputError:
        raise
    except Exception as exc:
        if os.environ.get(DEBUG_ENV):
            raise
        report = internal_error_report(exc, "fleet", started_at, t0, fail_on or "error")
        emit_fleet(report, outputs)
        say_error(f"{type(exc).__name__}: {exc}", kind="internal error")
        _hard_exit(EXIT_INTERNAL) if ray_address else sys.exit(EXIT_INTERNAL)
    emit_fleet(report, outputs)
    if stuck:
        _hard_exit(report.exit_code)
    sys.exit(report.exit_code)


@click.command(cls=DoctorCommand)
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option("--format", "fmt", type=click.Choice(choices("diff")), default="console", show_default=True)
@click.option("-o", "--output", metavar="FILE", help="Write the diff (in --format) to FILE; console view on stdout.")
def diff(a, b, fmt, output):
    """What changed between two hosts or two days: two snapshots (facts compared through the probes: packages,
    Ascend stack, host knobs, devices, env) or two JSON reports (findings whose status changed).

    Exit code: 0 no difference, 1 differences, 2 unreadable input."""
    from ascend_doctor.fleet.diff import diff_files, render_diff

    result = clean_record(diff_files(a, b), note_field=None)
    if output and output != "-":
        write_output(output, result.dump() if fmt == "json" else console_text(render_diff, result), what="diff")
        render_diff(result)
    elif fmt == "json":
        write_output("-", result.dump())
    else:
        render_diff(result)
    sys.exit(1 if result.count else 0)
