"""SERVE4xx: the environment `vllm serve` will see (the `server_env` fact: what it inherits, with the command line's
`env K=V` over it). VLLM_USE_V1 and PYTORCH_NPU_ALLOC_CONF are judged by ENV102 and ENV101."""

from __future__ import annotations

import difflib
import re
from typing import Optional

from ascend_doctor.i18n import T
from ascend_doctor.plugin import FactUnavailable, check, ev
from ascend_doctor.text.redact import REDACTED, is_secret_name
from ascend_doctor.text.versions import try_parse_version

from ._serve import cmd_or_skip, stack_names, vllm_version

_EXTRA_KNOWN = {"VLLM_VERSION", "VLLM_TARGET_DEVICE", "VLLM_USE_V1"}  # read by setup/plugins outside envs.py dicts


@check("SERVE402", "serve-env-unknown-vars", severity="error", stage="serve",
       needs=["serve_cmd", "server_env", "python", "vllm_files"])
def env_unknown_vars(ctx):
    """Every VLLM_* / VLLM_ASCEND_* variable is one the installed release reads

    What it checks: environment variables starting with `VLLM_` against the keys of `environment_variables` in
    vllm/envs.py and `env_variables` in vllm_ascend/envs.py of the installed packages (for a snapshot or a paste,
    the `serve/names-vllm` and `serve/names-vllm-ascend` rows of the installed versions, read from each release's
    sdist), with the variables vllm-ascend reads outside envs.py (`os.getenv`/`os.environ` anywhere in the package:
    the row's `env_read`, read by `matrix sync` from the release's sdist). A variable an earlier release read is
    named with the release that dropped it and what that release reads instead: a near name new in it (a rename),
    or the `--additional-config` key vllm-ascend moved the setting to. Typos get the closest known name.

    Why it matters: a misspelt, renamed or retired variable is silently ignored (vLLM 0.18+ only logs `Unknown vLLM
    environment variable detected`), so the setting you think you made is not in effect:
    `VLLM_ASCEND_ENABLE_FLASHCOMM` became `VLLM_ASCEND_ENABLE_FLASHCOMM1` in vllm-ascend 0.11.0rc1 (the old name
    still read up to 0.19.1rc1, for backward compatibility), and
    `VLLM_ASCEND_ENABLE_FLASHCOMM1`, `VLLM_ASCEND_ENABLE_MLAPO` and `VLLM_ASCEND_ENABLE_FUSED_MC2` are
    `--additional-config` keys only from 0.27.1rc1. A renamed or moved variable fails (the release has the setting
    under another name, so the one given is a mistake); a removed or unknown one warns.

    How to fix: use the name or the `--additional-config` key the finding gives, or remove the variable.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    env = ctx.fact("server_env")
    ours = sorted(k for k in env if k.startswith("VLLM_"))
    if not ours:
        if not env.complete("VLLM_"):  # a paste's export lines: what else is set is not shown
            raise FactUnavailable("server_env.VLLM_*", env.listing.reason("VLLM_*"))
        return ctx.ok(T("no VLLM_* variables set"))
    names = stack_names(ctx)
    shown = "\n".join(f"{k}={REDACTED if is_secret_name(k) else env[k]}" for k in ours)
    evidence = [ev("env", shown)]
    moved, dropped, unknown, unseen, sources = [], [], [], [], {}
    for k in ours:
        if k in _EXTRA_KNOWN:
            continue
        v = names.judge("env", k)
        for x in v.lists:
            sources.setdefault(x.source, f"{x.project} {x.version}: {len(x.names or ())} names")
        if v.known:
            continue
        if v.known is None:
            unseen.append(k)
            continue
        instead = T("{dropped} reads {successor} instead", dropped=v.dropped, successor=v.successor) \
            if v.successor else _moved_to_config(ctx, k, v)
        if v.dropped and instead and all(x.how not in ("nearest older", "paired") for x in v.lists):
            moved.append(T("{key} (last read by {last}; {instead})", key=k, last=v.last, instead=instead))
        elif v.dropped:
            dropped.append(T("{key} (last read by {last}, ignored since {dropped})", key=k, last=v.last,
                             dropped=v.dropped))
        else:
            more = [T("did you mean {close}?", close=v.close[0])] if v.close else []
            if v.first:
                more.append(T("first read by {first}", first=v.first))
            unknown.append(f"{k} ({'; '.join(more)})" if more else k)
    evidence += [ev(src, said) for src, said in sources.items()]
    if not sources and unseen:
        return ctx.unknown(T("cannot read the installed vLLM's variable list: {why}",
                             why=T("neither vLLM nor vllm-ascend is installed in the serving python")), evidence)
    ignored = dropped + unknown
    rest = ([T("ignored by the installed release: {parts}", parts=", ".join(ignored))] if ignored else []) + (
        [T("not judged ({why}): {keys}", why="; ".join(s for s in sources if not s.startswith(("file:", "matrix:")))
           or T("a variable list is not known"), keys=", ".join(unseen))] if unseen else [])
    if moved:
        return ctx.fail(T("the installed release has these settings under another name, so the ones given do "
                          "nothing: {parts}", parts=", ".join(moved)) + "".join(f"; {r}" for r in rest), evidence,
                        remediation=T("Use the name (or the --additional-config key) the finding gives."),
                        unknown=[m.split(" ", 1)[0] for m in moved + ignored])
    if ignored:
        return ctx.warn("; ".join(rest), evidence, unknown=[m.split(" ", 1)[0] for m in ignored])
    if unseen:
        return ctx.unknown("; ".join(rest), evidence)
    return ctx.ok(T("{n_ours} VLLM_* variable(s), all known", n_ours=len(ours)), evidence)


def _moved_to_config(ctx, key: str, v) -> Optional[str]:
    """The `--additional-config` key the installed vllm-ascend reads for a VLLM_ASCEND_* variable it dropped
    (`VLLM_ASCEND_ENABLE_FLASHCOMM1` -> `enable_flashcomm1`, `VLLM_ASCEND_BALANCE_SCHEDULING` ->
    `enable_balance_scheduling`), or None."""
    ascend = next((x for x in v.lists if x.project == "vllm-ascend"), None)
    if ascend is None or not key.startswith("VLLM_ASCEND_"):
        return None
    row, _ = ctx.knowledge.additional_config.row_for(ascend.version)
    if row is None:
        return None
    stem = key[len("VLLM_ASCEND_"):].lower()
    keys = sorted(row.top_keys)
    hit = next((k for k in keys if k in (stem, "enable_" + stem)), None) or next(
        iter(difflib.get_close_matches(stem, keys, n=1, cutoff=0.85)), None)
    return T("vllm-ascend {version} takes it as --additional-config '{{\"{hit}\": …}}'", version=ascend.version,
             hit=hit) if hit else None


START_METHODS = ("spawn", "fork")  # vllm/envs.py: VLLM_WORKER_MULTIPROC_METHOD, env_with_choices


@check("SERVE404", "serve-worker-start-method", severity="warning", stage="serve", needs=["serve_cmd", "server_env"])
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
    value = ctx.fact("server_env").get("VLLM_WORKER_MULTIPROC_METHOD")
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
       needs=["serve_cmd", "server_env", "python", "vllm_files"])
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
    value = ctx.fact("server_env").get("VLLM_VERSION")
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
        named = try_parse_version(value.strip())
        if release not in (None, "0.1.0") and named is not None and named < try_parse_version(release):
            # `0.20.2rc1.dev45+g…` is a tree past the 0.20.2rc1 tag: an older release's code path is not its code
            return ctx.warn(T("VLLM_VERSION={value} names a release older than the development build {installed} "
                              "(a tree past {release}): vllm-ascend takes the older release's code path", value=value,
                              installed=installed, release=release), evidence,
                            remediation=T("Set VLLM_VERSION to the release your vLLM source is ({release} or later)."
                                          , release=release))
        return ctx.ok(T("VLLM_VERSION={value} names the release of the development build {installed}", value=value,
                        installed=installed), evidence)
    if value.strip() != release:
        return ctx.fail(T("VLLM_VERSION={value} but vLLM {installed} is installed: vllm-ascend takes the code path "
                          "of {value} and imports what {release} does not have", value=value, installed=installed,
                          release=release), evidence,
                        remediation=T("`unset VLLM_VERSION` (or set it to {release}).", release=release))
    return ctx.ok(T("VLLM_VERSION={value} matches the installed vLLM {installed}", value=value, installed=installed),
                  evidence)


# The P/D variables after which a prefill instance frees the KV cache of a finished request whose decode side has not
# confirmed reading it (vLLM envs.py: `int(os.getenv(NAME, "480"))`, seconds; VLLM_MOONCAKE_* read by vllm-ascend's
# Mooncake connectors, kv_p2p/mooncake_connector.py `_retrieve_expired_requests`, VLLM_NIXL_* by vLLM's NIXL one).
ABORT_TIMEOUTS = ("VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT", "VLLM_NIXL_ABORT_REQUEST_TIMEOUT")
ABORT_DEFAULT_S = 480  # vLLM's default, and the value of every vllm-ascend P/D tutorial (0.18.0rc1-0.30.0rc2)
ABORT_FLOOR_S = 60  # below this a decode side that queues or pulls a long prompt under load comes too late
ABORT_CEILING_S = 3600  # above this the KV of requests whose decode side failed stays allocated for hours


@check("SERVE406", "serve-pd-kv-abort-timeout", severity="warning", stage="serve", needs=["serve_cmd", "server_env"])
def pd_kv_abort_timeout(ctx):
    """A prefill node keeps a request's KV cache long enough for the decode node to read it

    What it checks: `VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT` and `VLLM_NIXL_ABORT_REQUEST_TIMEOUT` in the server's
    environment, on a prefill/decode deployment (`--kv-transfer-config` with `kv_role` kv_producer or kv_both): a
    value that is not a whole number of seconds fails; one below 60 seconds or above an hour warns. Unset passes
    (vLLM's default, 480 s); on a decode-only node (`kv_consumer`) or without `--kv-transfer-config` the variables do
    nothing.

    Why it matters: after a prefill, the P node holds the request's KV blocks until the D node says it read them, and
    frees them anyway once this timeout passes ("Force freed expired request … Resources have been forcibly released",
    vllm-ascend's Mooncake connector). A D node that is queueing, or pulling a long prompt under load, then reads
    blocks that already hold another request's KV, and the answer is garbled: vllm-ascend#11140 (5 s, 64K prompts
    at 64 concurrent), #15420 (10 s, "对该问题起决定性作用的是 VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT=10"). vLLM reads
    the value with `int()`, so `480s` or `4.5` stops the connector at start. Every vllm-ascend P/D tutorial uses 480.
    The other way round, the KV of a request whose decode node failed stays allocated until the timeout: at 300000 s
    the prefill node's NPU memory filled up and it stalled (vllm-ascend#13240, worked around with 480).

    How to fix: `export VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT=480` (or leave it unset) on the prefill nodes; lower it
    only as far as your longest prompt's prefill plus the decode side's queueing allows.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    kv, _ = cmd.json_value("kv_transfer_config")
    role = kv.get("kv_role") if isinstance(kv, dict) else None
    if role not in ("kv_producer", "kv_both"):
        return ctx.ok(T("no prefill side here (kv_role {role}): the P/D abort timeouts do not apply", role=role)
                      if role else T("no --kv-transfer-config: the P/D abort timeouts do not apply"))
    env = ctx.fact("server_env")
    seen, unseen = {}, {}
    for k in ABORT_TIMEOUTS:  # a paste may show one and not the other: what it shows is judged
        try:
            seen[k] = env.get(k)
        except FactUnavailable as exc:
            unseen[k] = exc.reason
    evidence = [ev(f"{env.where(k)}: {k}", v) for k, v in seen.items() if v is not None]
    fix = T("`export VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT={default}` (or unset it) on the prefill nodes.",
            default=ABORT_DEFAULT_S)
    for k, v in seen.items():
        if v is not None and not v.strip().isdigit():
            return ctx.fail(T("{key}={value} is not a whole number of seconds: vLLM reads it with int() and the KV "
                              "connector stops with a ValueError", key=k, value=v), evidence, remediation=fix)
    for too, say in ((lambda secs: secs < ABORT_FLOOR_S, _too_short), (lambda secs: secs > ABORT_CEILING_S, _too_long)):
        hit = ", ".join(f"{k}={v}" for k, v in seen.items() if v is not None and too(int(v)))
        if hit:
            return ctx.warn(say(hit, role), evidence, remediation=fix)
    if unseen:
        raise FactUnavailable("server_env." + ", ".join(unseen), next(iter(unseen.values())))
    if evidence:
        return ctx.ok(T("the P/D abort timeouts are between {floor} s and {ceiling} s: {parts}", floor=ABORT_FLOOR_S,
                        ceiling=ABORT_CEILING_S, parts=", ".join(f"{k}={v}" for k, v in seen.items() if v is not None)),
                      evidence)
    return ctx.ok(T("the P/D abort timeouts are not set: vLLM's default, {default} s", default=ABORT_DEFAULT_S))


def _too_short(parts: str, role: str) -> str:
    return T("{parts} on a prefill node (kv_role {role}): its KV is freed that many seconds after the prefill even "
             "when the decode node has not read it, and a late decode node returns garbled text (vllm-ascend#11140, "
             "#15420); the default is {default} s", parts=parts, role=role, default=ABORT_DEFAULT_S)


def _too_long(parts: str, role: str) -> str:
    return T("{parts} on a prefill node (kv_role {role}): the KV of a request whose decode node failed stays allocated "
             "that long, and the prefill node's NPU memory fills up (vllm-ascend#13240, at 300000 s); the default is "
             "{default} s", parts=parts, role=role, default=ABORT_DEFAULT_S)
