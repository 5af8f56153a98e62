"""The `ascend-doctor` command line.

Exit codes (the contract CI gates rely on):
  0  nothing at or above --fail-on (default: error)
  1  findings at or above --fail-on
  2  usage or input error: bad option, unreadable snapshot, invalid matrix or config (one line, no traceback)
  3  internal error of ascend-doctor itself
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional

import click

from ascend_doctor import __version__
from ascend_doctor.errors import InputError

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

EXIT_HELP = """\b
Exit codes:
  0  nothing at or above --fail-on (default: error)
  1  findings at or above --fail-on
  2  usage or input error (bad option, unreadable snapshot, invalid matrix or config)
  3  internal error of ascend-doctor itself
"""

FORMATS = ["console", "json", "junit", "github"]


def split_codes(values: tuple[str, ...]) -> list[str]:
    """`--select A,B --select C` -> ['A', 'B', 'C']."""
    out: list[str] = []
    for v in values:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def make_host(replay: Optional[str]):
    """LocalHost, or a ReplayHost over a snapshot file."""
    if replay:
        from ascend_doctor.snapshot import ReplayHost, load_snapshot

        return ReplayHost(load_snapshot(replay), label=replay)
    from ascend_doctor.localhost import LocalHost

    return LocalHost()


def build_options(config, **cli: Any):
    """Config-file [options] first, then whatever was given on the command line."""
    from ascend_doctor.records import ValidationError

    from ascend_doctor.options import RunOptions
    from ascend_doctor.tomlread import error_line

    merged = dict(config.options)
    for key, value in cli.items():
        if value is None or value == () or value == []:
            continue
        merged[key] = value
    try:
        return RunOptions.model_validate(merged)
    except ValidationError as exc:
        where = f"config file {config.path}: options." if config.path else "option "
        raise InputError(f"{where}{error_line(exc)}") from None


def emit(report, fmt: str, output: Optional[str], verbose: bool = False, quiet: bool = False,
         console: Optional[Callable] = None) -> None:
    """Write the report in `fmt` to `output` (and the console view to stdout), or `fmt` to stdout.

    `console`: the console view, `fn(report, file=None, verbose=False)` (default: the per-family view; `fleet`
    passes its node-by-check table).
    """
    import importlib

    # Import only the renderer in use (rich and xml.etree cost start-up time a JSON gate does not need).
    def render_console(*a, **k):
        if console is not None:
            return console(*a, **k)
        return importlib.import_module("ascend_doctor.render.console").render_console(*a, **k)

    modules = {"json": ("json_out", "render_json"), "junit": ("junit", "render_junit"),
               "github": ("github", "render_github")}
    text_renderers: dict[str, Callable] = {
        name: (lambda r, m=m, f=f: getattr(importlib.import_module(f"ascend_doctor.render.{m}"), f)(r))
        for name, (m, f) in modules.items()}
    if output:
        path = Path(output)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if fmt == "console":
                with open(path, "w", encoding="utf-8") as fh:
                    render_console(report, file=fh, verbose=verbose)
            else:
                path.write_text(text_renderers[fmt](report), encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write report to {output}: {exc.strerror or exc}") from None
        if not quiet:
            render_console(report, verbose=verbose)
    elif fmt == "console":
        render_console(report, verbose=verbose)
    else:
        sys.stdout.write(text_renderers[fmt](report))
        sys.stdout.flush()


def internal_error_report(exc: BaseException, command: str, started_at: datetime, t0: float, fail_on: str = "error"):
    """A report with one `error` finding, so that -o FILE is written even when the tool itself broke."""
    from ascend_doctor.report import Finding, HostSummary, Severity, Status, build_report

    f = Finding(code="DOCTOR001", slug="internal-error", title="ascend-doctor failed internally", family="DOCTOR",
                status=Status.ERROR, severity=Severity.CRITICAL, level=Severity.CRITICAL,
                message=f"{type(exc).__name__}: {exc}", details={"traceback": traceback.format_exc()},
                remediation="Re-run with ASCEND_DOCTOR_DEBUG=1 and report the traceback with the snapshot "
                            "(`ascend-doctor collect -o host.snapshot.json`).")
    r = build_report(tool_version=__version__, host=HostSummary(hostname="unknown"), started_at=started_at,
                     duration_s=time.monotonic() - t0, fail_on=Severity(fail_on), findings=[f], command=command)
    return r.model_copy(update={"exit_code": EXIT_INTERNAL})


def guarded_run(command: str, started_at: datetime, t0: float, fail_on: str, work: Callable[[], Any]):
    """(report, None) from `work()`, or (internal-error report, exception) when the tool itself broke.

    InputError passes through (exit 2); ASCEND_DOCTOR_DEBUG=1 re-raises for the traceback.
    """
    try:
        return work(), None
    except InputError:
        raise
    except Exception as exc:
        if os.environ.get("ASCEND_DOCTOR_DEBUG"):
            raise
        return internal_error_report(exc, command, started_at, t0, fail_on), exc


# Common options for commands that evaluate a host ------------------------------------------------------------------
def host_options(func):
    opts = [
        click.option("--replay", "replay", metavar="SNAPSHOT", help="Evaluate a recorded snapshot instead of this machine."),
        click.option("--python", "python", metavar="PATH", help="Interpreter of the serving environment (default: this one)."),
        click.option("--model-dir", metavar="DIR", help="Model weights directory (disk-space and model checks)."),
        click.option("--matrix", "matrix", multiple=True, metavar="FILE", help="Extra matrix TOML layered over the shipped one (repeatable)."),
        click.option("--checks-dir", "checks_dirs", multiple=True, metavar="DIR", help="Load extra checks from *.py in DIR (repeatable)."),
        click.option("--select", multiple=True, metavar="CODES", help="Only these codes or prefixes (comma-separated, repeatable)."),
        click.option("--ignore", multiple=True, metavar="CODES", help="Skip these codes or prefixes."),
        click.option("--config", "config_path", metavar="FILE", help="Config file (default: ./ascend-doctor.toml if present)."),
        click.option("--fail-on", type=click.Choice(["critical", "error", "warning", "info"]), default=None,
                     help="Lowest severity that makes the exit code 1 (default: error)."),
        click.option("--probe-timeout", type=float, default=None, metavar="SECONDS", help="Per-probe timeout (default 10)."),
        click.option("--redact-hostname", is_flag=True, default=None, help="Write '<redacted>' instead of the hostname."),
        click.option("--no-import-probe", "no_import_probe", is_flag=True, default=False,
                     help="Do not run the isolated `import torch, torch_npu` child process."),
        click.option("--format", "fmt", type=click.Choice(FORMATS), default="console", show_default=True),
        click.option("-o", "--output", metavar="FILE", help="Write the report (in --format) to FILE; console view on stdout."),
        click.option("-v", "--verbose", is_flag=True, help="Show evidence for passing checks too, and tracebacks."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def prepare(replay, python, model_dir, matrix, checks_dirs, select, ignore, config_path, fail_on, probe_timeout,
            redact_hostname, no_import_probe):
    """Shared set-up for check/exec/smoke: config, options, registry, host."""
    from ascend_doctor.config import load_config, validate_against
    from ascend_doctor.registry import load_registry

    config = load_config(config_path)
    options = build_options(
        config, python=python, model_dir=model_dir, matrix=list(matrix), checks_dirs=list(checks_dirs),
        select=split_codes(select), ignore=split_codes(ignore), fail_on=fail_on, probe_timeout=probe_timeout,
        redact_hostname=redact_hostname, import_probe=False if no_import_probe else None,
    )
    registry = load_registry(options.checks_dirs)
    validate_against(config, registry)
    registry.select(options.select, options.ignore)  # unknown codes -> InputError before anything runs
    if options.matrix:
        from ascend_doctor.matrix import load_matrix

        load_matrix(options.matrix)  # an invalid user matrix is an input error, before the run
    host = make_host(replay)
    return config, options, registry, host


class DoctorGroup(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except InputError as exc:
            click.echo(f"ascend-doctor: error: {exc}", err=True)
            ctx.exit(EXIT_INPUT)


@click.group(cls=DoctorGroup, epilog=EXIT_HELP, context_settings={"help_option_names": ["-h", "--help"],
                                                                   "max_content_width": 110})
@click.version_option(__version__, prog_name="ascend-doctor")
def cli():
    """Will this Ascend NPU + vllm-ascend stack serve? Checks driver, firmware, CANN, torch/torch_npu,
    vllm/vllm-ascend, host knobs, HCCL, devices and containers, then (optionally) smoke-tests the live server's
    tool calling. Every finding says what was seen, why it matters, and the exact fix."""


@cli.command(epilog=EXIT_HELP)
@host_options
@click.option("--smoke-url", metavar="URL", help="After the static checks, smoke-test this OpenAI-compatible base URL.")
@click.option("--model", "smoke_model", metavar="NAME", help="Model name for the smoke stage.")
@click.option("--api-key-env", metavar="VAR", help="Environment variable holding the API key for the smoke stage.")
@click.option("--smoke-timeout", type=float, default=60.0, show_default=True, help="Per-request timeout of the smoke stage.")
def check(replay, python, model_dir, matrix, checks_dirs, select, ignore, config_path, fail_on, probe_timeout,
          redact_hostname, no_import_probe, fmt, output, verbose, smoke_url, smoke_model, api_key_env, smoke_timeout):
    """Run every static check on this machine (or a --replay snapshot); with --smoke-url, the live smoke too."""
    from ascend_doctor.engine import finalize, run_static

    started_at, t0 = datetime.now(timezone.utc), time.monotonic()
    config, options, registry, host = prepare(replay, python, model_dir, matrix, checks_dirs, select, ignore,
                                              config_path, fail_on, probe_timeout, redact_hostname, no_import_probe)
    def work():
        report = run_static(host, registry, options, config, started=(started_at, t0))
        if smoke_url:
            from ascend_doctor.smoke.stage import smoke_findings

            extra = smoke_findings(registry, base_url=smoke_url, model=smoke_model, api_key_env=api_key_env,
                                   timeout=smoke_timeout, options=options)
            report = finalize(report, extra, config, duration_s=time.monotonic() - t0)
        return report

    report, crash = guarded_run("check", started_at, t0, options.fail_on.value, work)
    if crash is not None:
        emit(report, fmt, output, verbose)
        click.echo(f"ascend-doctor: internal error: {type(crash).__name__}: {crash}", err=True)
        sys.exit(EXIT_INTERNAL)
    emit(report, fmt, output, verbose)
    sys.exit(report.exit_code)


@cli.command()
@click.option("-o", "--output", metavar="FILE", required=True, help="Where to write the snapshot (JSON).")
@click.option("--python", "python", metavar="PATH", help="Interpreter of the serving environment (default: this one).")
@click.option("--model-dir", metavar="DIR", help="Model weights directory to record disk usage and config for.")
@click.option("--probe-timeout", type=float, default=10.0, show_default=True)
@click.option("--description", default="", help="Free text stored in the snapshot (what this host is).")
@click.option("--no-import-probe", "no_import_probe", is_flag=True, default=False)
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="[-- vllm serve ...]")
def collect(output, python, model_dir, probe_timeout, description, no_import_probe, command):
    """Record everything the probes see into a snapshot (secrets redacted), for --replay, bug reports and fleets.

    Given the `vllm serve` command line after `--`, also record what `exec` reads for it (the model directory's
    config files, a --config YAML, the serving interpreter), so `exec --replay` can judge the model-level checks.
    """
    from ascend_doctor.collect import collect_snapshot
    from ascend_doctor.localhost import LocalHost
    from ascend_doctor.options import RunOptions

    options = RunOptions(python=python, model_dir=model_dir, probe_timeout=probe_timeout,
                         import_probe=not no_import_probe)
    snap = collect_snapshot(LocalHost(), options, description=description, serve_argv=list(command) or None)
    try:
        Path(output).write_text(snap.dump(), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write snapshot to {output}: {exc.strerror or exc}") from None
    click.echo(f"wrote {output}: {len(snap.commands)} commands, {len(snap.files)} files, {len(snap.dirs)} "
               f"directories, {len(snap.python_envs)} python environment(s)", err=True)


@cli.command("list")
@click.option("--checks-dir", "checks_dirs", multiple=True, metavar="DIR")
@click.option("--format", "fmt", type=click.Choice(["console", "json"]), default="console")
def list_checks(checks_dirs, fmt):
    """Every check: code, slug, family, severity, stage, source (built-in or plugin)."""
    from ascend_doctor.registry import load_registry

    reg = load_registry(checks_dirs)
    rows = [{"code": c.code, "slug": c.slug, "family": c.family, "severity": c.severity.value, "stage": c.stage,
             "source": c.source, "title": c.title} for c in reg.all()]
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    from rich.table import Table

    from ascend_doctor.render.console import make_console

    t = Table(box=None, pad_edge=False)
    for col in ("code", "slug", "family", "severity", "stage", "source", "title"):
        t.add_column(col)
    for r in rows:
        t.add_row(*(r[k] for k in ("code", "slug", "family", "severity", "stage", "source", "title")))
    make_console().print(t)


@cli.command()
@click.argument("code")
@click.option("--checks-dir", "checks_dirs", multiple=True, metavar="DIR")
def explain(code, checks_dirs):
    """Print a check's doc: what it checks, why it matters, how to fix."""
    from ascend_doctor.registry import load_registry

    reg = load_registry(checks_dirs)
    c = reg.get(code)
    if c is None:
        raise InputError(f"unknown check {code!r} (see `ascend-doctor list`)")
    click.echo(f"{c.code} {c.slug} — {c.title}")
    click.echo(f"family: {c.family}   severity: {c.severity.value}   stage: {c.stage}   source: {c.source}")
    if c.needs:
        click.echo(f"facts: {', '.join(c.needs)}")
    body = c.doc.strip().split("\n", 1)
    click.echo("")
    click.echo(body[1].strip() if len(body) > 1 else "")


