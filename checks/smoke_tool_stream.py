"""TOOL108-113 (stage="smoke"): streamed tool calls, parallel calls, the tool round trip, irrelevance, and raw call
markup leaked into content (the markup families of the matrix's model-families.toml)."""

from __future__ import annotations

import json
import re
from typing import Optional

from ascend_doctor.i18n import T, join
from ascend_doctor.plugin import check, ev
from ascend_doctor.smoke import scenarios as S
from ascend_doctor.smoke.arguments import decoded
from ascend_doctor.smoke.client import error_message
from ascend_doctor.smoke.judge import (
    NEEDS,
    STREAM_TOOL,
    answered_exchanges,
    answered_or_outcome,
    answers_of,
    body_excerpt,
    calls_text,
    exchange_evidence,
    http_problem,
    known_fix,
    leak_hint,
    nothing_to_scan,
    scenario_or_outcome,
    sse_excerpt,
    unconstrained,
)


@check("TOOL108", "stream-framing", severity="error", needs=NEEDS, stage="smoke")
def stream_framing(ctx):
    """Streamed tool calls use well-formed SSE ending in [DONE]

    What it checks: `stream: true` answers `text/event-stream` whose lines are `data: {json}` events, with exactly
    one `finish_reason`, terminated by `data: [DONE]` and nothing after it; HTTP 200 with no events fails.
    Why it matters: openai-python and every SSE client stop at `[DONE]`; a missing terminator hangs the client until
    its timeout, a malformed line raises mid-answer, and duplicate finish_reasons end the turn early.
    How to fix: Streams cut short or malformed usually come from a proxy buffering or rewriting SSE (disable
    buffering, e.g. nginx `proxy_buffering off;`) or a worker crash mid-stream (server log). Test directly against
    vllm serve to tell them apart.
    """
    facts = ctx.fact("smoke")
    fails, warns, evidence, slow = [], [], [], []
    seen, usable, skip_reason = answered_exchanges(ctx, facts, STREAM_TOOL, fails, evidence, slow)
    for name, x in usable:
        s = x.stream
        mine = []
        if s is None:
            mine.append(T("{name}: asked for a stream, got a non-SSE body ({content_type})", name=name,
                          content_type=x.content_type or 'no content-type'))
        else:
            if s.events == 0:
                mine.append(T("{name}: HTTP 200 but the stream carried no events", name=name))
            if s.framing_errors:
                mine.append(T("{name}: {n_framing_errors} framing error(s): {framing_errors}", name=name,
                              n_framing_errors=len(s.framing_errors), framing_errors=s.framing_errors[0]))
            if not s.done:
                mine.append(T("{name}: the stream ended without `data: [DONE]`", name=name))
            if s.data_after_done:
                mine.append(T("{name}: events after `data: [DONE]`", name=name))
            if s.events and len(s.finish_reasons) != 1:
                mine.append(T("{name}: {n_finish_reasons} finish_reason(s) {finish_reasons} (expected 1)", name=name,
                              n_finish_reasons=len(s.finish_reasons), finish_reasons=s.finish_reasons))
            if "text/event-stream" not in x.content_type:
                warns.append(T("{name}: content-type {content_type}, not text/event-stream", name=name,
                               content_type=repr(x.content_type)))
        if mine:
            fails.extend(mine)
            evidence.append(ev(x.describe(), sse_excerpt(x)))
    if not seen:
        return ctx.skip(T("no streaming scenario ran: {skip_reason}", skip_reason=skip_reason))
    if fails:
        return ctx.fail(join("; ", fails), evidence)
    if slow:
        return ctx.unknown(join("; ", slow + warns), evidence)
    if warns:
        return ctx.warn(join("; ", warns), evidence)
    return ctx.ok(T("{seen} stream(s): well-formed SSE, one finish_reason, terminated by [DONE]", seen=seen))


