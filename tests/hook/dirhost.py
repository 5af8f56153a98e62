"""A test host over real fixture directories: files and listings from disk, everything else given by the test."""

from __future__ import annotations

import os
from typing import Optional

from ascend_doctor.seam.host import (
    DEFAULT_MAX_OUTPUT,
    NOT_FOUND,
    CommandResult,
    DirResult,
    DiskResult,
    FileResult,
    LinkResult,
    PythonEnv,
    SystemInfo,
)


class DirHost:
    """read_file/list_dir hit the disk (fixture trees under tests/data); commands, env and python are canned."""

    def __init__(self, env: Optional[dict] = None, python: Optional[PythonEnv] = None,
                 commands: Optional[dict] = None):
        self._env = dict(env or {})
        self._python = python or PythonEnv(error="not_recorded", error_message="no python in this test")
        self._commands = commands or {}
        self.reads: list[str] = []

    def describe(self) -> str:
        return "dirhost"

    def run(self, argv, timeout: float = 10.0) -> CommandResult:
        out = self._commands.get(tuple(argv))
        if out is None:
            return CommandResult(argv=list(argv), error=NOT_FOUND, error_message="not found")
        return CommandResult(argv=list(argv), returncode=0, stdout=out)

    def read_file(self, path: str, max_bytes: int = DEFAULT_MAX_OUTPUT) -> FileResult:
        self.reads.append(path)
        try:
            with open(path, encoding="utf-8") as fh:
                return FileResult(path=path, content=fh.read(max_bytes))
        except OSError as exc:
            return FileResult(path=path, error=NOT_FOUND, error_message=exc.strerror or str(exc))

    def list_dir(self, path: str) -> DirResult:
        try:
            return DirResult(path=path, entries=sorted(os.listdir(path)))
        except OSError as exc:
            return DirResult(path=path, error=NOT_FOUND, error_message=exc.strerror or str(exc))

    def readlink(self, path: str) -> LinkResult:
        if not os.path.lexists(path):  # as LocalHost: the disk's own answer
            return LinkResult(path=path, error=NOT_FOUND)
        target = os.readlink(path) if os.path.islink(path) else None
        return LinkResult(path=path, target=target, resolved=os.path.realpath(path))

    def disk_usage(self, path: str) -> DiskResult:
        return DiskResult(path=path, error=NOT_FOUND)

    def env(self) -> dict:
        return dict(self._env)

    def python_env(self, python=None, timeout: float = 20.0) -> PythonEnv:
        return self._python

    def system(self) -> SystemInfo:
        return SystemInfo(hostname="dirhost", os="test", machine="aarch64")
