"""`ascend-doctor check` (the main job) and `ascend-doctor collect` (record a host for replay)."""

from __future__ import annotations

import sys
import time
from datetime import datetime, timezone

import click

from ascend_doctor.cli.exits import EXIT_HELP, exit_internal, guarded_run
from ascend_doctor.cli.i18n_click import DoctorCommand
from ascend_doctor.cli.options import SECONDS, compute_options, host_options, prepare, python_option
from ascend_doctor.cli.output import emit, output_kwargs, write_output
from ascend_doctor.i18n import tr


@click.command(cls=DoctorCommand, epilog=EXIT_HELP)
@host_options
@compute_options
@click.option("--smoke-url", metavar="URL", help="After the static checks, smoke-test this OpenAI-compatible base URL.")
@click.option("--model", "smoke_model", metavar="NAME", help="Model name for the smoke stage.")
@click.option("--api-key-env", metavar="VAR", help="Environment variable holding the API key for the smoke stage.")
@click.option("--smoke-timeout", type=SECONDS, default=60.0, show_default=True,
              help="Per-request timeout of the smoke stage.")
def check(smoke_url, smoke_model, api_key_env, smoke_timeout, compute, **kw):
    """Run every static check on this machine (or a --replay snapshot); with --compute, the compute smoke; with
    --smoke-url, the live smoke too."""
    started_at, t0 = datetime.now(timezone.utc), time.monotonic()
    outputs = output_kwargs(kw)

    def work():
        from ascend_doctor.core.engine import finalize, run_static

        stages = ("static",) + (("compute",) if compute else ())
        config, options, registry, host, facts = prepare(**kw, stages=stages + (("smoke",) if smoke_url else ()))
        outputs.for_run(registry, options)
        report = run_static(host, registry, options, config, started=(started_at, t0), facts=facts, stages=stages)
        if smoke_url:
            from ascend_doctor.smoke.stage import smoke_findings

            extra = smoke_findings(registry, base_url=smoke_url, model=smoke_model, api_key_env=api_key_env,
                                   timeout=smoke_timeout, options=options)
            report = finalize(report, extra, config, duration_s=time.monotonic() - t0)
        return report

    report, crash = guarded_run("check", started_at, t0, kw.get("fail_on") or "error", work)
    emit(report, outputs)
    if crash is not None:
        exit_internal(crash)
    sys.exit(report.exit_code)


@click.command(cls=DoctorCommand, epilog=EXIT_HELP)
@click.option("-o", "--output", metavar="FILE", required=True, help="Where to write the snapshot (JSON; '-': stdout).")
@python_option()
@click.option("--model-dir", metavar="DIR", type=click.Path(exists=True, file_okay=False),
              help="Model weights directory to record disk usage and config for.")
@click.option("--probe-timeout", type=SECONDS, default=10.0, show_default=True)
@click.option("--description", default="", help="Free text stored in the snapshot (what this host is).")
@click.option("--no-import-probe", "no_import_probe", is_flag=True, default=False)
@click.option("--import-timeout", type=SECONDS, default=None, metavar="SECONDS",
              help="Time the isolated torch/torch_npu import and vLLM platform probes may take (default 90 and 120).")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="[-- vllm serve ...]")
def collect(output, python, model_dir, probe_timeout, description, no_import_probe, import_timeout, command):
    """Record everything the probes see into a snapshot (secrets redacted), for --replay, bug reports and fleets.

    Given the `vllm serve` command line after `--`, also record what `exec` reads for it (the model directory's
    config files, a --config YAML, the serving interpreter), so `exec --replay` can judge the model-level checks.
    """
    from ascend_doctor.cli.options import check_host_paths
    from ascend_doctor.core.config import Config
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.seam.collect import collect_snapshot
    from ascend_doctor.seam.localhost import LocalHost

    options = RunOptions(python=python, model_dir=model_dir, probe_timeout=probe_timeout,
                         import_probe=not no_import_probe, import_timeout=import_timeout)
    host = LocalHost()
    check_host_paths(options, Config(), host)
    snap = collect_snapshot(host, options, description=description, serve_argv=list(command) or None)
    write_output(output, snap.dump(), what="snapshot")
    click.echo(tr("wrote {output}: {commands} commands, {files} files, {dirs} directories, {envs} python "
                  "environment(s)", output=output, commands=len(snap.commands), files=len(snap.files),
                  dirs=len(snap.dirs), envs=len(snap.python_envs)), err=True)