@check("TOOL109", "stream-tool-deltas", severity="error", needs=NEEDS, stage="smoke")
def stream_tool_deltas(ctx):
    """Streamed tool-call deltas assemble into the same call as the non-streamed answer

    What it checks: in the named-tool stream every `delta.tool_calls` entry has an `index`; `id` and `function.name`
    are sent once per call (repeats warn, a different value for the same index fails); the argument fragments
    concatenate to a JSON object equal to the non-streamed call's arguments (a difference is a warning: greedy
    decoding is not bit-exact across batch shapes).
    Why it matters: clients accumulate deltas by `index`; a missing index, or an id/name that changes mid-stream,
    produces phantom or merged calls — the classic "works without stream, breaks with stream" parser bug.
    How to fix: Upgrade vLLM/vllm-ascend to a release whose streaming parser for the model is fixed (vllm-ascend
    v0.23.0 patches the deepseek_v4 streaming parser); meanwhile clients can set `stream: false` for tool turns.
    """
    facts, x, early = answered_or_outcome(ctx, S.NAMED_STREAM, T("named tool_choice stream"))
    if early:
        return early
    s, r = x.stream, x.reply
    if s is None:
        return ctx.fail(T("asked for a stream, got a non-SSE body"), exchange_evidence(x))
    evidence = [ev(x.describe(), sse_excerpt(x))]
    if not r.tool_calls:
        return ctx.fail(T("the stream carried no tool-call deltas{leak_hint}",
                          leak_hint=leak_hint(x, ctx.knowledge.matrix)), evidence)
    fails = []
    if s.deltas_without_index:
        fails.append(T("{deltas_without_index} tool-call delta(s) without `index`",
                       deltas_without_index=s.deltas_without_index))
    fails += [f"conflicting id: {c}" for c in s.id_conflicts] + [f"conflicting name: {c}" for c in s.name_conflicts]
    first = r.tool_calls[0]
    if not first.id:
        fails.append(T("no `id` for the streamed call"))
    if not first.name:
        fails.append(T("no `function.name` for the streamed call"))
    streamed = decoded(first.arguments)
    if not isinstance(streamed, dict):
        fails.append(T("streamed arguments do not assemble to a JSON object: {arguments}",
                       arguments=repr(str(first.arguments)[:120])))
    if fails:
        return ctx.fail(join("; ", fails), evidence)
    warns = []
    if s.id_repeats:
        warns.append(T("the call id was sent again in {n_id_repeats} later delta(s) ({id_repeats})",
                       n_id_repeats=len(s.id_repeats), id_repeats=s.id_repeats[0]))
    if s.name_repeats:
        warns.append(T("function.name was sent again in {n_name_repeats} later delta(s) ({name_repeats})",
                       n_name_repeats=len(s.name_repeats), name_repeats=s.name_repeats[0]))
    ref = facts.get(S.NAMED)
    if ref is not None and ref.reply is not None and ref.reply.tool_calls:
        plain = decoded(ref.reply.tool_calls[0].arguments)
        if isinstance(plain, dict) and plain != streamed:
            warns.append(T("streamed arguments {dumps} differ from the non-streamed {dumps2}",
                           dumps=json.dumps(streamed)[:120], dumps2=json.dumps(plain)[:120]))
            evidence.append(ev(ref.describe(), calls_text(ref)))
    if warns:
        return ctx.warn(join("; ", warns[:4]), evidence,
                        remediation=T("Repeated ids/names are tolerated by openai-python but not by every client; a "
                                      "difference from the non-streamed call means clients see different calls "
                                      "depending on `stream` — check the parser's streaming path."))
    return ctx.ok(T("stream deltas assemble to {name}({dumps}), equal to the non-streamed call", name=first.name,
                    dumps=json.dumps(streamed)[:80]), evidence)


