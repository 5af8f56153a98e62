"""Snapshots: record what a host answered (`collect`) and answer it back offline (`--replay`).

Format (JSON, `format: "ascend-doctor-snapshot"`, `version: 1`) — see docs/snapshot-format.md. Every section is
optional, so a user can hand-build a snapshot from pasted outputs: a question the snapshot has no answer for is
answered as "not found" (a command that is not installed, a file that does not exist).
"""

from __future__ import annotations

import json
import re
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

from pydantic import Field, ValidationError

from ascend_doctor import __version__
from ascend_doctor.core.errors import InputError
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T
from ascend_doctor.seam.host import (
    DEFAULT_MAX_OUTPUT,
    NOT_FOUND,
    NOT_RECORDED,
    REPLAY_COMMAND_MISS,
    REPLAY_MISS_NOTE,
    TIMEOUT,
    CommandResult,
    DirResult,
    DiskResult,
    FileResult,
    Host,
    LinkResult,
    PythonEnv,
    SystemInfo,
)
from ascend_doctor.text.jsonread import loads
from ascend_doctor.text.redact import redact_argv, redact_env, redact_text, redact_tree, register_env_secrets
from ascend_doctor.text.textsafe import dump_json, restore_keys, undecodable_note, undecodable_paths

SNAPSHOT_FORMAT = "ascend-doctor-snapshot"
SNAPSHOT_VERSION = 1
DEFAULT_PYTHON_KEY = "default"  # the interpreter that serves, when --python was not given


_SCRIPT_MARK = re.compile(r"^# ascend-doctor-script: ([\w.-]+)$", re.MULTILINE)


def canonical_argv(argv: list[str]) -> list[str]:
    """argv as snapshots store it: an inline `-c` script of ours is replaced by `<script:NAME>`.

    Our child-process scripts (e.g. the torch_npu import probe) carry a `# ascend-doctor-script: NAME` line, so a
    snapshot stays valid when the script's text changes and a hand-built snapshot can name it.
    """
    out = [str(a) for a in argv]
    for i in range(len(out) - 1):
        if out[i] == "-c":
            m = _SCRIPT_MARK.search(out[i + 1])
            if m:
                out[i + 1] = f"<script:{m.group(1)}>"
    return out


class CommandEntry(Model, extra="forbid"):
    """One recorded command. Hand-built snapshots usually give only argv, stdout and maybe returncode."""

    argv: list[str]
    returncode: Optional[int] = 0
    stdout: str = ""
    stderr: str = ""
    error: Optional[str] = None
    error_message: str = ""
    truncated: bool = False
    duration_s: float = 0.0


class FileEntry(Model, extra="forbid"):
    content: Optional[str] = None
    error: Optional[str] = None
    error_message: str = ""
    truncated: bool = False


class DirEntry(Model, extra="forbid"):
    entries: Optional[list[str]] = None
    error: Optional[str] = None
    error_message: str = ""


class LinkEntry(Model, extra="forbid"):
    target: Optional[str] = None
    resolved: Optional[str] = None
    error: Optional[str] = None


class DiskEntry(Model, extra="forbid"):
    total_bytes: Optional[int] = None
    free_bytes: Optional[int] = None
    error: Optional[str] = None
    error_message: str = ""


class Snapshot(Model, extra="forbid"):
    """Everything a host answered, keyed by the question."""

    format: str = SNAPSHOT_FORMAT
    version: int = SNAPSHOT_VERSION
    tool_version: str = __version__
    collected_at: Optional[datetime] = None
    description: str = Field("", description="Free text: what this host is (example hosts document themselves here)")
    system: SystemInfo = Field(default_factory=SystemInfo)
    env: dict[str, str] = Field(default_factory=dict)
    commands: list[CommandEntry] = Field(default_factory=list)
    files: dict[str, FileEntry] = Field(default_factory=dict)
    dirs: dict[str, DirEntry] = Field(default_factory=dict)
    links: dict[str, LinkEntry] = Field(default_factory=dict)
    disk: dict[str, DiskEntry] = Field(default_factory=dict)
    python_envs: dict[str, PythonEnv] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list, description="What the recorder wants a reader to know (where "
                             "bytes were not UTF-8, what timed out)")

    def dump(self) -> str:
        """The snapshot as JSON; undecodable bytes stay lossless as `\\udcNN` escapes, and `notes` says where."""
        data = restore_keys(self.model_dump(mode="json", exclude_none=False), self.model_dump(exclude_none=False))
        data = _redacted(data)
        places = undecodable_paths({k: v for k, v in data.items() if k != "notes"})
        if places:
            note = undecodable_note(places)
            if note not in data["notes"]:
                data["notes"] = [*data["notes"], note]
        return dump_json(data, indent=1) + "\n"


