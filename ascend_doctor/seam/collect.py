"""`collect`: run every probe through a RecordingHost and return the snapshot of what the machine answered."""

from __future__ import annotations

from typing import Optional, Sequence

from ascend_doctor.core.errors import FactUnavailable, InputError
from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.i18n import T
from ascend_doctor.probes import load_probes
from ascend_doctor.seam.host import Host
from ascend_doctor.seam.snapshot import RecordingHost, Snapshot


def collect_snapshot(host: Host, options: RunOptions, description: str = "",
                     serve_argv: Optional[Sequence[str]] = None) -> Snapshot:
    """Record every probe's questions and the host's answers (secrets redacted as they are recorded).

    With `serve_argv` (the `vllm serve …` line that will run on this node) the serve probes run as well, as
    `ascend-doctor exec` would run them: the snapshot then also holds the model directory's listing and config files
    (config.json, tokenizer_config.json, chat templates, quantisation description), a `--config` YAML, and the serving
    interpreter `exec` would infer. `exec --replay SNAPSHOT -- COMMAND` on another machine then judges the model-level
    checks (SERVE2xx) instead of reporting them unknown. The command line itself is not stored.
    """
    rec = RecordingHost(host)
    rec.system()
    rec.env()
    if serve_argv:  # before any probe runs: the serving interpreter is read off the command (`serve_entry`)
        options = options.model_copy(update={"serve_argv": list(serve_argv)})
    store = FactStore(rec, options)
    if serve_argv:
        cmd = store.fact("serve_cmd")
        if not cmd.recognized:
            raise InputError(T("collect -- COMMAND: {serve_argv} is not a `vllm serve …` (or `python -m "
                               "vllm.entrypoints.openai.api_server …`) command line",
                               serve_argv=repr(' '.join(serve_argv)[:200])))
    names = sorted(n for n, f in load_probes().items() if getattr(f, "collected", True))
    store.start_all(names)
    for name in names:
        try:
            store.fact(name)
        except FactUnavailable:
            pass  # the snapshot holds the failed answers themselves; replay reproduces the same unavailability
    snap = rec.snapshot
    snap.description = description
    snap.notes = [*snap.notes, *(str(n) for n in rec.reap_strays())]
    return snap
