"""SERVE4xx: the environment `vllm serve` inherits (ours or the snapshot's, plus `env K=V` on the command line)."""

from __future__ import annotations

import difflib
import re

from ascend_doctor.evaluator import ev
from ascend_doctor.i18n import T
from ascend_doctor.redact import REDACTED, is_secret_name
from ascend_doctor.registry import check
from ascend_doctor.servelint import cmd_or_skip, server_env, vllm_version
from ascend_doctor.versions import try_parse_version


@check("SERVE401", "serve-env-v0-engine", severity="error", stage="serve", needs=["serve_cmd", "env", "python", "vllm_files"])
def env_v0_engine(ctx):
    """VLLM_USE_V1=0 (the removed V0 engine) is not set

    What it checks: `VLLM_USE_V1` in the environment the server inherits.

    Why it matters: vllm-ascend never supported the V0 engine ("V0 Engine is not supported… always set VLLM_USE_V1=1",
    v0.9.1) and vLLM removed it (V1 default in 0.9.2rc1, V0 gone in vllm-ascend v0.10.0rc1; the variable left
    vllm/envs.py in 0.12.0, so newer releases ignore it and only warn about an unknown variable).

    How to fix: `unset VLLM_USE_V1` (remove it from the Dockerfile ENV / pod spec / unit Environment=).
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    env = server_env(ctx, cmd)
    v = env.get("VLLM_USE_V1")
    if v is None:
        return ctx.ok(T("VLLM_USE_V1 is not set (V1 engine)"))
    evidence = [ev("env: VLLM_USE_V1", v)]
    version = try_parse_version(vllm_version(ctx))
    removed = version is not None and version >= try_parse_version("0.12.0")
    if v.strip() == "0":
        if removed:
            return ctx.warn(T("VLLM_USE_V1=0 is ignored by vLLM {version} (the V0 engine is gone): remove it",
                              version=version),
                            evidence)
        return ctx.fail(T("VLLM_USE_V1=0 selects the V0 engine, which vllm-ascend does not support"), evidence)
    if removed:
        return ctx.warn(T("VLLM_USE_V1={v} is a leftover: vLLM {version} has no such variable", v=v, version=version),
                        evidence)
    return ctx.ok(T("VLLM_USE_V1={v}", v=v), evidence)


_EXTRA_KNOWN = {"VLLM_VERSION", "VLLM_TARGET_DEVICE", "VLLM_USE_V1"}  # read by setup/plugins outside envs.py dicts


@check("SERVE402", "serve-env-unknown-vars", severity="warning", stage="serve", needs=["serve_cmd", "env", "vllm_files"])
def env_unknown_vars(ctx):
    """Every VLLM_* / VLLM_ASCEND_* variable is one the installed release knows

    What it checks: environment variables starting with `VLLM_` against the keys of `environment_variables` in
    vllm/envs.py and `env_variables` in vllm_ascend/envs.py of the installed packages; typos get the closest known
    name.

    Why it matters: a misspelt or retired variable is silently ignored (vLLM 0.18+ only logs `Unknown vLLM
    environment variable detected`), so the setting you think you made is not in effect — e.g.
    `VLLM_ASCEND_ENABLE_FLASHCOMM1` moved to `--additional-config` in vllm-ascend v0.23.0.

    How to fix: Rename it to the name the finding suggests, or remove it.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    env = server_env(ctx, cmd)
    ours = sorted(k for k in env if k.startswith("VLLM_"))
    if not ours:
        return ctx.ok(T("no VLLM_* variables set"))
    files = ctx.try_fact("vllm_files")
    if files is None or not files.vllm_env_vars.ok:
        why = files.vllm_env_vars.why_not if files is not None else "installed files not read"
        return ctx.unknown(T("cannot read the installed vLLM's variable list: {why}", why=why))
    known = set(files.vllm_env_vars.names) | _EXTRA_KNOWN
    sources = [files.vllm_env_vars.source]
    if files.vllm_ascend_env_vars.ok:
        known |= set(files.vllm_ascend_env_vars.names)
        sources.append(files.vllm_ascend_env_vars.source)
    unknown = [k for k in ours if k not in known]
    shown = "\n".join(f"{k}={REDACTED if is_secret_name(k) else env[k]}" for k in ours)
    evidence = [ev("env", shown), ev("file: " + " + ".join(sources),
                                                                      f"{len(known)} known names")]
    if not unknown:
        return ctx.ok(T("{n_ours} VLLM_* variable(s), all known", n_ours=len(ours)), evidence)
    parts = []
    for k in unknown:
        close = difflib.get_close_matches(k, sorted(known), n=1, cutoff=0.75)
        parts.append(f"{k} (did you mean {close[0]}?)" if close else k)
    partial = "" if files.vllm_ascend_env_vars.ok else " (vllm_ascend/envs.py not read: VLLM_ASCEND_* may be known)"
    return ctx.warn(T("unknown to the installed release{partial}: {parts}", partial=partial, parts=', '.join(parts)),
                    evidence, unknown=unknown)