def _redacted(data: dict) -> dict:
    """The whole snapshot once more through the redactor as it is written, keys included: the recorder masks each
    answer as it records it, but a secret can sit where no recorder looked (a path in a listing, a model folder's
    name, a package's metadata). Python source keeps its `name: value` annotations (`redact_text(code=True)`)."""
    files = data.get("files") or {}
    out = {k: redact_tree(v) for k, v in data.items() if k != "files"}
    out["files"] = {redact_text(path): ({**entry, "content": redact_text(entry["content"], code=path.endswith(".py"))}
                                        if isinstance(entry, dict) and isinstance(entry.get("content"), str)
                                        else redact_tree(entry))
                    for path, entry in files.items()}
    return out


def load_snapshot(path: str | Path) -> Snapshot:
    """Read and validate a snapshot file (`-`: standard input); any problem is an InputError naming the file."""
    from ascend_doctor.seam.inputs import read_bytes

    p = Path("<stdin>") if str(path) == "-" else Path(path)
    try:
        raw = read_bytes(str(path), "snapshot", label=str(p)).decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(T("snapshot {p} is not UTF-8 text", p=p)) from None
    try:
        data = loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(T("snapshot {p} is not valid JSON (truncated?): {msg} at line {lineno}", p=p, msg=exc.msg,
                           lineno=exc.lineno)) from None
    except ValueError as exc:  # a 5,000-digit number, nesting deeper than Python's recursion limit
        raise InputError(T("snapshot {p} is not a readable JSON snapshot: {exc}", p=p, exc=exc)) from None
    return snapshot_from_data(data, p)


def snapshot_from_data(data: object, p: str | Path) -> Snapshot:
    """A snapshot from its parsed JSON (`diff` reads a file once to learn whether it is a snapshot or a report);
    InputError naming `p` when it is not one this version reads."""
    if not isinstance(data, dict) or data.get("format") != SNAPSHOT_FORMAT:
        raise InputError(T("{p} is not an ascend-doctor snapshot (expected \"format\": \"{snapshot_format}\")", p=p,
                           snapshot_format=SNAPSHOT_FORMAT))
    if data.get("version") != SNAPSHOT_VERSION:
        raise InputError(
            T("snapshot {p} has format version {data}; this ascend-doctor reads version {snapshot_version} (re-run "
              "`ascend-doctor collect` with this version)", p=p, data=repr(data.get('version')),
              snapshot_version=SNAPSHOT_VERSION)
        )
    try:
        return Snapshot.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        raise InputError(T("snapshot {p}: {loc}: {err}", p=p, loc=loc, err=err['msg'])) from None