@cli.command()
@click.option("--snapshot", is_flag=True, help="Print the JSON Schema of the host snapshot instead of the report.")
def schema(snapshot):
    """Print the JSON Schema of the report (or, with --snapshot, of a host snapshot)."""
    if snapshot:
        from ascend_doctor.snapshot import Snapshot as model
    else:
        from ascend_doctor.report import Report as model
    click.echo(json.dumps(model.model_json_schema(by_alias=True), indent=2))


# Subcommands that live in their own modules, imported only when invoked (or listed by --help): `check` must not pay
# for httpx (smoke), ray (fleet) or the hook's modules. name -> (module, attribute).
LAZY_COMMANDS = {
    "parse": ("ascend_doctor.cli_parse", "parse"),
    "matrix": ("ascend_doctor.cli_matrix", "matrix"),
    "diagnose": ("ascend_doctor.cli_diagnose", "diagnose"),
    "smoke": ("ascend_doctor.smoke.cli", "smoke"),
    "exec": ("ascend_doctor.hook.cli", "exec_cmd"),
    "fleet": ("ascend_doctor.fleet.cli", "fleet"),
    "diff": ("ascend_doctor.fleet.cli", "diff"),
}


def _lazy_command(name: str):
    import importlib

    mod, attr = LAZY_COMMANDS[name]
    try:
        module = importlib.import_module(mod)
    except ModuleNotFoundError as exc:
        if exc.name and mod.startswith(exc.name):
            return None  # that capability is not built (yet)
        raise
    return getattr(module, attr, None)


