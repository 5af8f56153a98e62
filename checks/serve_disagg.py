"""SERVE309: prefill/decode disaggregation — the sizes `--kv-transfer-config` declares for this node's role against
the node's own parallel flags, the rule vllm-ascend enforces at start (`check_kv_extra_config`)."""

from __future__ import annotations

from ascend_doctor.i18n import T, join
from ascend_doctor.plugin import check
from ascend_doctor.text.versions import SpecifierSet, try_parse_version

from ._serve import cmd_or_skip, json_option

ROLES = {"kv_producer": ("prefill",), "kv_consumer": ("decode",), "kv_both": ("prefill", "decode")}


def _mismatches(cmd, extra: dict, role: str) -> list[tuple[str, str, str, int, object]]:
    """(section, key, vLLM-ascend's words for it, the flag's value, the config's value) for every size the config
    sets differently."""
    out = []
    flags = {"tp_size": ("tensor parallel size", cmd.int_opt("tensor_parallel_size") or 1),
             "dp_size": ("data parallel size", cmd.int_opt("data_parallel_size") or 1)}
    for section in ROLES.get(role, ()):
        cfg = extra.get(section)
        if not isinstance(cfg, dict):
            continue
        for key, (what, mine) in flags.items():
            if key in cfg and cfg[key] != mine:
                out.append((section, key, what, mine, cfg[key]))
    return out


@check("SERVE309", "serve-kv-transfer-sizes", severity="error", stage="serve", needs=["serve_cmd", "python"])
def kv_transfer_sizes(ctx):
    """The sizes --kv-transfer-config declares for this node's role are the node's own

    What it checks: in `--kv-transfer-config`, `kv_connector_extra_config.prefill` (for `kv_producer`/`kv_both`)
    and `.decode` (for `kv_consumer`/`kv_both`): their `tp_size` and `dp_size` against `--tensor-parallel-size` and
    `--data-parallel-size` of this command; the JSON itself must parse.

    Why it matters: vllm-ascend refuses the mismatch at start from v0.12.0rc1 (#4547): `KV transfer 'decode' config
    has a conflicting tensor parallel size. Expected 4, but got 8.` (#8442), `… conflicting data parallel size.
    Expected 1, but got 2` (#8344, #8345). Before that release the connector was built with sizes the node does
    not have.

    How to fix: make the section for this node's role say the node's own sizes (the prefill node's TP/DP in
    `prefill`, the decode node's in `decode`), or change the flags to match.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    cfg, evidence, out = json_option(ctx, cmd, "kv_transfer_config")
    if out:
        return out
    role = str(cfg.get("kv_role") or "")
    extra = cfg.get("kv_connector_extra_config") or {}
    if role not in ROLES or not isinstance(extra, dict):
        return ctx.skip(T("no prefill/decode sizes to compare (kv_role {role})", role=role or "-"))
    try:
        bad = _mismatches(cmd, extra, role)
    except ValueError as exc:
        return ctx.fail(T("a parallel size is not an integer: {exc}", exc=exc), evidence)
    if not bad:
        return ctx.ok(T("the {role} sizes in --kv-transfer-config match this node's flags", role=role), evidence)
    py = ctx.try_fact("python")
    va = py.dist("vllm-ascend") if py is not None else None
    v = try_parse_version(va.version) if va is not None else None
    said = join("; ", (T("'{section}' {key}: the flags say {mine}, the config {theirs}", section=s, key=k, mine=m,
                          theirs=t) for s, k, _, m, t in bad))
    fix = T("Set the '{section}' sizes in kv_connector_extra_config to this node's own (or change the flags).",
            section=bad[0][0])
    spec, _ = ctx.knowledge.start_checks.range_of("kv-transfer-sizes")  # the releases that refuse it
    if va is not None and v is not None and SpecifierSet(spec).contains(va.version):
        s, _, w, m, t = bad[0]
        return ctx.fail(T("{said}: vllm-ascend {version} stops with `KV transfer '{section}' config has a conflicting "
                          "{what}. Expected {mine}, but got {theirs}.`", said=said, version=va.version, section=s,
                          what=w, mine=m, theirs=t), evidence, remediation=fix)
    return ctx.warn(T("{said}: the connector is built with sizes this node does not have (vllm-ascend refuses it from "
                      "{release})", said=said, release=spec.lstrip(">=")), evidence, remediation=fix)
