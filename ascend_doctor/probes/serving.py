"""Which interpreter will `vllm serve` run under? The `serving_python` fact: the one the doctor judges, and how it
was chosen.

Installed the README's way (`pip install .` into its own venv), the doctor's own interpreter has no vLLM, and judging
it made every torch/vLLM check skip under an `OK` (#22). So, without `--python` (and without a `vllm serve` command
line to infer it from, as `exec` has), the doctor looks where the serving stack lives, in this order:

1. a running `vllm serve` (or `python -m vllm.entrypoints.openai.api_server`) process: its interpreter (`ps`);
2. the `vllm` entry point on PATH: the interpreter of its shebang;
3. the active venv (`VIRTUAL_ENV`) and conda env (`CONDA_PREFIX`);
4. the interpreters of the official vllm-ascend/CANN images (`/usr/local/python3.*/bin/python3`);

and judges the first candidate that has vLLM installed (each asked for its metadata, as the `python` fact is), else
the first candidate, else its own interpreter. Everything goes through the host seam, so `collect` records the
search and `--replay` repeats it.
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.i18n import Localized, T
from ascend_doctor.probes import probe
from ascend_doctor.seam.host import PythonEnv

MAX_CANDIDATES = 4  # each costs one metadata dump (~0.1-0.3 s)
_IMAGE_PYTHON = re.compile(r"^python3\.\d+(?:\.\d+)?$")
_SERVE = re.compile(r"(?:^|[\s/])vllm\s+serve(?:\s|$)|vllm\.entrypoints\.openai\.api_server")

# How the interpreter was chosen (the report header and JSON say it).
HOW_FLAG = "--python"
HOW_COMMAND = "the vllm serve command line"
HOW_PROCESS = "a running vllm serve"
HOW_PATH = "vllm on PATH"
HOW_VENV = "the active venv (VIRTUAL_ENV)"
HOW_CONDA = "the active conda env (CONDA_PREFIX)"
HOW_IMAGE = "the vllm-ascend image's interpreter"
HOW_FALLBACK = "fallback: the doctor's own interpreter"


class Candidate(Model):
    path: str
    how: str = Field(description="Where it was found (one of the HOW_* phrases)")
    detail: str = Field("", description="e.g. `pid 4242`, `/usr/local/bin/vllm → #!/opt/venv/bin/python3`")
    vllm: Optional[str] = Field(None, description="The vLLM version installed in it, when it was asked")
    asked: bool = Field(False, description="Its metadata was read")


class ServingPython(Model):
    """The interpreter judged as the serving one, how it was chosen, and every candidate seen."""

    path: Optional[str] = Field(None, description="None: the doctor's own interpreter (python_env(None))")
    how: str
    detail: str = ""
    candidates: list[Candidate] = Field(default_factory=list)
    looked: list[Localized] = Field(default_factory=list, description="Where the search looked and found nothing")
    env: Optional[PythonEnv] = Field(None, exclude=True, description="The chosen one's metadata, when the search "
                                                                     "asked it (the `python` fact reuses it)")


def shebang_python(host, script: str) -> Optional[str]:
    """The interpreter a script's `#!` line names (`#!/usr/bin/env python3` resolved on PATH)."""
    r = host.read_file(script, max_bytes=512)
    if not (r.ok and r.content.startswith("#!")):
        return None
    line = r.content.splitlines()[0][2:].strip().split()
    if line and posixpath.basename(line[0]) == "env" and len(line) > 1:
        return on_path(host, line[1])
    return line[0] if line else None


def on_path(host, name: str) -> Optional[str]:
    """`name` found in the host's PATH (an existing file), or None."""
    for d in (host.env().get("PATH") or "").split(os.pathsep):
        if d:
            p = posixpath.join(d, name)
            if host.read_file(p, max_bytes=2).ok:
                return p
    return None


def _exists(host, path: str) -> bool:
    return host.read_file(path, max_bytes=2).ok


