"""`ascend-doctor exec [options] -- COMMAND …`: the pre-deploy hook in front of `vllm serve`."""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime, timezone
from typing import Optional

import click

from ascend_doctor.cli import supervise as hook_exec
from ascend_doctor.cli.exits import EXIT_HELP, EXIT_INTERNAL, guarded_run
from ascend_doctor.cli.i18n_click import DoctorCommand
from ascend_doctor.cli.options import SECONDS, compute_options, host_options, prepare
from ascend_doctor.cli.output import Outputs, emit, output_kwargs
from ascend_doctor.core.errors import InputError
from ascend_doctor.i18n import T
from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.knowledge.serve_options import parse_serve
from ascend_doctor.parsers.serve_cmdline import ServeCommand, served_address
from ascend_doctor.probes.serving import HOW_COMMAND, HOW_FLAG
from ascend_doctor.text.redact import register_secret

EXEC_HELP = EXIT_HELP + """
When nothing is at or above --fail-on, ascend-doctor replaces itself with COMMAND (same PID, signals, exit code,
stdin/stdout/stderr). Otherwise it prints the report to stderr and exits 1 without starting COMMAND.
ASCEND_DOCTOR_SKIP=1 skips the checks (said loudly on stderr; --report records it). With --smoke, COMMAND runs as
a child: exit status is COMMAND's (128+N when signal N ended it).
"""


def _say(msg: str) -> None:
    from ascend_doctor.i18n import localize, split
    from ascend_doctor.text.redact import redact_text
    from ascend_doctor.text.textsafe import escape_text

    sys.stderr.write(f"ascend-doctor: {escape_text(redact_text(localize(*split(msg))))}\n")
    sys.stderr.flush()


def _write_report(report, outputs: Outputs) -> None:
    """Every output of `outputs` (--report is its JSON target); the console view on stderr, only the problems unless
    -v: stdout belongs to the command."""
    emit(report, outputs, stream=sys.stderr, console_kwargs={"quiet": outputs.quiet or not outputs.verbose})


def _skipped_report(host, options, linted: list[str], started_at: datetime, t0: float):
    from ascend_doctor import __version__
    from ascend_doctor.core.engine import host_summary
    from ascend_doctor.report import build_report

    return build_report(tool_version=__version__, host=host_summary(host, options.redact_hostname),
                        started_at=started_at, duration_s=time.monotonic() - t0, fail_on=options.fail_on,
                        findings=[], command="exec", linted_command=linted,
                        notes=[f"{hook_exec.SKIP_ENV}=1: checks skipped, the command was started unchecked"])


@click.command("exec", cls=DoctorCommand, epilog=EXEC_HELP, context_settings={"allow_interspersed_args": False,
                                                           "help_option_names": ["-h", "--help"]})
@host_options
@compute_options
@click.option("--report", "report_path", metavar="FILE",
              help="Write the JSON report to FILE before starting COMMAND ('-': standard error, since "
                   "standard output belongs to COMMAND).")
@click.option("--smoke", is_flag=True, help="Start COMMAND as a child, wait until it is healthy, run the tool-calling "
                                            "smoke, report, keep serving.")
@click.option("--strict", is_flag=True, help="With --smoke: stop the server and exit 1 when the smoke fails.")
@click.option("--health-timeout", type=SECONDS, default=1800.0, show_default=True, metavar="SECONDS",
              help="With --smoke: how long the server may take to answer /health or /v1/models.")
@click.option("--smoke-timeout", type=SECONDS, default=60.0, show_default=True,
              help="Per-request timeout of the smoke.")
@click.option("--api-key-env", metavar="VAR", help="Env var holding the server's API key for the smoke (default: the "
                                                   "command's --api-key, else VLLM_API_KEY when set).")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- COMMAND [ARGS]...")
