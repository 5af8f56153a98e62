"""`ascend-doctor smoke`: tool-calling smoke test (and optional load) against a live OpenAI-compatible server."""

from __future__ import annotations

import sys
import time
from datetime import datetime, timezone
from urllib.parse import urlsplit

import click

from ascend_doctor.cli.exits import EXIT_HELP, exit_internal, guarded_run
from ascend_doctor.cli.i18n_click import DoctorCommand
from ascend_doctor.cli.options import (
    SECONDS,
    compute_options,
    output_options,
    python_option,
    selection_options,
    selection_setup,
)
from ascend_doctor.cli.output import emit, output_kwargs
from ascend_doctor.core.errors import InputError
from ascend_doctor.i18n import T


@click.command("smoke", cls=DoctorCommand, epilog=EXIT_HELP)
@click.option("--base-url", metavar="URL",
              help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1 (only this URL is contacted). Required "
                   "unless --compute.")
@click.option("--direct-url", metavar="URL",
              help="Also run the scenarios straight against vLLM at URL and report every way the server at "
                   "--base-url (a gateway or proxy) answered differently (SRV106).")
@click.option("--model", metavar="NAME", help="Model to test (default: the only model the server lists).")
@click.option("--api-key-env", metavar="VAR", help="Environment variable holding the API key (never printed).")
@click.option("--timeout", type=SECONDS, default=60.0, show_default=True, metavar="SECONDS",
              help="Per-request timeout (streams included).")
@click.option("--load", "load", type=int, default=None, metavar="N", help="Also send N tool-call requests ...")
@click.option("--concurrency", type=int, default=8, show_default=True, metavar="C", help="... with C in flight.")
@click.option("--load-deadline", type=SECONDS, default=None, metavar="SECONDS",
              help="Stop the load after this long (default: one --timeout per wave of C requests, plus one).")
@compute_options
@python_option("With --compute: the interpreter of the serving environment (default: this one).")
@selection_options
@output_options
def smoke(base_url, direct_url, model, api_key_env, timeout, load, concurrency, load_deadline, compute, compute_ranks,
          compute_timeout, python, matrix, checks_dirs, select, ignore, config_path, fail_on, fail_on_unknown, **kw):
    """Smoke-test tool calling on a live vLLM (or any OpenAI-compatible) server: named/required/auto/none
    tool_choice, argument JSON, streaming deltas, parallel calls, the tool-result round trip, markup leaks.
    With --compute (no server needed): prove every NPU computes and the NPUs all-reduce, before vLLM starts."""
    from ascend_doctor import __version__
    from ascend_doctor.core.evaluator import apply_config
    from ascend_doctor.report import HostSummary, build_report
    from ascend_doctor.smoke.client import api_key_from_env, normalize_base_url

    started_at, t0 = datetime.now(timezone.utc), time.monotonic()
    outputs = output_kwargs(kw)
    if not base_url and not compute:
        raise InputError(T("give --base-url URL (the live smoke), --compute (the NPU compute smoke), or both"))
    if not base_url and (direct_url or load is not None):
        raise InputError(T("--direct-url and --load need --base-url"))
    if python and not compute:
        raise InputError(T("--python is for --compute (the live smoke talks to a server, not an interpreter)"))
    url = normalize_base_url(base_url) if base_url else None
    direct = normalize_base_url(direct_url) if direct_url else None
    if direct is not None and direct == url:
        raise InputError(T("--direct-url is the same URL as --base-url: give the gateway's URL and vLLM's own"))
    if timeout <= 0:
        raise InputError(T("--timeout must be a positive number of seconds"))
    if load is not None and load < 1:
        raise InputError(T("--load must be at least 1"))
    if concurrency < 1:
        raise InputError(T("--concurrency must be at least 1"))
    if load_deadline is not None and load_deadline <= 0:
        raise InputError(T("--load-deadline must be a positive number of seconds"))
    api_key_from_env(api_key_env)  # unset variable -> input error before anything is sent

    def work():
        stages = (("compute",) if compute else ()) + (("smoke",) if url else ())
        config, options, registry = selection_setup(config_path, select, ignore, fail_on, fail_on_unknown,
                                                    checks_dirs, matrix, stage=stages, python=python,
                                                    compute_ranks=compute_ranks, compute_timeout=compute_timeout)
        outputs.for_run(registry, options)
        findings, notes, hostname, source = [], [], urlsplit(url).hostname if url else None, "smoke:" + (url or "")
        if compute:
            from ascend_doctor.cli.options import check_host_paths
            from ascend_doctor.compute.stage import compute_findings
            from ascend_doctor.seam.localhost import LocalHost

            host = LocalHost()
            check_host_paths(options, config, host)
            findings, notes = compute_findings(registry, host, options)
            hostname = hostname or host.system().hostname or "localhost"
            source = "compute" if not url else f"compute+smoke:{url}"
        if url:
            findings += _live(url, direct, options, registry, model, api_key_env, timeout, load, concurrency,
                              load_deadline, notes, outputs.console_on_stream)
        notes = apply_config(findings, config) + notes
        return build_report(tool_version=__version__, host=HostSummary(hostname=hostname or "unknown", source=source),
                            started_at=started_at, duration_s=time.monotonic() - t0, fail_on=options.fail_on,
                            findings=findings, command="smoke", notes=notes,
                            fail_on_unknown=options.fail_on_unknown)

    report, crash = guarded_run("smoke", started_at, t0, fail_on or "error", work)
    emit(report, outputs)
    if crash is not None:
        exit_internal(crash)
    sys.exit(report.exit_code)


def _live(url, direct, options, registry, model, api_key_env, timeout, load, concurrency, load_deadline, notes,
          console_on_stream):
    """The live smoke's findings; with --direct-url, a note that the comparison was made."""
    from ascend_doctor.smoke.stage import evaluate_smoke, gather


    progress = None
    if sys.stderr.isatty() and console_on_stream:
        progress = lambda name: click.echo(f"  smoke: {name} …", err=True)  # noqa: E731
    facts = gather(url, model=model, api_key_env=api_key_env, timeout=timeout, load=load, concurrency=concurrency,
                   load_deadline=load_deadline, progress=progress, show_load_progress=sys.stderr.isatty())
    direct_facts = None
    if direct is not None:  # same sentinel: the round trips are comparable byte for byte
        direct_facts = gather(direct, model=facts.model or model, api_key_env=api_key_env, timeout=timeout,
                              sentinel=facts.sentinel, progress=progress)
        notes.append(T("compared with the direct server {url} (SRV106)", url=direct))
    return evaluate_smoke(registry, facts, options, direct=direct_facts)