@check("TOOL110", "parallel-tool-calls", severity="error", needs=NEEDS, stage="smoke")
def parallel_tool_calls(ctx):
    """Two independent lookups come back as two calls with distinct ids and indices

    What it checks: "weather in Paris and in Tokyo" (tool_choice auto, parallel_tool_calls true), streamed and not,
    returns ≥ 2 calls; ids are unique and, in the stream, each call has its own `index` (two different ids on one
    index means two calls were merged). Fewer than two calls is a warning (the model chose so).
    Why it matters: agents fan out independent calls; merged or duplicated calls lose one lookup or glue two
    argument objects into one unparsable string.
    How to fix: Use a parser that supports multiple calls for the model (hermes, qwen3_coder, deepseek_v3x/v4,
    llama3_json handle lists); duplicated indices/ids are parser bugs fixed in later vLLM/vllm-ascend releases.
    """
    facts = ctx.fact("smoke")
    fails, warns, evidence, oks, slow = [], [], [], [], []
    seen, usable, reason = answered_exchanges(ctx, facts, (S.PARALLEL, S.PARALLEL_STREAM), fails, evidence, slow)
    for name, x in usable:
        r = x.reply
        mine = []
        if x.stream is not None and (x.stream.events == 0 or not x.stream.done):
            fails.append(T("{name}: the stream broke off ({events} event(s), {value} [DONE]; see TOOL108)", name=name,
                           events=x.stream.events, value=T("with") if x.stream.done else T("no")))
            evidence.append(exchange_evidence(x)[0])
            continue
        ids = [c.id for c in r.tool_calls if c.id]
        if len(ids) != len(set(ids)):
            mine.append(T("{name}: repeated ids {ids}", name=name, ids=ids))
        if x.stream is not None:
            if x.stream.id_conflicts:
                mine.append(T("{name}: two calls share an index ({id_conflicts})", name=name,
                              id_conflicts=x.stream.id_conflicts[0]))
            if x.stream.name_conflicts:
                mine.append(T("{name}: {name_conflicts}", name=name, name_conflicts=x.stream.name_conflicts[0]))
        else:
            idx = [c.index for c in r.tool_calls if c.index is not None]
            if len(idx) != len(set(idx)):
                mine.append(T("{name}: repeated indices {idx}", name=name, idx=idx))
        if mine:
            fails.extend(mine)
            evidence.append(ev(x.describe(), calls_text(x) if x.stream is None else sse_excerpt(x)))
        elif len(r.tool_calls) < 2:
            warns.append(T("{name}: {n_tool_calls} call(s) for two independent lookups{leak_hint}", name=name,
                           n_tool_calls=len(r.tool_calls), leak_hint=leak_hint(x, ctx.knowledge.matrix)))
            evidence.append(ev(x.describe(), calls_text(x)))
        else:
            oks.append(T("{name}: {n_tool_calls} calls", name=name, n_tool_calls=len(r.tool_calls)))
    if not seen:
        return ctx.skip(T("the parallel scenarios did not run: {reason}", reason=reason))
    if fails:
        return ctx.fail(join("; ", fails + warns), evidence)
    if slow:
        return ctx.unknown(join("; ", slow + warns + oks), evidence)
    if warns:
        return ctx.warn(join("; ", warns + oks), evidence)
    return ctx.ok(T("{oks}, distinct ids and indices", oks=join("; ", oks)))


def _gateway_only(direct, names: list, matrix) -> "str | None":
    """The direct server's URL when every scenario that leaked through --base-url answered clean at --direct-url."""
    from ascend_doctor.smoke import leaks as L

    if direct is None or not direct.reachable:
        return None
    for name in dict.fromkeys(names):
        x = direct.exchanges.get(name)
        r = x.reply if x is not None else None
        if r is None or L.detect_leaks(r.content, matrix, "content") or L.detect_leaks(
                r.reasoning, matrix, r.reasoning_field or "reasoning"):
            return None
    return direct.base_url