def exec_cmd(report_path, smoke, strict, health_timeout, smoke_timeout, api_key_env, compute, command, **kw):
    """Lint COMMAND (`vllm serve …`) against this machine, then exec it — or refuse with exit 1."""
    from ascend_doctor.core.engine import finalize, run_static

    argv = list(command)
    started_at, t0 = datetime.now(timezone.utc), time.monotonic()
    replay = kw.get("replay")
    if replay and smoke:
        raise InputError(T("--smoke needs the machine the command runs on; --replay judges a recorded one and never "
                           "starts the command"))
    outputs = output_kwargs(kw)
    if report_path:
        outputs.targets.insert(0, ("json", report_path))
    stages = ("static", "serve") + (("compute",) if compute else ())

    state, crash = guarded_run("exec", started_at, t0, kw.get("fail_on") or "error",
                               lambda: _setup(kw, stages, argv, outputs, smoke))
    if crash is not None:
        _refuse_internal(state, crash, outputs)
    config, options, registry, host, facts, cmd = state
    if hook_exec.skip_requested() and not replay:
        _say(T("WARNING: {skip_env}=1 — ALL CHECKS SKIPPED, starting the command unchecked: {display}",
               skip_env=hook_exec.SKIP_ENV, display=cmd.display))
        if outputs.targets:
            _write_report(_skipped_report(host, options, cmd.argv, started_at, t0), outputs)
        if smoke:
            return _supervise(argv, cmd, None, registry, options, config, outputs, strict=False,
                              health_timeout=health_timeout, smoke_timeout=smoke_timeout, api_key_env=api_key_env,
                              t0=t0, run_smoke=False)
        sys.exit(hook_exec.become(argv))

    def work():
        opts = options
        report = run_static(host, registry, opts, config, command="exec", linted_command=cmd.argv,
                            started=(started_at, t0), stages=stages, facts=facts)
        notes = report.note_msgs()
        chosen = facts.try_fact("serving_python")
        if chosen is not None and chosen.path and chosen.how in (HOW_FLAG, HOW_COMMAND):
            notes.append(T("serving python: {python}", python=chosen.path))
        notes += [T("command line: {config_error}", config_error=n) for n in cmd.notes]
        if cmd.config_error:
            notes.append(T("command line: {config_error}", config_error=cmd.config_error))
        return report.with_notes(notes), opts

    result, crash = guarded_run("exec", started_at, t0, options.fail_on.value, work)
    if crash is not None:
        _refuse_internal(result, crash, outputs)
    report, options = result
    if replay:
        # The verdict is about the recorded machine: starting the command here would run it somewhere it was not
        # judged (#22). The report is the result; the exit code is its verdict.
        _write_report(report, outputs)
        _say(T("{verdict} for the machine recorded in {snapshot} ({summary}); the command was linted, not started: "
               "exec starts it only on the machine it judges",
               verdict=T("NOT READY") if report.exit_code else T("ready"),
               snapshot=replay, summary=_summary(report)))
        sys.exit(report.exit_code)
    if report.exit_code != 0:
        _write_report(report, outputs)
        _say(T("NOT starting the command: findings at or above --fail-on {value} (set {skip_env}=1 to bypass)",
               value=report.fail_on.value, skip_env=hook_exec.SKIP_ENV))
        sys.exit(report.exit_code)
    if smoke:
        return _supervise(argv, cmd, report, registry, options, config, outputs, strict=strict,
                          health_timeout=health_timeout, smoke_timeout=smoke_timeout, api_key_env=api_key_env,
                          t0=t0, run_smoke=True, finalize=finalize)
    _write_report(report, outputs)
    _say(T("checks passed ({summary}); exec: {display}", summary=_summary(report), display=cmd.display))
    sys.exit(hook_exec.become(argv))


def _setup(kw: dict, stages: tuple, argv: list[str], outputs: Outputs, smoke: bool):
    """(config, options, registry, host, facts, serve_cmd). The command is an option from the start: the serving
    interpreter is read off it once (`serve_entry`), by the probes, and nothing rewrites the options after they have
    started. A smoke whose checks the selection leaves out is refused here, before anything runs (#40)."""
    config, options, registry, host, facts = prepare(**kw, stages=stages, serve_argv=argv)
    outputs.for_run(registry, options)
    if smoke:
        from ascend_doctor.smoke.stage import smoke_checks

        smoke_checks(registry, options)
    if facts is None:  # a selection: no probe was started early
        from ascend_doctor.facts import FactStore

        facts = FactStore(host, options)
    return config, options, registry, host, facts, facts.fact("serve_cmd")


def _unjudged(smoke_findings) -> list[str]:
    """The smoke checks of severity error or critical that said unknown (a timeout, a refused scenario)."""
    return [f.code for f in smoke_findings if f.status.value == "unknown" and f.severity.value in ("error", "critical")]


def _signal_name(signum: int) -> str:
    import signal

    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _refuse_internal(report, crash, outputs: Outputs) -> None:
    _write_report(report, outputs)
    _say(T("internal error: {name}: {crash}; not starting the command (set {skip_env}=1 to bypass the checks)",
           name=type(crash).__name__, crash=crash, skip_env=hook_exec.SKIP_ENV))
    sys.exit(EXIT_INTERNAL)


def _summary(report) -> str:
    c = report.counts
    return T("{passed} passed, {warnings} warnings, {failed} failed, {unknown} unknown, {skipped} skipped",
             passed=c.pass_, warnings=c.warn, failed=c.fail, unknown=c.unknown, skipped=c.skip)