def _from_processes(host, looked: list[str]) -> list[Candidate]:
    res = host.run(["ps", "-eo", "pid=,args="], timeout=5)
    if not res.ok:
        looked.append(T("running processes (`ps`: {why})", why=res.why_not()))
        return []
    out: list[Candidate] = []
    for line in res.stdout.splitlines():
        pid, _, args = line.strip().partition(" ")
        if not _SERVE.search(args) or "ascend-doctor" in args or "ascend_doctor" in args:
            continue
        words = args.split()
        first = words[0] if words else ""
        base = posixpath.basename(first)
        if base.startswith("python"):
            exe: Optional[str] = first if "/" in first else on_path(host, first)
        elif base == "vllm":
            exe = shebang_python(host, first if "/" in first else (on_path(host, "vllm") or first))
        else:
            link = host.readlink(f"/proc/{pid}/exe")  # a launcher whose argv[0] is neither python nor vllm
            exe = link.target if link.error is None and link.target else None
        if exe:
            out.append(Candidate(path=exe, how=HOW_PROCESS, detail=f"pid {pid}"))
    if not out:
        looked.append(T("running processes (no vllm serve)"))
    return out


def _from_path(host, looked: list[str]) -> list[Candidate]:
    script = on_path(host, "vllm")
    if script is None:
        looked.append(T("PATH (no vllm entry point)"))
        return []
    exe = shebang_python(host, script)
    if exe is None:
        looked.append(T("{script} (no #! line naming an interpreter)", script=script))
        return []
    return [Candidate(path=exe, how=HOW_PATH, detail=f"{script} → #!{exe}")]


def _from_envs(host, looked: list[str]) -> list[Candidate]:
    env = host.env()
    out = []
    for var, how in (("VIRTUAL_ENV", HOW_VENV), ("CONDA_PREFIX", HOW_CONDA)):
        prefix = env.get(var)
        if not prefix:
            continue
        for name in ("python3", "python"):
            exe = posixpath.join(prefix, "bin", name)
            if _exists(host, exe):
                out.append(Candidate(path=exe, how=how, detail=f"{var}={prefix}"))
                break
        else:
            looked.append(T("{var}={prefix} (no bin/python3)", var=var, prefix=prefix))
    return out


def _from_image(host, looked: list[str]) -> list[Candidate]:
    listing = host.list_dir("/usr/local")
    names = sorted((e for e in (listing.entries if listing.ok else []) if _IMAGE_PYTHON.match(e)), reverse=True)
    out = []
    for name in names:
        exe = f"/usr/local/{name}/bin/python3"
        if _exists(host, exe):
            out.append(Candidate(path=exe, how=HOW_IMAGE, detail=f"/usr/local/{name}"))
    return out


def find_serving_python(host, timeout: float) -> ServingPython:
    """The search described in the module docstring."""
    looked: list[str] = []
    found: list[Candidate] = []
    for source in (_from_processes, _from_path, _from_envs, _from_image):
        for c in source(host, looked):
            if all(c.path != f.path for f in found):
                found.append(c)
    envs: dict[str, PythonEnv] = {}
    for c in found[:MAX_CANDIDATES]:
        env = host.python_env(c.path, timeout=timeout)
        c.asked = True
        if env.ok:
            envs[c.path] = env
            dist = env.vllm_dist()
            c.vllm = dist.version if dist is not None else None
    best = next((c for c in found if c.vllm), None) or (found[0] if found else None)
    if best is None:
        return ServingPython(path=None, how=HOW_FALLBACK, candidates=found, looked=looked)
    return ServingPython(path=best.path, how=best.how, detail=best.detail, candidates=found, looked=looked,
                         env=envs.get(best.path))


@probe("serving_python", reads=("serve_entry",))
def serving_python_probe(host, ctx) -> ServingPython:
    """The interpreter the run judges, chosen once: --python, else the one the `vllm serve` command line names
    (`serve_entry`: exec, collect --), else the search."""
    if ctx.options.python:
        return ServingPython(path=ctx.options.python, how=HOW_FLAG)
    entry = ctx.try_fact("serve_entry") if ctx.options.serve_argv else None
    if entry is not None and entry.interpreter:
        return ServingPython(path=entry.interpreter, how=HOW_COMMAND, detail=entry.how)
    found = find_serving_python(host, ctx.options.probe_timeout)
    if entry is not None and entry.why_not:
        found.looked.insert(0, T("the command line ({why})", why=entry.why_not))
    return found


def serving_executable(ctx) -> str:
    """The path the children of a probe run (import probe, platform probe, compute smoke): the interpreter chosen
    once (`serving_python`), else the one the `python` fact reports itself as. The caller declares both facts."""
    chosen = ctx.try_fact("serving_python")
    return (chosen.path if chosen is not None else None) or ctx.fact("python").executable