_QUOTED_ID = re.compile(r"""['"`]([A-Za-z0-9][A-Za-z0-9_\-:.]{5,})['"`]""")
_BARE_ID = re.compile(r"\b((?:call|chatcmpl-tool|toolu|fc|tool)[-_][A-Za-z0-9_\-]{4,})")


def _id_note(sent: Optional[str], msg: str) -> str:
    """What the rejection says about the call id: the id the smoke sent, the ids the server's error names, and — when
    they differ — that something between rewrote it (a gateway or proxy is the usual suspect)."""
    if not sent:
        return ""
    named = list(dict.fromkeys(m for m in _QUOTED_ID.findall(msg) + _BARE_ID.findall(msg)
                               if not m.lower().startswith(("tool_call", "assistant", "function"))))
    if not named:
        return T(" The smoke sent tool_call_id {sent} (the server's own call id); the error names no id.",
                 sent=repr(sent))
    if sent in named:
        return T(" The server's error names the id the smoke sent ({sent}): it saw the right id and still refused.",
                 sent=repr(sent))
    return (T(" The smoke sent tool_call_id {sent} (the server's own call id), but the server's error names {named}: "
              "the id was changed on the way — a gateway or proxy between client and vLLM that rewrites tool-call "
              "ids is the suspect (compare with `smoke --direct-url`).", sent=repr(sent),
              named=', '.join((repr(n) for n in named[:3]))))


@check("TOOL111", "tool-round-trip", severity="error", needs=NEEDS, stage="smoke")
def tool_round_trip(ctx):
    """A tool result sent back on the server's own call id reaches the model

    What it checks: the assistant message with the server's own `tool_calls` (content null) plus a `role: tool`
    message with that `tool_call_id` and a unique sentinel value is accepted (HTTP 200) and answered with text, no
    new call, mentioning the sentinel. A missing sentinel is a warning: the tool result may not reach the model.
    Why it matters: this is the second half of every tool turn. Chat templates that cannot render tool_calls or
    tool messages either crash (500), reject the history (400 "must be followed by tool messages") or silently drop
    the result, and the model then invents an answer.
    How to fix: 400/422: the server's request validation rejects the standard shape — upgrade vLLM; "must be
    followed by tool messages": the template/parser loses tool_call_id; 500: the chat template fails on tool
    messages (pass the model's official template with `--chat-template`, and for Mistral
    `--tokenizer-mode mistral`). Missing sentinel: check that the template renders role:tool content.
    """
    facts, x, skip = scenario_or_outcome(ctx, S.ROUNDTRIP)
    if skip:
        return skip
    if x.error:
        return http_problem(ctx, x, T("round trip"))
    if x.status != 200:
        msg = error_message(x)
        evidence = exchange_evidence(x)
        compat = facts.get(S.ROUNDTRIP_COMPAT)
        hint = _id_note(x.request.get("answers_call_id"), msg)
        if compat is not None:
            evidence.append(ev(compat.describe(), body_excerpt(compat, 600)))
            if compat.ok:
                hint += T(" The same history with assistant content \"\" instead of null was accepted, so clients can "
                          "work around it by sending an empty string")
                if compat.reply is not None and compat.reply.tool_calls:
                    hint += T(" (the model then called {names} again instead of answering)",
                              names=[c.name for c in compat.reply.tool_calls])
                elif compat.reply is not None and facts.sentinel and facts.sentinel in (compat.reply.content or ""):
                    hint += T(" (and the answer then used the tool result)")
                hint += "."
            else:
                hint += T(" The same history with assistant content \"\" was rejected too.")
        if "must be followed by tool messages" in msg.lower():
            return ctx.fail(T("the server rejected the tool result: HTTP {status}: {msg}.{hint}", status=x.status,
                              msg=msg[:300], hint=hint), evidence,
                            remediation=known_fix(msg))
        low = msg.lower()
        if 400 <= x.status < 500 or "validation error" in low:
            null_content = "content" in low and ("valid string" in low or "none" in low or "null" in low)
            what = (T("it requires a string `content` on the assistant message that carries tool_calls (OpenAI allows "
                      "null)") if null_content else T("its request validation refuses the OpenAI message shape"))
            as500 = (f" — and reports that request-validation error as HTTP {x.status} instead of 400/422"
                     if x.status >= 500 else "")
            return ctx.fail(T("the server rejected the standard tool-result history (assistant tool_calls with "
                              "content null + role:tool): {what}{as500}.{hint} Server said: {msg}",
                              what=what, as500=as500, hint=hint, msg=msg[:300]), evidence,
                            remediation=T("Upgrade the server (vLLM accepts content null with tool_calls) or fix the "
                                          "gateway schema in front of it; until then clients must send content \"\"."))
        return ctx.fail(T("the server failed while rendering the tool-result history: HTTP {status}: {msg}.{hint}",
                          status=x.status, msg=msg[:300], hint=hint), evidence,
                        remediation=T("The chat template cannot render assistant tool_calls or role:tool messages: "
                                      "pass the model's official template with `--chat-template` (server log has the "
                                      "Jinja error)."))
    bad = http_problem(ctx, x, T("round trip"))
    if bad:
        return bad
    r = x.reply
    text = (r.content or "").strip()
    if r.tool_calls:
        return ctx.warn(T("after the tool result the model called {value} again instead of answering",
                          value=[c.name for c in r.tool_calls]), exchange_evidence(x, calls_text(x)))
    if not text:
        return ctx.fail(T("the answer after the tool result has no text content"), exchange_evidence(x, calls_text(x)))
    sentinel = facts.sentinel or ""
    if sentinel and sentinel not in text:
        return ctx.warn(T("the answer does not mention the tool result's sentinel {sentinel}: the tool result may not "
                          "reach the model (answer: {text})", sentinel=sentinel,
                          text=repr(text[:120])), exchange_evidence(x),
                        remediation=T("Check that the chat template renders role:tool messages (look for the tool "
                                      "content in the rendered prompt, vllm serve logs it with "
                                      "`--enable-log-requests`); small models may also just ignore it."))
    return ctx.ok(T("tool result on call id {request} accepted and used (sentinel {sentinel} in the answer)",
                    request=repr(x.request.get('answers_call_id')), sentinel=sentinel), exchange_evidence(x))