def _smoke_key_env(cmd_secret: ServeCommand, api_key_env: Optional[str]) -> Optional[str]:
    """The env var name the smoke client reads the key from: --api-key-env, the command's --api-key, VLLM_API_KEY."""
    if api_key_env:
        return api_key_env
    key = cmd_secret.get("api_key")
    if isinstance(key, list):
        key = key[0] if key else None
    if isinstance(key, str) and key:
        register_secret(key)
        os.environ["ASCEND_DOCTOR_EXEC_API_KEY"] = key  # our own process only; the child already has its argv
        return "ASCEND_DOCTOR_EXEC_API_KEY"
    return "VLLM_API_KEY" if os.environ.get("VLLM_API_KEY") else None


def _supervise(argv, cmd, report, registry, options, config, outputs: Outputs, *, strict, health_timeout,
               smoke_timeout, api_key_env, t0, run_smoke, finalize=None):
    host, port = served_address(cmd)
    base = f"http://{host}:{port}"
    holder = hook_exec.port_holder(host, port) if run_smoke else None
    if holder is not None:
        # Our command cannot bind the port; a health poll would find that other server and smoke-test it (#23).
        _say(T("{host}:{port} is already held by {holder}: the command will not be able to bind it, and the smoke "
               "would judge that server instead — the smoke will not run", host=host, port=port, holder=holder))
        run_smoke = False
    sup = hook_exec.Supervisor(argv, _say)
    try:
        sup.start()
    except OSError as exc:
        _say(T("cannot start {argv}: {strerror}", argv=argv[0], strerror=exc.strerror or exc))
        sys.exit(127 if isinstance(exc, FileNotFoundError) else 126)
    _say(T("started pid {pid}: {display}; waiting for {base} (up to {health_timeout}s)", pid=sup.child.pid,
           display=cmd.display, base=base, health_timeout=format(health_timeout, "g")))
    healthy, what = (False, T("not waiting for {base}: the port was held before the command started", base=base)) \
        if holder is not None else sup.wait_healthy(base, health_timeout)
    _say(what)
    if not healthy and holder is not None:
        sys.exit(sup.wait())  # the command's own exit (vLLM: "address already in use") is the verdict
    if not healthy:
        if sup.child.poll() is not None:
            sys.exit(sup.wait())
        if sup.received or strict:
            _say(T("stopping the server"))
            sys.exit(sup.stop() if sup.received else 1)
        _say(T("the smoke did not run; the server keeps running"))
        sys.exit(sup.wait())
    if run_smoke:
        from ascend_doctor.smoke.stage import smoke_findings

        secret_cmd = parse_serve(argv, Knowledge.for_options(options).matrix, keep_secrets=True)
        served = cmd.get("served_model_name")
        model = served[0] if isinstance(served, list) else served if isinstance(served, str) else None
        stopped = None
        try:
            with sup.stop_on_signal():
                extra = smoke_findings(registry, base_url=f"{base}/v1", model=model,
                                       api_key_env=_smoke_key_env(secret_cmd, api_key_env), timeout=smoke_timeout,
                                       options=options)
        except hook_exec.ServerStopping as exc:
            stopped = exc.signum
            extra = []
        except InputError as exc:
            _say(T("smoke not run: {exc}", exc=exc))
            extra = []
        except Exception as exc:  # a bug of ours must not orphan the server: report it and keep supervising
            from ascend_doctor.cli.exits import internal_error_report

            extra = internal_error_report(exc, "exec", datetime.now(timezone.utc), t0).findings
        report = finalize(report, extra, config, duration_s=time.monotonic() - t0)
        if stopped is not None:
            name = _signal_name(stopped)
            report = report.with_notes([*report.note_msgs(), T("{name} arrived during the smoke: the smoke stopped "
                                                               "(the server is shutting down)", name=name)])
            _write_report(report, outputs)
            _say(T("{name} received: smoke stopped; waiting for the server to exit", name=name))
            sys.exit(sup.wait())
        _write_report(report, outputs)
        if sup.received:  # a signal arrived while the report was written: the server's exit decides
            sys.exit(sup.wait())
        if report.exit_code != 0:
            if strict:
                _say(T("smoke FAILED (--strict): stopping the server"))
                sup.stop()
                sys.exit(report.exit_code)
            _say(T("smoke FAILED; the server keeps running (use --strict to stop it)"))
        elif _unjudged(extra):  # a smoke check that timed out or could not judge is not a pass (#40 item 3)
            _say(T("smoke INCOMPLETE ({summary}): {incomplete} could not judge the server; serving",
                   summary=_summary(report), incomplete=", ".join(_unjudged(extra))))
        else:
            _say(T("smoke passed ({summary}); serving", summary=_summary(report)))
    sys.exit(sup.wait())
