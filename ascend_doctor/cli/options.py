"""The options commands share, and the set-up they share: config, run options, registry, host.

A path the user names (on the command line or in `ascend-doctor.toml`) that does not exist or is the wrong kind is a
usage error (exit 2, one line) before anything runs: a mistyped `--python` must not turn into "0 passed, 9 unknown,
OK".
"""

from __future__ import annotations

import os
from typing import Any, Optional

import click

from ascend_doctor.core.errors import InputError
from ascend_doctor.i18n import LANGS, T, join, tr

FAIL_ON_CHOICES = ["critical", "error", "warning", "info"]

_FILE = click.Path(exists=True, dir_okay=False, allow_dash=False)
_DIR = click.Path(exists=True, file_okay=False)


def split_codes(values: tuple[str, ...]) -> list[str]:
    """`--select A,B --select C` -> ['A', 'B', 'C']."""
    out: list[str] = []
    for v in values:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


class Seconds(click.ParamType):
    """A positive, finite number of seconds (no nan, inf, 0 or negative): a usage error otherwise (exit 2)."""

    name = "seconds"

    def convert(self, value, param, ctx):
        import math

        try:
            v = float(value)
        except (TypeError, ValueError):
            self.fail(tr("{value} is not a number of seconds", value=repr(value)), param, ctx)
        if not math.isfinite(v) or v <= 0 or v > MAX_SECONDS:
            self.fail(tr("{value} is not a positive number of seconds (at most {limit})", value=repr(value),
                         limit=MAX_SECONDS), param, ctx)
        return v


class FiniteRange(click.FloatRange):
    """click's FloatRange, which lets `nan` through (every comparison with it is false: #40 item 9, plan exited 3),
    refusing what is not a finite number."""

    def convert(self, value, param, ctx):
        import math

        v = super().convert(value, param, ctx)
        if not math.isfinite(v):
            self.fail(tr("{value} is not a finite number", value=repr(value)), param, ctx)
        return v


MAX_SECONDS = 7 * 24 * 3600  # a week: anything longer is a typo, and larger values overflow time_t arithmetic
SECONDS = Seconds()


def _apply(func, opts):
    for opt in reversed(opts):
        func = opt(func)
    return func


def selection_options(func):
    """--select/--ignore/--checks-dir/--matrix/--config/--fail-on: which checks run, against what, gating how."""
    return _apply(func, [
        click.option("--matrix", "matrix", multiple=True, metavar="FILE", type=_FILE,
                     help="A table layered over the shipped one: its `table` key names which (`ascend-doctor matrix "
                          "tables`), none for the compatibility matrix (repeatable)."),
        click.option("--checks-dir", "checks_dirs", multiple=True, metavar="DIR", type=_DIR,
                     help="Load extra checks from *.py in DIR (repeatable)."),
        click.option("--select", multiple=True, metavar="CODES",
                     help="Only these codes or prefixes (comma-separated, repeatable)."),
        click.option("--ignore", multiple=True, metavar="CODES", help="Skip these codes or prefixes."),
        click.option("--config", "config_path", metavar="FILE", type=_FILE,
                     help="Config file (default: ./ascend-doctor.toml if present and trusted)."),
        click.option("--fail-on", type=click.Choice(FAIL_ON_CHOICES), default=None,
                     help="Lowest severity that makes the exit code 1 (default: error)."),
        click.option("--fail-on-unknown", is_flag=True, default=None,
                     help="Exit 1 when a check of severity error or critical could not run (verdict INCOMPLETE)."),
    ])


def output_options(func):
    """Where the report goes: several outputs in one run, beside the console view (see cli.output.Outputs)."""
    from ascend_doctor.cli.output import FORMATS

    return _apply(func, [
        click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
                     help="Format of -o FILE, or of stdout without -o (default: console; with -o, the file's "
                          "extension: .json, .xml (JUnit), .sarif, .txt, .md, .prom (Prometheus textfile))."),
        click.option("-o", "--output", metavar="FILE", help="Write the report to FILE ('-': stdout)."),
        click.option("--json", "json_path", metavar="FILE", help="Also write the JSON report to FILE ('-': stdout)."),
        click.option("--junit", "junit_path", metavar="FILE", help="Also write JUnit XML to FILE."),
        click.option("--sarif", "sarif_path", metavar="FILE", help="Also write SARIF 2.1.0 to FILE (GitHub code "
                                                                    "scanning)."),
        click.option("--github", is_flag=True, help="Also print GitHub Actions annotations on stdout."),
        click.option("--termination-log", "termination_path", metavar="FILE",
                     help="Also write the verdict and the finding that explains it, on one line, to FILE (in a "
                          "Kubernetes pod: /dev/termination-log by default, so `kubectl describe pod` shows it; '' "
                          "turns it off)."),
        click.option("--fix-script", "fixscript_path", metavar="FILE",
                     help="Also write the failing findings' fixes as one shell script to review (never run by the "
                          "doctor): ordered driver → CANN → packages → host → environment → container → serve."),
        click.option("-v", "--verbose", is_flag=True, help="Show passing checks with their evidence, every evidence "
                                                          "item, and tracebacks."),
        click.option("-q", "--quiet", is_flag=True, help="Show only the problems and the verdict."),
        lang_option(),
    ])