@check("SERVE403", "serve-npu-alloc-conf", severity="info", stage="serve", needs=["serve_cmd", "env"])
def npu_alloc_conf(ctx):
    """PYTORCH_NPU_ALLOC_CONF is set for the server

    What it checks: whether `PYTORCH_NPU_ALLOC_CONF` is set in the server's environment.

    Why it matters: the vllm-ascend FAQ recommends `expandable_segments:True` against HBM fragmentation (out-of-memory
    with plenty of free HBM in long runs); the tutorials set it in almost every example.

    How to fix: `export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True` before `vllm serve` (ENV in the Dockerfile,
    env in the pod spec).
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    v = server_env(ctx, cmd).get("PYTORCH_NPU_ALLOC_CONF")
    if v:
        return ctx.ok(T("PYTORCH_NPU_ALLOC_CONF={v}", v=v), [ev("env: PYTORCH_NPU_ALLOC_CONF", v)])
    return ctx.warn(T("PYTORCH_NPU_ALLOC_CONF is not set; expandable_segments:True avoids HBM fragmentation"))


START_METHODS = ("spawn", "fork")  # vllm/envs.py: VLLM_WORKER_MULTIPROC_METHOD, env_with_choices


@check("SERVE404", "serve-worker-start-method", severity="warning", stage="serve", needs=["serve_cmd", "env"])
def worker_start_method(ctx):
    """vLLM's workers are not forked from a process that may have touched the NPU

    What it checks: `VLLM_WORKER_MULTIPROC_METHOD` in the server's environment: `spawn` passes; `fork` warns; any
    other value fails (vLLM accepts only `spawn` and `fork`).

    Why it matters: the NPU runtime cannot be re-initialized in a forked child. When anything in the parent touched
    the NPU first (a launcher or RL framework calling `torch.npu`/`torch_npu`, a plugin querying the SoC version), the
    forked workers die with `RuntimeError: Cannot re-initialize NPU in forked subprocess. To use NPU with
    multiprocessing, you must use the 'spawn' start method` (vllm-ascend#4502, #3133, PR #7256; LlamaFactory#7447;
    vllm-omni#261). `vllm serve` alone starts its workers before touching the NPU, so `fork` is a risk, not a
    certain failure.

    How to fix: `export VLLM_WORKER_MULTIPROC_METHOD=spawn` for the server. If a recipe you follow sets `fork` on
    purpose, keep it and make sure nothing touches the NPU before vLLM starts its workers.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    value = server_env(ctx, cmd).get("VLLM_WORKER_MULTIPROC_METHOD")
    if value is None:
        return ctx.ok(T("VLLM_WORKER_MULTIPROC_METHOD is not set: `vllm serve` starts its workers before anything "
                        "touches the NPU (an offline script that calls torch.npu before LLM() needs spawn)"))
    evidence = [ev("env: VLLM_WORKER_MULTIPROC_METHOD", value)]
    if value == "spawn":
        return ctx.ok(T("VLLM_WORKER_MULTIPROC_METHOD=spawn"), evidence)
    fix = T("`export VLLM_WORKER_MULTIPROC_METHOD=spawn` for the server (Dockerfile ENV, pod env, the launch script).")
    if value not in START_METHODS:
        return ctx.fail(T("VLLM_WORKER_MULTIPROC_METHOD={value} is not one vLLM accepts ({choices}): the server "
                          "stops at start", value=value, choices=", ".join(START_METHODS)), evidence, remediation=fix)
    return ctx.warn(T("VLLM_WORKER_MULTIPROC_METHOD=fork: the workers are forked, and a parent that touched the NPU "
                      "first makes them fail with `Cannot re-initialize NPU in forked subprocess`"), evidence,
                    remediation=fix)


_XYZ = re.compile(r"^\d+\.\d+\.\d+$")


@check("SERVE405", "serve-vllm-version-override", severity="error", stage="serve",
       needs=["serve_cmd", "env", "python", "vllm_files"])
def vllm_version_override(ctx):
    """VLLM_VERSION, when set, names the vLLM release that is installed

    What it checks: `VLLM_VERSION` in the server's environment against the installed vLLM: unset passes for a
    release; a value that is not `X.Y.Z` fails; a value that differs from the installed release fails; a development
    build of vLLM (`0.1.dev1+g<sha>`) without it warns.

    Why it matters: vllm-ascend picks its code path per vLLM release with `vllm_version_is()`, which reads
    `VLLM_VERSION` instead of the installed version when it is set (vllm_ascend/utils.py). Set to another release, the
    plugin imports modules the installed vLLM does not have: `VLLM_VERSION=0.18.0` on vLLM 0.20.2 gave
    `No module named 'vllm.v1.attention.backends.mla.prefill'` (vllm-ascend#10020, #9305). A development build
    matches no release unless `VLLM_VERSION` says which one it is (FAQ 11, "InvalidVersion").

    How to fix: unset `VLLM_VERSION` on an installed vLLM release; on a source or editable build set it to the release
    the tree is (`export VLLM_VERSION=0.20.2`, format `X.Y.Z`).
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    value = server_env(ctx, cmd).get("VLLM_VERSION")
    installed = vllm_version(ctx)
    if installed is None:
        return ctx.unknown(T("the installed vLLM version is not known: VLLM_VERSION cannot be compared"))
    v = try_parse_version(installed)
    release = ".".join(str(x) for x in (tuple(v.release) + (0, 0, 0))[:3]) if v is not None else None
    # A source build says `0.1.dev1+g<sha>` (no release) or `X.Y.ZrcN.devM+g<sha>`: vllm_version_is matches neither.
    dev_build = v is None or (v.is_prerelease() and "dev" in installed.lower()) or release == "0.1.0"
    evidence = [ev("python: vllm", installed)] + ([ev("env: VLLM_VERSION", value)] if value is not None else [])
    if value is None:
        if dev_build:
            return ctx.warn(T("vLLM {installed} is a development build and VLLM_VERSION is not set: vllm-ascend "
                              "matches it to no release", installed=installed), evidence,
                            remediation=T("Set VLLM_VERSION to the release your vLLM source is, e.g. "
                                          "`export VLLM_VERSION=0.20.2` (vllm-ascend FAQ 11)."))
        return ctx.ok(T("VLLM_VERSION is not set: vllm-ascend reads the installed vLLM {installed}",
                        installed=installed), evidence)
    if not _XYZ.match(value.strip()):
        return ctx.fail(T("VLLM_VERSION={value} is not a version of the form X.Y.Z: vllm-ascend stops with "
                          "`Invalid vllm version`", value=value), evidence,
                        remediation=T("`export VLLM_VERSION=X.Y.Z` (the vLLM release), or unset it."))
    if dev_build:
        return ctx.ok(T("VLLM_VERSION={value} names the release of the development build {installed}", value=value,
                        installed=installed), evidence)
    if value.strip() != release:
        return ctx.fail(T("VLLM_VERSION={value} but vLLM {installed} is installed: vllm-ascend takes the code path "
                          "of {value} and imports what {release} does not have", value=value, installed=installed,
                          release=release), evidence,
                        remediation=T("`unset VLLM_VERSION` (or set it to {release}).", release=release))
    return ctx.ok(T("VLLM_VERSION={value} matches the installed vLLM {installed}", value=value, installed=installed),
                  evidence)
