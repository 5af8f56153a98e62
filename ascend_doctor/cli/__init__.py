"""The `ascend-doctor` command line: one package, one module per command group.

  exits.py     the exit-code contract and the mapping of errors onto it (one line, no traceback)
  options.py   the options commands share and the set-up they share (config, run options, registry, host)
  output.py    every output: redaction, undecodable bytes, atomic files, `-` for stdout
  check.py     check, collect          info.py    list, explain, schema
  exec.py      exec (the pre-deploy hook)          smoke.py   smoke
  fleet.py     fleet, diff             parse.py   parse          matrix.py  matrix …    diagnose.py  diagnose

Each command's module is imported only when that command runs (or `--help` lists them): `check` does not pay for
httpx (smoke), Ray (fleet) or the hook.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Optional

import click

from ascend_doctor import __version__
from ascend_doctor.cli.exits import EXIT_HELP, DoctorGroupMixin
from ascend_doctor.cli.i18n_click import DoctorCommand, DoctorContext, install, lang_from_argv
from ascend_doctor.cli.options import lang_option

# name -> (module, attribute)
COMMANDS = {
    "check": ("ascend_doctor.cli.check", "check"),
    "collect": ("ascend_doctor.cli.check", "collect"),
    "list": ("ascend_doctor.cli.info", "list_checks"),
    "explain": ("ascend_doctor.cli.info", "explain"),
    "schema": ("ascend_doctor.cli.info", "schema"),
    "parse": ("ascend_doctor.cli.parse", "parse"),
    "matrix": ("ascend_doctor.cli.matrix", "matrix"),
    "diagnose": ("ascend_doctor.cli.diagnose", "diagnose"),
    "smoke": ("ascend_doctor.cli.smoke", "smoke"),
    "exec": ("ascend_doctor.cli.exec", "exec_cmd"),
    "fleet": ("ascend_doctor.cli.fleet", "fleet"),
    "diff": ("ascend_doctor.cli.fleet", "diff"),
    "triage": ("ascend_doctor.cli.triage", "triage"),
    "plan": ("ascend_doctor.cli.plan", "plan"),
}


class DoctorGroup(DoctorGroupMixin, click.Group):
    """The root group: commands loaded on demand, errors mapped onto the exit-code contract."""

    context_class = DoctorContext
    command_class = DoctorCommand

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx, name):
        cmd = super().get_command(ctx, name)
        if cmd is None and name in COMMANDS:
            mod, attr = COMMANDS[name]
            cmd = getattr(importlib.import_module(mod), attr)
        return cmd

    def resolve_command(self, ctx, args):
        """click's own resolution, with the closest command named for a typo (`chek` -> check), as options have."""
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            import difflib

            from ascend_doctor.i18n import T

            close = difflib.get_close_matches(args[0], self.list_commands(ctx), n=2, cutoff=0.6)
            if close:
                ctx.fail(T("No such command {name}; did you mean {close}?", name=repr(args[0]),
                           close=" or ".join(close)))
        return super().resolve_command(ctx, args)


@click.group(cls=DoctorGroup, epilog=EXIT_HELP, context_settings={"help_option_names": ["-h", "--help"],
                                                                   "max_content_width": 110})
@click.version_option(__version__, prog_name="ascend-doctor")
@lang_option()
def cli():
    """Will this Ascend NPU + vllm-ascend stack serve? Checks driver, firmware, CANN, torch/torch_npu,
    vllm/vllm-ascend, host knobs, HCCL, devices and containers, then (optionally) smoke-tests the live server's
    tool calling. Every finding says what was seen, why it matters, and the exact fix."""
    import os

    from ascend_doctor.text.redact import register_env_secrets
    from ascend_doctor.text.textsafe import install_terminal_streams

    # Text from hosts, pastes, servers and model folders is shown, never obeyed by the terminal (#40 item 7): every
    # write to stdout/stderr goes through textsafe.printable from here on (main() does it earlier for its own errors).
    install_terminal_streams()
    # The user's own secrets (HF_TOKEN, DB_PASSWORD …) are masked in every command's output, not only where the
    # doctor reads the environment: a log given to triage or diagnose may hold them verbatim.
    register_env_secrets(dict(os.environ))


def main(argv: Optional[list[str]] = None) -> None:
    """Console-script entry point (`ascend-doctor`, `python -m ascend_doctor`)."""
    for stream in (sys.stdout, sys.stderr):
        # Last line of defence: a character the terminal's encoding cannot show is escaped, never a crash.
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass
    from ascend_doctor import i18n
    from ascend_doctor.cli.exits import install_stop_handlers
    from ascend_doctor.seam.strays import contain
    from ascend_doctor.text.textsafe import install_terminal_streams

    install_terminal_streams()
    install_stop_handlers()
    contain()  # orphans of the probes come back to us, to be swept (seam/strays.py)
    install()
    env_lang = os.environ.get("ASCEND_DOCTOR_LANG", "").strip()
    if env_lang and i18n.normalize(env_lang) is None:  # as `--lang fr` is refused, not silently ignored (#22)
        sys.stderr.write(f"ascend-doctor: error: ASCEND_DOCTOR_LANG={env_lang!r} is not one of zh, en\n")
        raise SystemExit(2)
    i18n.set_option(lang_from_argv(sys.argv[1:] if argv is None else argv))
    cli.main(args=argv, prog_name="ascend-doctor")