def _list_lazy(self, ctx):
    names = set(click.Group.list_commands(self, ctx))
    names.update(n for n in LAZY_COMMANDS if _lazy_command(n) is not None)
    return sorted(names)


def _get_lazy(self, ctx, name):
    cmd = click.Group.get_command(self, ctx, name)
    if cmd is None and name in LAZY_COMMANDS:
        cmd = _lazy_command(name)
    return cmd


DoctorGroup.list_commands = _list_lazy  # type: ignore[method-assign]
DoctorGroup.get_command = _get_lazy  # type: ignore[method-assign]


def main(argv: Optional[list[str]] = None) -> None:
    """Console-script entry: maps errors onto the exit-code contract, never a traceback for user errors."""
    try:
        cli.main(args=argv, prog_name="ascend-doctor", standalone_mode=True)
    except InputError as exc:  # raised outside a command's invoke (defensive)
        click.echo(f"ascend-doctor: error: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    except KeyboardInterrupt:
        click.echo("ascend-doctor: interrupted", err=True)
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as exc:
        if os.environ.get("ASCEND_DOCTOR_DEBUG"):
            raise
        click.echo(f"ascend-doctor: internal error: {type(exc).__name__}: {exc} "
                   "(set ASCEND_DOCTOR_DEBUG=1 for the traceback)", err=True)
        sys.exit(EXIT_INTERNAL)