def lang_option():
    """`--lang zh|en`: the language of the console and markdown outputs (default: ASCEND_DOCTOR_LANG, the config's
    `lang`, then the locale)."""
    def remember(ctx, param, value):
        from ascend_doctor import i18n

        if value is not None:  # an outer command's absent --lang must not undo the one given to a subcommand
            i18n.set_option(value)
        return value

    # zh first, as the help has always listed them
    return click.option("--lang", type=click.Choice(list(reversed(LANGS))), default=None, expose_value=False,
                        callback=remember, is_eager=True,
                        help="Language of the console and markdown outputs: zh (简体中文) or en (default: "
                             "ASCEND_DOCTOR_LANG, `lang` in ascend-doctor.toml, then the locale).")


PYTHON_HELP = "Interpreter of the serving environment (default: the one the command names, else the one found)."


def python_option(help: str = PYTHON_HELP):
    """`--python PATH`, declared here for every command. Where it names an interpreter on the machine judged (check,
    exec, collect, smoke --compute) the command calls `check_host_paths` before anything runs; fleet's names one on
    the nodes, which only they can check."""
    return click.option("--python", "python", metavar="PATH", help=help)


def host_options(func):
    """Everything a command that evaluates a host (check, exec) takes."""
    func = _apply(func, [
        click.option("--replay", "replay", metavar="SNAPSHOT", type=click.Path(exists=True, dir_okay=False,
                                                                               allow_dash=True),
                     help="Evaluate a recorded snapshot instead of this machine ('-': read it from stdin)."),
        click.option("--replay-timing", is_flag=True, default=False,
                     help="With --replay: answer each command after its recorded duration (how the run behaves on "
                          "the real host)."),
        python_option(),
        click.option("--model-dir", metavar="DIR", help="Model weights directory (disk-space and model checks)."),
        click.option("--policy", "policy", metavar="FILE", type=_FILE,
                     help="Host thresholds layered over the shipped host policy (a whole copy, or only the "
                          "thresholds to change)."),
    ])
    func = selection_options(func)
    func = _apply(func, [
        click.option("--probe-timeout", type=SECONDS, default=None, metavar="SECONDS",
                     help="Per-probe timeout (default 10)."),
        click.option("--import-timeout", type=SECONDS, default=None, metavar="SECONDS",
                     help="Time the isolated torch/torch_npu import and vLLM platform probes may take (default 90 "
                          "and 120)."),
        click.option("--redact-hostname", is_flag=True, default=None,
                     help="Write '<redacted>' instead of the hostname."),
        click.option("--no-import-probe", "no_import_probe", is_flag=True, default=False,
                     help="Do not run the isolated `import torch, torch_npu` child process."),
    ])
    return output_options(func)


COMPUTE_HELP = ("Also run the compute smoke before anything else is judged: one child per NPU in the serving "
                "interpreter allocates a share of HBM, multiplies in each dtype the chip supports against a CPU "
                "reference (timed), runs the fused operators vllm-ascend needs and all-reduces across the NPUs. It "
                "allocates HBM: not on a node already serving.")


def compute_options(func):
    """--compute and its limits (check, exec, smoke)."""
    return _apply(func, [
        click.option("--compute", "compute", is_flag=True, default=False, help=COMPUTE_HELP),
        click.option("--compute-ranks", "compute_ranks", type=click.IntRange(1, 128), default=None, metavar="N",
                     help="Ranks of the compute smoke (default: every NPU this server uses; 8 on the CPU path)."),
        click.option("--compute-timeout", "compute_timeout", type=SECONDS, default=None, metavar="SECONDS",
                     help="Time the whole compute smoke may take (default 180 on NPUs, 60 on the CPU path)."),
    ])


