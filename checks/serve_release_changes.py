"""SERVE325: the names a deployment sets that the release notes, up to the installed vllm-ascend release, say were
removed, renamed or no longer honoured (the `serve/release-changes` table, read from each release's notes)."""

from __future__ import annotations

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.i18n import T, join
from ascend_doctor.knowledge.release_changes import flag_dest
from ascend_doctor.plugin import check, ev
from ascend_doctor.text.redact import REDACTED, is_secret_name
from ascend_doctor.text.textsafe import clipped
from ascend_doctor.text.versions import try_parse_version

from ._serve import cmd_or_skip, kv_connectors


@check("SERVE325", "serve-release-changes", severity="warning", stage="serve",
       needs=["python", "serve_cmd", "server_env"])
def release_changes(ctx):
    """Nothing the deployment sets is something the release notes retired

    What it checks: every environment variable, `vllm serve` option, `--additional-config` key (at any depth) and
    KV connector the deployment sets, against the bullets of the "Deprecation & Breaking Changes", "Breaking
    Changes and Migration Notes" and "Upgrade Note" sections of every release's notes up to the installed
    vllm-ascend (the `serve/release-changes` table, which `matrix sync` reads from the notes): a name a bullet
    says was removed, dropped, renamed, split, moved, cleaned up, replaced or no longer works, unless a later
    bullet names it as the one to use (`enable_sp`, "renamed back" in 0.16.0rc1).

    Why it matters: the names checks judge what the installed packages read (SERVE402, SERVE313), but some of what
    the notes retire is read by nobody they look at — `ASCEND_BUFFER_POOL` ("was removed. Use
    `ASCEND_ENABLE_USE_FABRIC_MEM=1` or `HCCL_INTRA_ROCE_ENABLE=1`", 0.23.0), `USE_OPTIMIZED_MODEL` — or is still
    read by vLLM but not honoured on Ascend (`VLLM_TORCH_PROFILER_DIR`: "do not work with vLLM Ascend now. Please
    use vLLM `--profiler-config`", 0.14.0rc1). The setting does nothing, silently, and the notes say what replaces it.

    How to fix: do what the quoted bullet says — set the replacement it names, or drop the setting.
    """
    dist = ctx.fact("python").dist("vllm-ascend")
    if dist is None:
        return ctx.skip(T("vllm-ascend is not installed in the serving python: its release notes do not apply"))
    version = try_parse_version(dist.version)
    if version is None:
        return ctx.unknown(T("vllm-ascend {version} is not a version the release notes can be ordered by",
                             version=dist.version))
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    latest = _latest_word(ctx.knowledge.release_changes.change, version)
    retired = {n: row for n, row in latest.items() if n in row.old}
    used, unseen = _used(cmd, ctx.try_fact("server_env") or {}, retired)
    hits = [(n, where, retired[n]) for n, where in used.items() if n in retired]
    if hits:
        return ctx.warn(join("; ", [T("{where}: vllm-ascend {release}'s notes say \"{text}\"", where=where,
                                      release=row.release, text=clipped(row.text, 300)) for _, where, row in hits]),
                        [ev(f"{row.id} ({row.source})", row.text + (f"\n{' '.join(row.links)}" if row.links else ""))
                         for _, _, row in hits],
                        remediation=T("Set what the quoted notes name instead, or drop the setting."),
                        retired=[n for n, _, _ in hits])
    if unseen:
        return ctx.ok(T("none of the {n} name(s) the release notes up to vllm-ascend {version} retire that could be "
                        "looked at is set; {m} not judged ({why}): {names}", n=len(retired) - len(unseen),
                        version=dist.version, m=len(unseen), why=next(iter(unseen.values())),
                        names=", ".join(sorted(unseen))))
    return ctx.ok(T("none of the {n} name(s) the release notes up to vllm-ascend {version} retire is set",
                    n=len(retired), version=dist.version))


def _latest_word(rows, version) -> dict:
    """name -> the row of the latest release (up to `version`) whose bullet names it, as retired or as the one
    to use: a name a later release brings back is not held against the deployment."""
    out: dict = {}
    for row in sorted(rows, key=lambda r: try_parse_version(r.release) or version):
        v = try_parse_version(row.release)
        if v is None or v > version:
            continue
        for name in row.old + row.new:
            out[name] = row
    return out


def _used(cmd, env, retired: dict) -> tuple[dict, dict]:
    """(name -> where the deployment sets it, env name -> why not judged) over the retired names: env variables,
    option dests, --additional-config keys at any depth, KV connectors."""
    used, unseen = {}, {}
    for name in retired:
        dest = flag_dest(name)
        if dest is not None:
            if cmd.has(dest):
                used[name] = cmd.source(dest)
        elif name.isupper() or name[:1].isupper() and "_" in name:
            try:
                if name in env:
                    shown = REDACTED if is_secret_name(name) else clipped(str(env.get(name)), 40)
                    used[name] = f"{name}={shown}"
            except FactUnavailable as exc:
                unseen[name] = exc.reason
    keys = _config_keys(cmd)
    for name in retired:
        if name in keys and name not in used:
            used[name] = f"--additional-config {keys[name]}"
    for name in _connectors(cmd):
        if name in retired:
            used[name] = f"--kv-transfer-config kv_connector {name}"
    return used, unseen


def _json(cmd, name: str):
    """The JSON object an option gives, or None (not given, cut by the paste, or not an object vLLM can read)."""
    if not cmd.has(name) or cmd.is_cut(name):
        return None
    value, err = cmd.json_value(name)
    return value if not err and isinstance(value, dict) else None


def _config_keys(cmd) -> dict:
    """key -> its dotted path, for every key of --additional-config down to MAX_DEPTH levels."""
    out: dict = {}

    def walk(node, path):
        if isinstance(node, dict) and len(path) < MAX_DEPTH:
            for k, v in list(node.items())[:500]:
                if isinstance(k, str):
                    out.setdefault(k, ".".join(path + [k]))
                    walk(v, path + [k])
    walk(_json(cmd, "additional_config"), [])
    return out


MAX_DEPTH = 8  # vllm-ascend's deepest section is two levels (`ascend_compilation_config.…`); a hostile paste nests more


def _connectors(cmd) -> list:
    kv = _json(cmd, "kv_transfer_config")
    return [name for _, name in kv_connectors(kv)] if kv is not None else []