@check("TOOL112", "tool-irrelevance", severity="warning", needs=NEEDS, stage="smoke")
def tool_irrelevance(ctx):
    """An unrelated question gets an answer, not a tool call

    What it checks: with tools offered and `tool_choice: "auto"`, "What is the capital of Italy?" is answered in
    text with no call.
    Why it matters: a server/template that forces calls whenever tools are present (e.g. "required" applied to
    "auto") makes agents call tools for everything.
    How to fix: Check that the serve command does not force tool use (chat template or gateway injecting
    tool_choice) and that `--tool-call-parser` matches the model; otherwise it is model behaviour.
    """
    facts, x, early = answered_or_outcome(ctx, S.IRRELEVANT, T("irrelevant question"))
    if early:
        return early
    r = x.reply
    if r.tool_calls:
        return ctx.warn(T("a question needing no tool got {n_tool_calls} call(s) ({value})",
                          n_tool_calls=len(r.tool_calls), value=[c.name for c in r.tool_calls]),
                        exchange_evidence(x, calls_text(x)))
    if not (r.content or "").strip():
        return ctx.warn(T("a question needing no tool got neither text nor a call"),
                        exchange_evidence(x, calls_text(x)))
    return ctx.ok(T("answered in text without a call ({content})", content=repr(r.content.strip()[:60])),
                  exchange_evidence(x))