def build_options(config, **cli: Any):
    """Config-file [options] first, then whatever was given on the command line."""
    from pydantic import ValidationError

    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.knowledge.tomlread import located

    merged = dict(config.options)
    from ascend_doctor import i18n

    i18n.set_config(merged.get("lang") if isinstance(merged.get("lang"), str) else None)
    for key, value in cli.items():
        if value is None or value == () or value == []:
            continue
        merged[key] = value
    try:
        return RunOptions.model_validate(merged)
    except ValidationError as exc:
        where = T("config file {path}: options.", path=config.path) if config.path else T("option ")
        raise InputError(T("{where}{error_line}", where=where, error_line=located(exc))) from None


def selection_setup(config_path, select, ignore, fail_on, fail_on_unknown, checks_dirs, matrix,
                    stage: "Optional[str | tuple[str, ...]]" = None, **more: Any):
    """(config, options, registry) for a command that evaluates something other than this host (smoke, triage):
    the config, the options of `selection_options`, the registry with unknown --select codes and an invalid
    --matrix rejected as input errors before anything runs. `more`: further run options (smoke --compute's)."""
    from ascend_doctor.core.config import load_config, validate_against
    from ascend_doctor.core.registry import load_registry

    config = load_config(config_path)
    options = build_options(config, select=split_codes(select), ignore=split_codes(ignore), fail_on=fail_on,
                            fail_on_unknown=fail_on_unknown, checks_dirs=list(checks_dirs), matrix=list(matrix),
                            **more)
    check_local_paths(options, config)
    registry = load_registry(options.checks_dirs)
    validate_against(config, registry)
    registry.select(options.select, options.ignore, stage=stage)  # unknown codes -> InputError now
    from ascend_doctor.knowledge.door import Knowledge

    Knowledge.for_options(options).check()  # an invalid --matrix layer is an input error, before anything runs
    return config, options, registry


def make_host(replay: Optional[str], timing: bool = False):
    """LocalHost, or a ReplayHost over a snapshot file (answering after the recorded durations with `timing`)."""
    if replay:
        from ascend_doctor.seam.snapshot import ReplayHost, load_snapshot

        return ReplayHost(load_snapshot(replay), label="<stdin>" if replay == "-" else replay, timing=timing)
    if timing:
        raise InputError(T("--replay-timing needs --replay SNAPSHOT"))
    from ascend_doctor.seam.localhost import LocalHost

    return LocalHost()


def _where(config, key: str) -> str:
    if key not in config.options:
        return f"--{key.replace('_', '-')}"
    return T("config file {path}: options.{key}", path=config.path, key=key)


def check_local_paths(options, config) -> None:
    """The matrix files and checks directories must exist (the command line's were checked by click already; this
    covers the config file's)."""
    for path in options.matrix:
        if not os.path.isfile(path):
            what = T("not a regular file") if os.path.exists(path) else T("no such file")
            raise InputError(T("{where}: {path}: {what}", where=_where(config, 'matrix'), path=repr(path), what=what))
    for path in options.checks_dirs:
        if not os.path.isdir(path):
            raise InputError(T("{where}: {path}: no such directory", where=_where(config, 'checks_dirs'),
                               path=repr(path)))


def _refuse_non_python(options, config, host) -> None:
    """An executable given as --python that is not a Python interpreter (`/etc/hosts` with an x bit, a shell
    script) is a usage error, said in one line — not a dozen checks unable to run, quoting the probe script (#22).
    One tiny question (`sys.hexversion`), asked through the run's own host; a hang proves nothing and is left to the
    probes' own time limits."""
    from ascend_doctor.seam.host import TIMEOUT

    res = host.run([options.python, "-c", "import sys; print(sys.hexversion)"],
                   timeout=min(options.probe_timeout, 10.0))
    if res.error == TIMEOUT:
        return
    out = res.stdout.strip()
    if res.ok and out.isdigit():
        return
    said = (out or res.stderr.strip() or res.error_message or "").splitlines()
    raise InputError(T("{where}: {python} is not a Python interpreter: asked for its version it {answer}",
                       where=_where(config, 'python'), python=repr(options.python),
                       answer=T("said {text}", text=repr(said[0][:120])) if said else
                       T("exited {code} without a word", code=res.returncode)))


