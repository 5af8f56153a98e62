"""The exit-code contract, and the one place that maps what went wrong onto it.

  0    nothing at or above --fail-on (default: error)
  1    findings at or above --fail-on
  2    usage or input error: bad option, missing path, unreadable snapshot, invalid matrix or config (one line)
  3    internal error of ascend-doctor itself (the report, with an `error` finding, is still written)
  130  interrupted (Ctrl-C)
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from datetime import datetime
from typing import Any, Callable, NoReturn

import click

from ascend_doctor import __version__
from ascend_doctor.core.errors import InputError
from ascend_doctor.i18n import T

# 1 (findings at or above --fail-on) is the report's own exit_code; the others are decided here.
EXIT_OK, EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 2, 3, 130

EXIT_HELP = """\b
Exit codes:
  0    nothing at or above --fail-on (default: error)
  1    findings at or above --fail-on
  2    usage or input error (bad option, missing path, unreadable snapshot, invalid matrix or config)
  3    internal error of ascend-doctor itself
  130  interrupted (Ctrl-C)
"""

DEBUG_ENV = "ASCEND_DOCTOR_DEBUG"


def say_error(message: str, kind: str = "error") -> None:
    """One line on stderr, `ascend-doctor: error: …`, with secrets masked and undecodable bytes escaped."""
    from ascend_doctor.i18n import localize, split, tr
    from ascend_doctor.text.redact import redact_text
    from ascend_doctor.text.textsafe import escape_text

    text, template, fields = split(message)
    line = escape_text(redact_text(localize(str(text), template, fields))).replace("\n", " ")
    label = {"error": tr("error"), "stopped": tr("stopped"), "internal error": tr("internal error")}.get(kind, kind)
    click.echo(f"ascend-doctor: {label}: {line}", err=True)


def internal_error_report(exc: BaseException, command: str, started_at: datetime, t0: float, fail_on: str = "error"):
    """A report with one `error` finding, so that the outputs are written even when the tool itself broke."""
    from ascend_doctor.report import Finding, HostSummary, Severity, Status, build_report

    f = Finding(code="DOCTOR001", slug="internal-error", title="ascend-doctor failed internally", family="DOCTOR",
                status=Status.ERROR, severity=Severity.CRITICAL, level=Severity.CRITICAL,
                message=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(),
                remediation="Re-run with ASCEND_DOCTOR_DEBUG=1 and report the traceback with the snapshot "
                            "(`ascend-doctor collect -o host.snapshot.json`).")
    r = build_report(tool_version=__version__, host=HostSummary(hostname="unknown"), started_at=started_at,
                     duration_s=time.monotonic() - t0, fail_on=Severity(fail_on), findings=[f], command=command)
    return r.model_copy(update={"exit_code": EXIT_INTERNAL})


def guarded_run(command: str, started_at: datetime, t0: float, fail_on: str, work: Callable[[], Any]):
    """(report, None) from `work()`, or (internal-error report, exception) when the tool itself broke.

    `work` holds everything after option parsing — set-up (config, registry, matrix, host) included — so an internal
    error anywhere still produces a report. InputError passes through (exit 2); ASCEND_DOCTOR_DEBUG=1 re-raises.
    """
    try:
        return work(), None
    except (InputError, KeyboardInterrupt):
        raise
    except Exception as exc:  # RecursionError included: deeply nested input past a loader is still a report
        if os.environ.get(DEBUG_ENV):
            raise
        return internal_error_report(exc, command, started_at, t0, fail_on), exc


def exit_internal(crash: BaseException) -> NoReturn:
    say_error(T("{error} (set {variable}=1 for the traceback)", error=f"{type(crash).__name__}: {crash}",
                variable=DEBUG_ENV), kind="internal error")
    sys.exit(EXIT_INTERNAL)


def stop_children() -> None:
    """End every command the doctor is running (their process groups) and start no more: an interrupted doctor must
    not leave a hung npu-smi or a compute rank behind, nor wait out their deadlines before it exits."""
    localhost = sys.modules.get("ascend_doctor.seam.localhost")
    if localhost is not None:  # not imported: nothing was started
        localhost.stop_children()


def _on_terminate(signum, frame) -> None:  # noqa: ARG001 (a signal handler's signature)
    import signal

    stop_children()
    signal.signal(signum, signal.SIG_DFL)  # then die of the signal, as a supervisor expects (exit 128+N)
    os.kill(os.getpid(), signum)


def install_stop_handlers() -> None:
    """SIGTERM and SIGHUP end the doctor's commands before the doctor (Python's default would exit at once and leave
    them running in their own sessions); Ctrl-C does the same through KeyboardInterrupt (DoctorGroupMixin)."""
    import signal

    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None and signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, _on_terminate)


def termination_on_error(args: Any, group: Any, message: Any) -> None:
    """An input or usage error (exit 2) in a pod: the termination log says so, as a judged run's would (#40 item 15)
    — `kubectl describe pod` otherwise shows nothing for a pod stopped by a bad option. `--termination-log` is read
    from the raw arguments (click may not have parsed them); never raises: the error itself is what matters."""
    try:
        from ascend_doctor.cli.output import termination_log
        from ascend_doctor.i18n import localize, split
        from ascend_doctor.render.termination import error_message
        from ascend_doctor.seam.atomicfile import write_atomic
        from ascend_doctor.text.redact import redact_text

        argv = [str(a) for a in (sys.argv[1:] if args is None else args)]
        given = None
        for i, a in enumerate(argv):
            if a == "--":
                break
            if a == "--termination-log" and i + 1 < len(argv):
                given = argv[i + 1]
            elif a.startswith("--termination-log="):
                given = a.split("=", 1)[1]
        dest = termination_log(given)
        if not dest:
            return
        try:
            names = set(group.list_commands(click.Context(group)))
        except Exception:  # noqa: BLE001
            names = set()
        command = next((a for a in argv if a in names), None)
        text, template, fields = split(message)
        write_atomic(dest, error_message(command, redact_text(localize(str(text), template, fields))))
    except Exception:  # noqa: BLE001 (a failure here must not hide the error being reported)
        pass


class DoctorGroupMixin:
    """Maps InputError and click's usage errors onto exit 2 with one line (not click's three-line block)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):  # type: ignore[override]
        try:
            rv = super().main(args=args, prog_name=prog_name, complete_var=complete_var,  # type: ignore[misc]
                              standalone_mode=False, **extra)
        except click.exceptions.Exit as exc:  # ctx.exit(n) outside click's own handling
            rv = exc.exit_code
        except click.exceptions.Abort:
            stop_children()
            say_error(T("interrupted"), kind="stopped")
            sys.exit(EXIT_INTERRUPTED)
        except click.UsageError as exc:
            if type(exc).__name__ == "NoArgsIsHelpError" and exc.ctx is not None:
                # `ascend-doctor` (or a group) with nothing after it: the help, as `--help` prints it (click >= 8.2
                # raises this; 8.1 prints the help itself)
                click.echo(exc.ctx.get_help())
                sys.exit(EXIT_OK)
            hint = ""
            if exc.ctx is not None and exc.ctx.command_path:
                hint = T(" (see `{command} --help`)", command=exc.ctx.command_path)
            say_error(T("{message}{hint}", message=exc.format_message(), hint=hint))
            termination_on_error(args, self, exc.format_message())
            sys.exit(EXIT_INPUT)
        except click.ClickException as exc:
            say_error(exc.format_message())
            if (exc.exit_code or EXIT_INPUT) == EXIT_INPUT:
                termination_on_error(args, self, exc.format_message())
            sys.exit(exc.exit_code if exc.exit_code else EXIT_INPUT)
        except InputError as exc:
            message = exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], str) else str(exc)
            say_error(message)
            termination_on_error(args, self, message)
            sys.exit(EXIT_INPUT)
        except KeyboardInterrupt:
            stop_children()
            say_error(T("interrupted"), kind="stopped")
            sys.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:  # `ascend-doctor check | head`: the reader left, nothing more to say
            try:
                sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (keep the interpreter's final flush quiet)
            except OSError:
                pass
            sys.exit(EXIT_OK)
        except SystemExit:
            raise
        except Exception as exc:
            if os.environ.get(DEBUG_ENV):
                raise
            exit_internal(exc)
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else EXIT_OK)