@check("TOOL113", "tool-markup-leak", severity="error", needs=[*NEEDS, "smoke_direct"], stage="smoke")
def tool_markup_leak(ctx):
    """No raw tool-call or reasoning markup leaks into content

    What it checks: `content`, `reasoning_content` and `reasoning` of every answer (streamed ones assembled) for
    DeepSeek V3/V3.1 tokens (`<｜tool▁calls▁begin｜>`), DSML (`<｜DSML｜function_calls>`, `<｜DSML｜tool_calls>`,
    spaced and doubled-bar variants), hermes `<tool_call>`, Qwen3 XML `<function=`, Mistral `[TOOL_CALLS]`,
    Llama `<|python_tag|>`, and `<think>` in content.
    Why it matters: leaked markup means the server's tool-call (or reasoning) parser is missing or wrong for the
    model: the call is shown to the user as text and never executed (e.g. DeepSeek V4 DSML on a vLLM without the
    deepseek_v4 parser, freelens-ai-extension#127).
    How to fix: Start vllm serve with the `--tool-call-parser` (and `--reasoning-parser`, `--tokenizer-mode`) of the
    detected family — the finding names them and the first vLLM release (in the matrix) that has them.
    """
    from ascend_doctor.smoke import leaks as L

    facts = ctx.fact("smoke")
    answers = answers_of(facts)
    if not answers:
        return nothing_to_scan(ctx, facts, T("markup"))
    matrix = ctx.knowledge.matrix  # the shipped matrix plus any --matrix layers: the markup families are rows there
    fams = L.families(matrix)
    leaks, evidence, scanned, opened = [], [], len(answers), False
    for name, x in answers:
        r = x.reply
        found = (L.detect_leaks(r.content, matrix, "content")
                 + L.detect_leaks(r.reasoning, matrix, r.reasoning_field or "reasoning"))
        for lk in found:
            leaks.append((name, lk))
            evidence.append(ev(f"{x.describe()} {lk.field}", lk.excerpt))
            opened = opened or L.closed_without_opening(lk, r.content)
    if not leaks:
        return ctx.ok(T("no tool-call or reasoning markup in the content of {scanned} answer(s)", scanned=scanned))
    families = list(dict.fromkeys(lk.family for _, lk in leaks))
    msg = join("; ", [T("{markup} in {where} ({marker})", markup=fams[lk.family].label,
                        where=f"{name}.{lk.field}", marker=repr(lk.marker)) for name, lk in leaks[:4]])
    remediation = join("\n", [L.remediation_for(f, matrix) for f in families])
    if opened:
        remediation = join("\n", [remediation, L.TEMPLATE_OPENS_THINK_FIX])
    loose = [name for name, _ in leaks if unconstrained(name, facts.exchanges[name], matrix)]
    if loose:
        # The parser is there (it emitted the envelope under a forced choice); the arguments ran away.
        remediation = (T("{fromkeys}: {strict_level_fix}\nIf the parser is missing too: {remediation}",
                         fromkeys=', '.join(dict.fromkeys(loose)), strict_level_fix=L.strict_level_fix(matrix),
                         remediation=remediation))
    details = {"families": families, "parsers": [fams[f].tool_parser for f in families]}
    gateway_only = _gateway_only(ctx.try_fact("smoke_direct"), [name for name, _ in leaks], matrix)
    if gateway_only:
        # The same requests straight to vLLM come back clean: the layer to fix is the gateway, as SRV106 says — not
        # the parser of a vLLM that is doing its job (#22 item 9).
        msg = T("{msg} — only through the gateway: the same requests to {direct} answer without it", msg=msg,
                direct=gateway_only)
        remediation = T("The markup is added between vLLM and the client: fix the gateway at --base-url (see SRV106) "
                        "so it passes content and tool_calls through unchanged; vllm serve needs no change.")
        details["gateway_only"] = True
    if not any(fams[f].tool_parser for f in families):  # reasoning tags only: the answer is still usable
        return ctx.warn(T("raw markup leaked: {msg}", msg=msg), evidence[:4], remediation=remediation, **details)
    return ctx.fail(T("raw markup leaked: {msg}", msg=msg), evidence[:4], remediation=remediation, **details)