def check_host_paths(options, config, host=None) -> None:
    """The serving interpreter and the model directory must exist on the host judged: on this machine (then the
    interpreter is asked, through `host`, whether it is one), or — for a replay — as an interpreter the snapshot
    recorded."""
    from ascend_doctor.seam.snapshot import ReplayHost

    replay_host = host if isinstance(host, ReplayHost) else None
    if options.python:
        if replay_host is not None:
            known = sorted(replay_host.snapshot.python_envs)
            if options.python not in known and not any(
                    e.executable == options.python for e in replay_host.snapshot.python_envs.values()):
                raise InputError(T("{where}: {python} is not an interpreter recorded in the snapshot (recorded: "
                                   "{known})", where=_where(config, 'python'),
                                   python=repr(options.python), known=', '.join(known) or 'none'))
        elif not os.path.isfile(options.python):
            what = T("is a directory") if os.path.isdir(options.python) else T("no such file")
            raise InputError(T("{where}: {python}: {what}", where=_where(config, 'python'),
                               python=repr(options.python), what=what))
        elif not os.access(options.python, os.X_OK):
            raise InputError(T("{where}: {python}: not executable", where=_where(config, 'python'),
                               python=repr(options.python)))
        else:
            from ascend_doctor.seam.localhost import LocalHost

            _refuse_non_python(options, config, host or LocalHost())
    if options.model_dir and replay_host is None and not os.path.isdir(options.model_dir):
        what = T("is a file, not a directory") if os.path.exists(options.model_dir) else T("no such directory")
        raise InputError(T("{where}: {model_dir}: {what}", where=_where(config, 'model_dir'),
                           model_dir=repr(options.model_dir), what=what))


def refuse_empty_selection(registry, options, stages: tuple[str, ...]) -> None:
    """InputError when --select/--ignore leave nothing to run in this command's stages: a CI filter that gates
    nothing must not read as OK. Says what the selection matched and where those checks run."""
    matched = registry.select(options.select, options.ignore)
    where = {"serve": "`ascend-doctor exec -- vllm serve …`", "smoke": "`smoke` or `check --smoke-url`",
             "fleet": "`fleet`", "triage": "`triage`", "static": "`check`",
             "compute": "`--compute` (`smoke`, `check`, `exec`, `fleet`)"}
    if not matched:
        raise InputError(T("--select {select} with --ignore {ignore} leaves no check to run",
                           select=",".join(options.select) or "(all)", ignore=",".join(options.ignore)))
    by_stage: dict[str, list[str]] = {}
    for c in matched:
        by_stage.setdefault(c.stage, []).append(c.code)
    parts = [T("{codes} run under {where}", codes=", ".join(codes), where=where.get(st, st))
             for st, codes in by_stage.items()]
    raise InputError(T("--select {select} runs nothing here: {parts}", select=",".join(options.select) or "(all)",
                       parts=join("; ", parts)))


def prepare(replay=None, python=None, model_dir=None, policy=None, matrix=(), checks_dirs=(), select=(), ignore=(),
            config_path=None, fail_on=None, fail_on_unknown=None, probe_timeout=None, redact_hostname=None,
            no_import_probe=False, import_timeout=None, replay_timing=False, stage: Optional[str] = None,
            stages: tuple[str, ...] = (), compute_ranks=None, compute_timeout=None, serve_argv=None):
    """Shared set-up for check/exec (the host_options by name): config, options, registry, host and — for a full run
    — the facts store whose slow vendor-tool probes already run while the checks load. InputError for anything the
    user got wrong."""
    from ascend_doctor.core.config import load_config, validate_against
    from ascend_doctor.core.registry import load_registry

    config = load_config(config_path)
    options = build_options(
        config, python=python, model_dir=model_dir, policy=policy, matrix=list(matrix), checks_dirs=list(checks_dirs),
        select=split_codes(select), ignore=split_codes(ignore), fail_on=fail_on, fail_on_unknown=fail_on_unknown,
        probe_timeout=probe_timeout, redact_hostname=redact_hostname,
        import_probe=False if no_import_probe else None, import_timeout=import_timeout,
        compute_ranks=compute_ranks, compute_timeout=compute_timeout, serve_argv=list(serve_argv or ()),
    )
    check_local_paths(options, config)
    from ascend_doctor.knowledge.door import Knowledge

    # An invalid --policy or --matrix layer is an input error, before anything touches the machine.
    Knowledge.for_options(options).check()
    host = make_host(replay, timing=replay_timing) if replay else None
    check_host_paths(options, config, host)  # before anything touches the machine (LocalHost only to ask --python)

    def checks():
        registry = load_registry(options.checks_dirs)
        validate_against(config, registry)
        registry.select(options.select, options.ignore, stage=stage)  # unknown codes -> InputError now
        if stages and not registry.select(options.select, options.ignore, stage=stages):
            refuse_empty_selection(registry, options, stages)
        return registry

    full_run = not options.select and not options.ignore
    registry = None if full_run else checks()  # a selection is validated before anything touches the machine
    host = host or make_host(replay, timing=replay_timing)
    facts = None
    if full_run:
        from ascend_doctor.core.engine import prefetch

        facts = prefetch(host, options)  # npu-smi & co. run while the checks load
        registry = checks()
    return config, options, registry, host, facts
