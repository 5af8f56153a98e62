"""SERVE210: the installed vLLM's tool-call parser against the releases known to break streamed tool calls.
The rows: the `serve/tool-parser-issues` table (loader: ascend_doctor/knowledge/parser_issues.py)."""

from __future__ import annotations

from ascend_doctor.i18n import T, join, known
from ascend_doctor.knowledge.parser_issues import issues_for
from ascend_doctor.plugin import check, ev
from ascend_doctor.text.versions import parse_version, try_parse_version

from ._serve import cmd_evidence, cmd_or_skip, vllm_version


def _multi_token(cmd) -> str:
    """Why deltas carry several tokens ('' when nothing says so): speculative decoding, or --stream-interval > 1."""
    spec, _ = cmd.json_value("speculative_config")
    if spec:
        return "--speculative-config " + str(spec.get("method") or spec.get("model") or "")
    try:
        interval = cmd.int_opt("stream_interval")
    except ValueError:
        interval = None
    return f"--stream-interval {interval}" if interval and interval > 1 else ""


def _first_ascend(matrix, fixed: str):
    """The first vllm-ascend release whose own vLLM pin has the fix."""
    want = parse_version(fixed)
    for row in matrix.releases:
        v = try_parse_version(row.vllm[0])
        if v is not None and v >= want:
            return row
    return None


@check("SERVE210", "serve-tool-parser-release", severity="warning", stage="serve",
       needs=["serve_cmd", "python", "vllm_files"])
def tool_parser_release(ctx):
    """The installed vLLM's --tool-call-parser streams tool calls without a known fault

    What it checks: the `--tool-call-parser` (and `--reasoning-parser`) of the command against the installed vLLM
    release, by the rows of the `serve/tool-parser-issues` table: hermes up to 0.18.x (the last `}` of streamed
    arguments dropped), kimi_k2 0.11.1–0.19.x (arguments cut at 8192 characters), mistral 0.13.0–0.20.x
    (`IndexError` at the end of the stream), glm45/glm47 0.16.0–0.19.x and qwen3_coder/qwen3_xml 0.10.0–0.23.x
    with multi-token deltas (speculative decoding/MTP, `--stream-interval` > 1), hermes with the qwen3 reasoning
    parser 0.24.0–0.25.x (the call leaks into `content`). Each row names the release with the fix.

    Why it matters: the parser is the right one, the server starts, non-streamed calls work — and streaming clients
    (agents, IDEs) get arguments that are not JSON, cut short, or no tool call at all (vllm#22885, #34442, #33916,
    #34449, #45256, vllm-ascend#7580, #8130). On Ascend vLLM moves only with vllm-ascend, so users stay on an
    affected release for months.

    How to fix: move to the vllm-ascend release whose vLLM has the fix (the finding names both; `ascend-doctor
    matrix pins --vllm-ascend X` prints the stack); until then call tools without streaming, or — for the faults
    that need multi-token deltas — drop the speculative config and `--stream-interval`.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    parser = cmd.get("tool_call_parser")
    if not isinstance(parser, str) or not parser:
        return ctx.skip(T("no --tool-call-parser: the server parses no tool calls"))
    version = vllm_version(ctx)
    if not version:
        return ctx.unknown(T("the serving python's vLLM version is not known: which parser faults apply cannot be "
                             "told"))
    reasoning = cmd.get("reasoning_parser") if isinstance(cmd.get("reasoning_parser"), str) else None
    table = ctx.knowledge.parser_issues
    rows = issues_for(table, version, parser, reasoning)
    evidence = [cmd_evidence(cmd)]
    if not rows:
        return ctx.ok(T("no known streaming fault of --tool-call-parser {parser} in vLLM {version} ({n} rows in "
                        "the serve/tool-parser-issues table)", parser=parser, version=version,
                        n=len(table)), evidence)
    why = _multi_token(cmd)
    hit = [r for r in rows if r.trigger == "any" or why]
    quiet = [r for r in rows if r not in hit]
    for r in rows:
        evidence.append(ev(f"{r.id} (vLLM {r.vllm}, fixed in {r.fixed_in})", "\n".join([r.note, *r.source]),
                           ok=r in quiet))
    if not hit:
        return ctx.ok(T("vLLM {version} with --tool-call-parser {parser} has {ids}, which needs several tokens per "
                        "delta (speculative decoding or --stream-interval > 1); this command sets neither",
                        version=version, parser=parser, ids=", ".join(r.id for r in quiet)), evidence)
    fixed = max((r.fixed_in for r in hit), key=parse_version)
    parts = [T("{says} ({id}{trigger}; fixed in vLLM {fixed})", says=known(r.says), id=r.id, fixed=r.fixed_in,
               trigger=(", " + why) if r.trigger == "multi_token" else "") for r in hit]
    pair = parser + (f" with --reasoning-parser {reasoning}" if any(r.reasoning_parser for r in hit) else "")
    ascend = _first_ascend(ctx.matrix, fixed)
    upgrade = T("Move to vllm-ascend {ascend} or later (it pins vLLM {pinned}; `ascend-doctor matrix pins "
                "--vllm-ascend {ascend}` prints the stack).", ascend=ascend.version, pinned=ascend.vllm[0]) \
        if ascend else T("Move to vLLM {fixed} or later once a vllm-ascend release pairs with it.", fixed=fixed)
    fix = join("", [upgrade, " ", T("Until then have clients call tools without streaming (non-streamed calls are "
                                    "not affected)"),
                    T(", or drop {what}", what=why) if any(r.trigger == "multi_token" for r in hit) else "", "."])
    return ctx.warn(T("vLLM {version} with --tool-call-parser {pair} breaks streamed tool calls: {faults}",
                      version=version, pair=pair, faults=join("; ", parts)), evidence, remediation=fix)
