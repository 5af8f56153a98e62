"""SERVE4xx: the environment `vllm serve` inherits (ours or the snapshot's, plus `env K=V` on the command line)."""

from __future__ import annotations

import difflib

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