class ReplayHost:
    """Answers every host question from a snapshot; unanswered questions read as 'not found'.

    `timing=True` (`--replay-timing`) answers each command after its recorded `duration_s`, and a command that took
    longer than the caller's timeout times out as it would have on the host: a replay then shows how long the run
    takes, and what it misses, on the real machine.
    """

    def __init__(self, snapshot: Snapshot, label: str = "snapshot", timing: bool = False):
        self.snapshot = snapshot
        self.label = label
        self.timing = timing
        register_env_secrets(snapshot.env)  # a hand-built snapshot may hold real ones: masked wherever they appear
        self._commands: dict[tuple[str, ...], CommandEntry] = {}
        for c in snapshot.commands:
            self._commands.setdefault(tuple(canonical_argv(c.argv)), c)

    def describe(self) -> str:
        return f"replay:{self.label}"

    def run(self, argv: list[str], timeout: float = 10.0) -> CommandResult:
        entry = self._commands.get(tuple(canonical_argv(argv)))
        if entry is None:
            return CommandResult(argv=list(argv), error=NOT_FOUND,
                                 error_message=f"{argv[0]}: {REPLAY_COMMAND_MISS}")
        if self.timing and entry.duration_s > 0:
            time.sleep(min(entry.duration_s, timeout))
            if entry.duration_s > timeout:
                return CommandResult(argv=list(argv), error=TIMEOUT, error_message=f"killed after {timeout:g}s",
                                     duration_s=timeout)
        return CommandResult(**entry.model_dump())

    def read_file(self, path: str, max_bytes: int = DEFAULT_MAX_OUTPUT) -> FileResult:
        entry = self.snapshot.files.get(path)
        if entry is None:
            return FileResult(path=path, error=NOT_FOUND, error_message=f"No such file or directory {REPLAY_MISS_NOTE}")
        content = entry.content
        truncated = entry.truncated
        if content is not None and len(content) > max_bytes:
            content, truncated = content[:max_bytes], True
        return FileResult(path=path, content=content, error=entry.error, error_message=entry.error_message,
                          truncated=truncated)

    def list_dir(self, path: str) -> DirResult:
        entry = self.snapshot.dirs.get(path)
        if entry is None:
            return DirResult(path=path, error=NOT_FOUND, error_message=f"No such file or directory {REPLAY_MISS_NOTE}")
        return DirResult(path=path, **entry.model_dump())

    def readlink(self, path: str) -> LinkResult:
        entry = self.snapshot.links.get(path)
        if entry is not None:
            return LinkResult(path=path, **entry.model_dump())
        # Not a recorded link: a recorded file or directory still exists, as itself (one recorded as missing does not).
        f, d = self.snapshot.files.get(path), self.snapshot.dirs.get(path)
        if (f is not None and f.error is None) or (d is not None and d.error is None):
            return LinkResult(path=path, resolved=path)
        return LinkResult(path=path, error=NOT_FOUND)

    def disk_usage(self, path: str) -> DiskResult:
        entry = self.snapshot.disk.get(path)
        if entry is None:
            return DiskResult(path=path, error=NOT_RECORDED, error_message="not in snapshot")
        return DiskResult(path=path, **entry.model_dump())

    def env(self) -> dict[str, str]:
        return dict(self.snapshot.env)

    def python_env(self, python: Optional[str] = None, timeout: float = 20.0) -> PythonEnv:
        key = python or DEFAULT_PYTHON_KEY
        env = self.snapshot.python_envs.get(key)
        if env is None and python is None and len(self.snapshot.python_envs) == 1:
            env = next(iter(self.snapshot.python_envs.values()))
        if env is None:
            return PythonEnv(executable=python or "", error=NOT_RECORDED,
                             error_message=f"no python environment {key!r} in snapshot")
        return env.model_copy(deep=True)

    def system(self) -> SystemInfo:
        return self.snapshot.system


class RecordingHost:
    """Wraps a host and writes every answer into a Snapshot (secrets redacted as they are recorded)."""

    def __init__(self, inner: Host):
        self.inner = inner
        self._lock = threading.Lock()
        self.snapshot = Snapshot(collected_at=datetime.now(timezone.utc))

    def describe(self) -> str:
        return self.inner.describe()

    def reap_strays(self) -> list:
        reap = getattr(self.inner, "reap_strays", None)
        return reap() if reap is not None else []

    def run(self, argv: list[str], timeout: float = 10.0) -> CommandResult:
        res = self.inner.run(argv, timeout)
        entry = CommandEntry(**{**res.model_dump(), "argv": redact_argv(canonical_argv(res.argv)),
                                "stdout": redact_text(res.stdout), "stderr": redact_text(res.stderr)})
        with self._lock:
            self.snapshot.commands.append(entry)
        return res

    def read_file(self, path: str, max_bytes: int = DEFAULT_MAX_OUTPUT) -> FileResult:
        res = self.inner.read_file(path, max_bytes)
        with self._lock:
            content = redact_text(res.content, code=path.endswith(".py")) if res.content else res.content
            self.snapshot.files[path] = FileEntry(content=content,
                                                  error=res.error, error_message=res.error_message,
                                                  truncated=res.truncated)
        return res

    def list_dir(self, path: str) -> DirResult:
        res = self.inner.list_dir(path)
        with self._lock:
            self.snapshot.dirs[path] = DirEntry(entries=res.entries, error=res.error, error_message=res.error_message)
        return res

    def readlink(self, path: str) -> LinkResult:
        res = self.inner.readlink(path)
        with self._lock:
            self.snapshot.links[path] = LinkEntry(target=res.target, resolved=res.resolved, error=res.error)
        return res

    def disk_usage(self, path: str) -> DiskResult:
        res = self.inner.disk_usage(path)
        with self._lock:
            self.snapshot.disk[path] = DiskEntry(total_bytes=res.total_bytes, free_bytes=res.free_bytes,
                                                 error=res.error, error_message=res.error_message)
        return res

    def env(self) -> dict[str, str]:
        env = self.inner.env()
        with self._lock:
            self.snapshot.env = redact_env(env)
        return env

    def python_env(self, python: Optional[str] = None, timeout: float = 20.0) -> PythonEnv:
        res = self.inner.python_env(python, timeout)
        with self._lock:
            self.snapshot.python_envs[python or DEFAULT_PYTHON_KEY] = res
        return res

    def system(self) -> SystemInfo:
        res = self.inner.system()
        with self._lock:
            self.snapshot.system = res
        return res
