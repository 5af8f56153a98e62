"""Smoke checks (stage="smoke"): pure judgements of the `smoke` fact gathered by ascend_doctor.smoke.scenarios.

SRV: the server answers at all. TOOL: tool calling works the way OpenAI clients (openai-python, LangChain, agents)
expect. Each check names the scenario exchange(s) it judges in its evidence.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Optional

from ascend_doctor.evaluator import ev
from ascend_doctor.i18n import T, join
from ascend_doctor.registry import check
from ascend_doctor.smoke import scenarios as S
from ascend_doctor.smoke.arguments import argument_problems, decoded
from ascend_doctor.smoke.client import Exchange, error_message

NEEDS = ["smoke"]
NON_STREAM_TOOL = [S.NAMED, S.REQUIRED, S.AUTO, S.PARALLEL]
STREAM_TOOL = [S.NAMED_STREAM, S.PARALLEL_STREAM]

# Server error texts with a known cause (../shared/facts/error-codes.md §6).
_KNOWN_ERRORS = [
    ("tool choice requires --enable-auto-tool-choice",
     T("Restart vllm serve with `--enable-auto-tool-choice --tool-call-parser <parser of the model>` "
       "(e.g. hermes for Qwen2.5, deepseek_v31/deepseek_v32/deepseek_v4 for DeepSeek).")),
    ("must be followed by tool messages",
     T("The server did not pair the role:tool message with the assistant's tool_calls although the request sent "
       "them in the standard shape (content null, tool_call_id equal to the call id): its chat template or request "
       "parser drops tool messages or the tool_call_id; use the model's official chat template (`--chat-template`).")),
    ("does not exist", T("Pass the served model name with `--model` (see `GET /v1/models`).")),
]


def _excerpt(x: Exchange, limit: int = 1200) -> str:
    return x.body_text[:limit] if x.body_text else (x.error or "")


def _sse_excerpt(x: Exchange, lines: int = 12) -> str:
    """The stream lines that matter: tool-call deltas, finish reasons, [DONE], and anything that is not `data:`."""
    keep = [ln for ln in x.body_text.splitlines() if ln.strip() and (
        "tool_calls" in ln or '"finish_reason": "' in ln or '"finish_reason":"' in ln or "[DONE]" in ln
        or not ln.startswith("data:"))]
    if not keep:
        return _excerpt(x)
    more = f"\n… ({len(keep) - lines} more relevant lines)" if len(keep) > lines else ""
    return "\n".join(keep[:lines]) + more


def _evid(x: Exchange, extra: str = "") -> list:
    text = extra or _excerpt(x)
    return [ev(x.describe(), text)]


def _known_fix(text: str) -> Optional[str]:
    for needle, fix in _KNOWN_ERRORS:
        if needle.lower() in text.lower():
            return fix
    return None


def _scenario(ctx, name: str):
    """(facts, exchange) or (facts, None, skip-outcome) when the scenario did not run."""
    facts = ctx.fact("smoke")
    if name in facts.not_run:
        return facts, None, ctx.skip(T("the {name} scenario did not run: {not_run}", name=name,
                                       not_run=facts.not_run[name]))
    x = facts.get(name)
    if x is None:
        return facts, None, ctx.skip(T("the {name} scenario did not run", name=name))
    return facts, x, None


def _answered_scenario(ctx, name: str, what: str):
    """(facts, exchange, None), or (facts, exchange, outcome) when the scenario did not run (skip) or did not answer
    with a usable chat completion (fail)."""
    facts, x, skip = _scenario(ctx, name)
    if skip:
        return facts, x, skip
    return facts, x, _http_problem(ctx, x, what)


def _answered(ctx, facts, names, fails: list, evidence: list):
    """(how many of `names` ran, [(name, exchange) that answered], why the others did not run).

    A scenario that ran but failed at the HTTP/transport level is recorded in `fails`/`evidence` here.
    """
    ran, usable, reason = 0, [], None
    for name in names:
        x = facts.get(name)
        if name in facts.not_run or x is None:
            reason = facts.not_run.get(name, "not run")
            continue
        ran += 1
        bad = _http_problem(ctx, x, name)
        if bad:
            fails.append(bad.message)
            evidence.append(_evid(x)[0])
        else:
            usable.append((name, x))
    return ran, usable, reason


def _http_problem(ctx, x: Exchange, what: str):
    """A fail outcome when the exchange has no usable chat completion, else None."""
    if x.error:
        if x.error_kind == "timeout":
            return ctx.fail(T("{what}: no complete answer within the timeout ({error})", what=what, error=x.error),
                            _evid(x),
                            remediation=T("Raise --timeout if the model is just slow (first request compiles graphs "
                                          "on Ascend), else read the server log for a stuck request."))
        return ctx.fail(T("{what}: the request failed at the transport level ({error_kind}: {error})", what=what,
                          error_kind=x.error_kind, error=x.error), _evid(x),
                        remediation=T("Read the server log around this request: a reset or truncated response usually "
                                      "means the worker crashed or a proxy cut the connection."))
    if x.status != 200:
        msg = error_message(x)
        fix = _known_fix(msg)
        if x.status in (401, 403):
            fix = T("The server wants an API key: export it and pass `--api-key-env VAR`.")
        return ctx.fail(T("{what}: HTTP {status}: {msg}", what=what, status=x.status, msg=msg[:300]),
                        _evid(x), remediation=fix)
    if x.stream is None and x.json_error:
        return ctx.fail(T("{what}: HTTP 200 but the body is not JSON ({json_error})", what=what,
                          json_error=x.json_error), _evid(x),
                        remediation=T("Something between the client and vLLM (proxy, gateway) rewrote the response, "
                                      "or the server is not OpenAI-compatible; compare with a direct request to vllm "
                                      "serve."))
    if x.reply is None:
        return ctx.fail(T("{what}: HTTP 200 but no `choices` in the response", what=what), _evid(x))
    if x.stream is None and x.reply.choices == 0:
        return ctx.fail(T("{what}: HTTP 200 with an empty `choices` list", what=what), _evid(x))
    return None


def _calls_text(x: Exchange) -> str:
    r = x.reply
    if r is None:
        return _excerpt(x)
    calls = [{"index": c.index, "id": c.id, "name": c.name, "arguments": c.arguments} for c in r.tool_calls]
    return (f"finish_reason={r.finish_reason!r} tool_calls({r.tool_calls_field})={json.dumps(calls)[:800]}\n"
            f"content={r.content[:300] if r.content is not None else None!r}")


FORCED = (S.NAMED, S.NAMED_STREAM, S.REQUIRED)


def _answers(facts) -> list:
    """(scenario, exchange) for every exchange that came back with an assistant message to read."""
    return [(name, x) for name, x in facts.exchanges.items() if x.reply is not None]


def _nothing_to_scan(ctx, facts, what: str):
    if facts.not_run:
        return ctx.skip(T("no answer to scan: {next}", next=next(iter(facts.not_run.values()))))
    return ctx.unknown(T("no answer came back to scan for {what}", what=what))


def _unconstrained(name: str, x: Exchange) -> bool:
    from ascend_doctor.smoke.leaks import unconstrained_arguments

    r = x.reply
    return r is not None and unconstrained_arguments(name in FORCED, r.content, r.finish_reason, bool(r.tool_calls))


def _schema_problem(problem: str) -> bool:
    """An argument problem that grammar-constrained decoding would have prevented (not bytes after the JSON)."""
    return ": schema: " in problem or "are not JSON" in problem or "decode to a" in problem


def _strict_fix(ctx) -> str:
    from ascend_doctor.smoke.leaks import strict_level_fix

    try:
        matrix = ctx.matrix
    except Exception:  # an unavailable matrix degrades the remediation text, never the verdict
        matrix = None
    return strict_level_fix(matrix)


def _leak_hint(x: Exchange) -> str:
    from ascend_doctor.smoke import leaks as L  # imported here: a static check loads this module but runs no smoke

    r = x.reply
    leaks = L.detect_leaks(r.content if r else None) + L.detect_leaks(r.reasoning if r else None, "reasoning")
    if not leaks:
        return ""
    return T(" — the content holds raw {label} markup (see TOOL113)", label=L.families()[leaks[0].family].label)


# ----------------------------------------------------------------------------------------------------------------
@check("SRV101", "server-reachable", severity="critical", needs=NEEDS, stage="smoke")
def server_reachable(ctx):
    """The OpenAI-compatible server answers at the base URL

    What it checks: `GET <base-url>/models` gets any HTTP answer (connection refused, timeout or reset fail).
    Why it matters: nothing else can be tested; a server that does not answer is down, still loading weights, or
    listening on another address/port than the one clients use.
    How to fix: Check that `vllm serve` is running and finished loading (log line `Application startup complete`),
    that `--host`/`--port` match the URL (`--host 0.0.0.0` to accept remote clients), and that no firewall or
    container port mapping is missing (`docker run -p 8000:8000`).
    """
    facts = ctx.fact("smoke")
    x = facts.get(S.MODELS)
    if x is None:
        return ctx.skip(T("the models request was not made"))
    if not facts.reachable:
        return ctx.fail(T("no answer from {base_url}: {unreachable_reason}", base_url=facts.base_url,
                          unreachable_reason=facts.unreachable_reason), _evid(x))
    return ctx.ok(T("{base_url} answered GET /models with HTTP {status} in {latency_ms} ms", base_url=facts.base_url,
                    status=x.status, latency_ms=format(x.latency_ms, ".0f")), _evid(x))


@check("SRV102", "model-served", severity="error", needs=NEEDS, stage="smoke")
def model_served(ctx):
    """The server lists the model under test

    What it checks: `GET /v1/models` returns the OpenAI list shape and contains `--model` (when `--model` is
    omitted and exactly one model is served, that one is tested).
    Why it matters: clients send the model name with every request; a name the server does not serve answers 404
    ("The model ... does not exist"), which users often misread as a broken deployment.
    How to fix: Use a name from the list (vllm serve `--served-model-name NAME` sets it, default the model path),
    or pass `--model NAME` to ascend-doctor when several models are served.
    """
    facts = ctx.fact("smoke")
    x = facts.get(S.MODELS)
    if x is None or not facts.reachable:
        return ctx.skip(T("the server is unreachable (see SRV101)"))
    if x.error:
        return ctx.fail(T("GET /models failed: {error_kind}: {error}", error_kind=x.error_kind, error=x.error),
                        _evid(x))
    if x.status != 200:
        fix = (T("The server wants an API key: export it and pass `--api-key-env VAR`.") if x.status in (401, 403)
               else None)
        return ctx.fail(T("GET /models answered HTTP {status}: {error_message}", status=x.status,
                          error_message=error_message(x)[:200]), _evid(x), remediation=fix)
    if facts.models_served is None:
        return ctx.fail(T("GET /models did not return the OpenAI list shape ({{\"data\": [{{\"id\": ...}}]}})"),
                        _evid(x))
    served = ", ".join(facts.models_served) or "none"
    if facts.model_source == "option" and facts.model not in facts.models_served:
        return ctx.fail(T("model {model} is not served; the server serves: {served}", model=repr(facts.model),
                          served=served), _evid(x),
                        remediation=T("Pass one of these with --model: {served}.", served=served))
    if not facts.model:
        return ctx.fail(T("cannot choose a model: {n_models_served} served ({served}); pass --model",
                          n_models_served=len(facts.models_served), served=served),
                        _evid(x), remediation=T("Pass one of these with --model: {served}.", served=served))
    how = T("the only model served") if facts.model_source == "only-served" else T("listed")
    return ctx.ok(T("model {model} is {how}", model=repr(facts.model), how=how), _evid(x))


@check("SRV103", "chat-completion", severity="error", needs=NEEDS, stage="smoke")
def chat_completion(ctx):
    """A plain chat completion answers with text

    What it checks: `POST /v1/chat/completions` without tools returns HTTP 200, one choice with non-empty string
    `content` and a `finish_reason`.
    Why it matters: if plain generation fails, every tool-calling failure below is a symptom of that, not of the
    tool parser.
    The answer must also end where the turn ends: control tokens in `content` (`<|im_end|>`, `<end_of_turn>`, …, see
    SRV105) fail, and a one-word prompt that runs to `finish_reason: "length"` is a warning (the model does not stop).
    How to fix: Read the server log for this request. Empty content with HTTP 200 usually means a chat template that
    renders nothing useful or a reasoning parser that moved everything to `reasoning_content`; pass
    `--chat-template` with the model's official template. Control tokens or a one-word prompt that never stops: the
    template is not the model's own (SRV105).
    """
    from ascend_doctor.smoke.leaks import CONTROL_TOKEN_FIX, detect_control_tokens

    facts, x, early = _answered_scenario(ctx, S.CHAT, T("plain chat"))
    if early:
        return early
    r = x.reply
    leak = detect_control_tokens(r.content)
    if leak is not None:
        return ctx.fail(T("plain chat answered with chat-template control tokens in content ({tokens}; "
                          "finish_reason={finish_reason}): {content}",
                          tokens=', '.join(leak.tokens), finish_reason=repr(r.finish_reason),
                          content=repr(r.content[:80])),
                        _evid(x), remediation=CONTROL_TOKEN_FIX)
    if not (r.content or "").strip():
        if r.reasoning and r.finish_reason == "length":
            # A reasoning model spent the whole (small) budget thinking: generation works, the answer was cut.
            return ctx.ok(T("plain chat generated only `{reasoning_field}` before max_tokens (finish_reason length) — "
                            "a reasoning model thinking first",
                            reasoning_field=r.reasoning_field), _evid(x))
        where = f" (text went to `{r.reasoning_field}`)" if r.reasoning else ""
        return ctx.fail(T("plain chat returned no content{where}", where=where), _evid(x))
    if not r.finish_reason:
        return ctx.warn(T("plain chat answered but without a finish_reason"), _evid(x))
    if r.finish_reason == "length":
        return ctx.warn(T("plain chat asked for one word ran to max_tokens ({chat_tokens}, finish_reason length): "
                          "{content}", chat_tokens=S.CHAT_TOKENS,
                          content=repr(r.content.strip()[:80])), _evid(x),
                        remediation=T("A model that does not stop after one word usually does not see its end-of-turn "
                                      "token: {control_token_fix}",
                                      control_token_fix=CONTROL_TOKEN_FIX))
    return ctx.ok(T("plain chat answered {content} (finish_reason={finish_reason}, {latency_ms} ms)",
                    content=repr(r.content.strip()[:60]), finish_reason=r.finish_reason,
                    latency_ms=format(x.latency_ms, ".0f")), _evid(x))


@check("SRV104", "load-test", severity="error", needs=NEEDS, stage="smoke")
def load_test(ctx):
    """Concurrent tool-call requests all succeed

    What it checks: with `--load N --concurrency C`, N tool-call requests (stream and non-stream mixed) with C in
    flight all return HTTP 200 with a tool call; reports p50/p95/p99 latency and time-to-first-token.
    Why it matters: a server that answers one request can still fail under concurrency: KV-cache exhaustion,
    preemption, request timeouts at a gateway, or a parser that breaks when streams interleave.
    How to fix: Read the first errors in the evidence. 5xx or resets: look at the server log for OOM/preemption
    (lower `--max-num-seqs`, raise `--gpu-memory-utilization` within HBM limits); timeouts: raise the gateway
    timeout or lower concurrency.
    """
    facts = ctx.fact("smoke")
    if facts.load is None:
        return ctx.skip(facts.load_not_run or T("load mode not requested (--load N --concurrency C)"))
    lr = facts.load
    metrics = (f"p50 {lr.p50_ms} ms, p95 {lr.p95_ms} ms, p99 {lr.p99_ms} ms"
               + (f", TTFT p50 {lr.ttft_p50_ms} ms" if lr.ttft_p50_ms is not None else ""))
    summary = (T("{succeeded}/{requested} succeeded with {concurrency} in flight in {wall_s} s ({metrics})",
                 succeeded=lr.succeeded, requested=lr.requested, concurrency=lr.concurrency,
                 wall_s=format(lr.wall_s, ".1f"), metrics=metrics))
    details = lr.model_dump()
    if lr.error_count or lr.succeeded < lr.requested or lr.stopped_early:
        evidence = [ev(f"load: request failure {i + 1}", e) for i, e in enumerate(lr.errors[:5])]
        if lr.stopped_early:
            evidence.append(ev("load: stopped early", lr.stopped_early))
        return ctx.fail(summary, evidence, **details)
    return ctx.ok(summary, **details)


@check("SRV105", "control-token-leak", severity="error", needs=NEEDS, stage="smoke")
def control_token_leak(ctx):
    """No chat-template control tokens in any answer

    What it checks: `content` and the reasoning fields of every answer (streams assembled) for turn-delimiting
    tokens: ChatML `<|im_end|>`/`<|im_start|>`, `<|endoftext|>`, Llama 3 `<|eot_id|>`/`<|start_header_id|>`, Gemma
    `<end_of_turn>`, DeepSeek `<｜end▁of▁sentence｜>`, Phi `<|end|>`, Llama 2/Mistral `[/INST]` and `</s>`.
    Why it matters: they show the chat template does not fit the model (a template for another family passed with
    `--chat-template`, a tokenizer that does not mark them special, an `eos_token_id` that misses the end-of-turn
    token): the model never stops at the end of its turn, writes the user's next turn itself until max_tokens, and
    users see `ready<|im_end|>\n<|im_start|>user…`. Tool calls suffer first: the parser meets text it does not expect.
    How to fix: Serve the model's own chat template (drop a `--chat-template` meant for another family) and check the
    model directory's tokenizer_config.json / generation_config.json (`eos_token_id`).
    """
    from ascend_doctor.smoke.leaks import CONTROL_TOKEN_FIX, detect_control_tokens

    facts = ctx.fact("smoke")
    answers = _answers(facts)
    if not answers:
        return _nothing_to_scan(ctx, facts, T("control tokens"))
    found, evidence, scanned = [], [], len(answers)
    for name, x in answers:
        r = x.reply
        for text, field in ((r.content, "content"), (r.reasoning, r.reasoning_field or "reasoning")):
            leak = detect_control_tokens(text, field)
            if leak is not None:
                found.append((name, leak, r.finish_reason))
                evidence.append(ev(f"{x.describe()} {field}", leak.excerpt))
    if not found:
        return ctx.ok(T("no chat-template control tokens in {scanned} answer(s)", scanned=scanned))
    msg = "; ".join(f"{name}.{lk.field}: {', '.join(lk.tokens)} (finish_reason={fr!r})" for name, lk, fr in found[:4])
    families = list(dict.fromkeys(f for _, lk, _ in found for f in lk.families))
    return ctx.fail(T("chat-template control tokens in {n_found} answer(s) — {msg}", n_found=len(found), msg=msg),
                    evidence[:4],
                    remediation=CONTROL_TOKEN_FIX, tokens=sorted({t for _, lk, _ in found for t in lk.tokens}),
                    families=families)


@check("SRV106", "gateway-transparent", severity="error", needs=["smoke", "smoke_direct"], stage="smoke")
def gateway_transparent(ctx):
    """A gateway in front of vLLM passes the exchange through unchanged

    What it checks: with `smoke --base-url GATEWAY --direct-url VLLM`, the same scenarios (same sentinel, temperature
    0) run against both, and every answer is compared: HTTP status, streamed or not, number and names of tool calls,
    the shape of the call ids (prefix and length: the values are random per request), the arguments (decoded JSON,
    and their bytes), `content` null/"" beside calls, finish_reason, and the round trip.
    Why it matters: a gateway or proxy that rewrites tool-call ids, drops the `role: tool` message, re-serialises
    arguments or buffers streams breaks agents while vLLM is fine — reports lost weeks looking at vLLM. What differs
    between the two runs is the gateway's doing; the evidence quotes both bytes.
    How to fix: Configure the gateway to pass `tool_calls`, `tool_call_id`, `role: tool` messages and SSE streams
    through unchanged (or upgrade it); the finding names the scenario and field it changed.
    """
    from ascend_doctor.smoke.compare import compare_runs

    facts = ctx.fact("smoke")
    direct = ctx.try_fact("smoke_direct")
    if direct is None:
        return ctx.skip(T("no --direct-url given: nothing to compare the server at --base-url with"))
    if not direct.reachable:
        return ctx.unknown(T("the direct server {base_url} did not answer ({unreachable_reason}), so the gateway "
                             "cannot be compared with it", base_url=direct.base_url,
                             unreachable_reason=direct.unreachable_reason))
    if not facts.reachable:
        return ctx.skip(T("the gateway {base_url} is unreachable (see SRV101)", base_url=facts.base_url))
    diffs = compare_runs(facts, direct)
    serious = [d for d in diffs if d.serious]
    compared = len([n for n in facts.exchanges if n in direct.exchanges])
    evidence = [ev(f"{d.scenario}.{d.aspect}: via {facts.base_url}", d.gateway_bytes or d.gateway)
                for d in serious[:3]] + [ev(f"{d.scenario}.{d.aspect}: direct {direct.base_url}",
                                            d.direct_bytes or d.direct) for d in serious[:3]]
    details = {"differences": [d.model_dump() for d in diffs[:20]], "compared": compared}
    if serious:
        msg = join("; ", [T("{scenario} {aspect}: {gateway} via the gateway, {direct} direct", scenario=d.scenario,
                            aspect=d.aspect, gateway=d.gateway, direct=d.direct) for d in serious[:4]])
        return ctx.fail(T("the gateway changed {n_serious} thing(s) vLLM answered directly — {msg}",
                          n_serious=len(serious), msg=msg), evidence,
                        remediation=T("These differences are the gateway's (the same requests straight to vLLM answer "
                                      "differently): configure or upgrade it to pass tool_calls, tool_call_id, "
                                      "role:tool messages, content and SSE streams through unchanged."), **details)
    note = (T(" ({n_diffs} byte-level difference(s) with equal JSON, e.g. {scenario} {aspect})", n_diffs=len(diffs),
              scenario=diffs[0].scenario, aspect=diffs[0].aspect)
            if diffs else "")
    return ctx.ok(T("{compared} scenario(s) answered the same through {base_url} as straight from {base_url2}{note}",
                    compared=compared, base_url=facts.base_url, base_url2=direct.base_url, note=note), **details)


# ----------------------------------------------------------------------------------------------------------------
def _tool_choice_check(ctx, name: str, what: str, allowed: set):
    facts, x, early = _answered_scenario(ctx, name, what)
    if early:
        return early
    r = x.reply
    if not r.tool_calls:
        if _unconstrained(name, x):
            return ctx.fail(T("{what}: HTTP 200 without tool_calls — raw call markup in content and finish_reason "
                              "'length': the arguments were not constrained{leak_hint}",
                              what=what, leak_hint=_leak_hint(x)),
                            _evid(x, _calls_text(x)), remediation=_strict_fix(ctx))
        return ctx.fail(T("{what}: no tool call came back (finish_reason={finish_reason}){leak_hint}", what=what,
                          finish_reason=repr(r.finish_reason), leak_hint=_leak_hint(x)),
                        _evid(x, _calls_text(x)),
                        remediation=T("Start vllm serve with `--enable-auto-tool-choice --tool-call-parser <parser>` "
                                      "matching the model; if raw markup shows in content, see TOOL113."))
    wrong = [c.name for c in r.tool_calls if c.name not in allowed]
    if wrong:
        return ctx.fail(T("{what}: called {wrong}, expected one of {allowed}", what=what, wrong=wrong,
                          allowed=sorted(allowed)), _evid(x, _calls_text(x)))
    return ctx.ok(T("{what}: {n_tool_calls} call(s) to {tool_calls}", what=what, n_tool_calls=len(r.tool_calls),
                    tool_calls=', '.join((str(c.name) for c in r.tool_calls))),
                  _evid(x, _calls_text(x)))


@check("TOOL101", "tool-choice-named", severity="error", needs=NEEDS, stage="smoke")
def tool_choice_named(ctx):
    """A named tool_choice returns a call to that function

    What it checks: `tool_choice={"type": "function", "function": {"name": "get_weather"}}` returns HTTP 200 with a
    `tool_calls` entry for get_weather (arguments are judged by TOOL105, finish_reason by TOOL106).
    Why it matters: forcing a function is how agents run a fixed step; vLLM serves it with guided decoding, so a
    failure here points at the guided-decoding backend or the request path rather than the model.
    How to fix: Read the error in the evidence. With vLLM, named tool choice needs no parser but does need a working
    structured-output backend (`--guided-decoding-backend` / `--structured-outputs-config`); upgrade vLLM and
    vllm-ascend together if the backend crashes on NPU.
    """
    return _tool_choice_check(ctx, S.NAMED, T("named tool_choice"), {"get_weather"})


@check("TOOL102", "tool-choice-required", severity="error", needs=NEEDS, stage="smoke")
def tool_choice_required(ctx):
    """tool_choice "required" returns at least one tool call

    What it checks: `tool_choice: "required"` returns HTTP 200 with one or more calls to offered functions.
    Why it matters: "required" is how agent frameworks force the next step to be an action; servers that ignore it
    answer in prose and the agent loop stalls.
    How to fix: vLLM supports "required" from 0.8.3 (guided decoding over the tool list); older servers return 400.
    Upgrade vLLM and vllm-ascend together, or use a named tool_choice.
    """
    return _tool_choice_check(ctx, S.REQUIRED, T("tool_choice required"), set(S.SCHEMAS))


@check("TOOL103", "tool-choice-auto", severity="error", needs=NEEDS, stage="smoke")
def tool_choice_auto(ctx):
    """tool_choice "auto" calls the tool for a question that needs it

    What it checks: a weather question with tools offered and `tool_choice: "auto"` returns a get_weather call.
    A text-only answer is a warning (the model chose not to call, or the parser did not recognise the call), never
    a pass.
    Why it matters: "auto" is the default of every agent framework. It depends on the server's tool-call parser
    turning the model's markup into `tool_calls`; with a missing or wrong parser the call arrives as text.
    How to fix: Start vllm serve with `--enable-auto-tool-choice --tool-call-parser <parser>` (hermes for
    Qwen2.5/Qwen3, qwen3_coder for Qwen3-Coder, deepseek_v3/v31/v32/v4 for DeepSeek, mistral, llama3_json) and the
    model's official chat template; see TOOL113 for leaked markup.
    """
    facts, x, early = _answered_scenario(ctx, S.AUTO, T("tool_choice auto"))
    if early:
        return early
    r = x.reply
    if not r.tool_calls:
        return ctx.warn(T("tool_choice auto: answered in text instead of calling get_weather{leak_hint}",
                          leak_hint=_leak_hint(x)),
                        _evid(x, _calls_text(x)))
    wrong = [c.name for c in r.tool_calls if c.name not in S.SCHEMAS]
    if wrong:
        return ctx.fail(T("tool_choice auto: called unknown function(s) {wrong}", wrong=wrong),
                        _evid(x, _calls_text(x)))
    if not any(c.name == "get_weather" for c in r.tool_calls):
        return ctx.warn(T("tool_choice auto: called {value}, not get_weather", value=[c.name for c in r.tool_calls]),
                        _evid(x, _calls_text(x)))
    return ctx.ok(T("tool_choice auto: called get_weather ({n_tool_calls} call(s))", n_tool_calls=len(r.tool_calls)),
                  _evid(x, _calls_text(x)))


@check("TOOL104", "tool-choice-none", severity="error", needs=NEEDS, stage="smoke")
def tool_choice_none(ctx):
    """tool_choice "none" answers in text without a call

    What it checks: with tools offered and `tool_choice: "none"`, the answer has text content and no tool_calls.
    Why it matters: clients use "none" to make the model summarise after tools ran; a call here loops the agent.
    How to fix: vLLM honours "none" by not parsing tool calls (0.8.x+ also drops tools from the prompt with
    `--exclude-tools-when-tool-choice-none`); upgrade if calls still come back.
    """
    facts, x, early = _answered_scenario(ctx, S.NONE, T("tool_choice none"))
    if early:
        return early
    r = x.reply
    if r.tool_calls:
        return ctx.fail(T("tool_choice none: {n_tool_calls} tool call(s) came back anyway",
                          n_tool_calls=len(r.tool_calls)),
                        _evid(x, _calls_text(x)))
    if not (r.content or "").strip():
        return ctx.fail(T("tool_choice none: no text content either"), _evid(x, _calls_text(x)))
    return ctx.ok(T("tool_choice none: text answer, no call ({content})", content=repr((r.content or '').strip()[:60])),
                  _evid(x))


def _all_calls(facts, names):
    for n in names:
        x = facts.get(n)
        if x is None or x.reply is None or x.error or x.status != 200:
            continue
        for c in x.reply.tool_calls:
            yield n, x, c


@check("TOOL105", "tool-call-arguments", severity="error", needs=NEEDS, stage="smoke")
def tool_call_arguments(ctx):
    """Tool-call arguments are a clean JSON object valid against the tool's schema

    What it checks: every call's `function.arguments` (non-streamed, and assembled from stream deltas) is a string
    holding exactly one JSON object — no NUL or other control characters, no trailing bytes after the JSON — that
    validates against the tool's declared JSON Schema.
    Why it matters: clients run `json.loads(arguments)` and validate it; NUL padding, trailing garbage or a second
    object (two calls glued together) make the call fail on the client even though the server said HTTP 200.
    How to fix: Trailing bytes/NULs or glued objects are tool-parser bugs: upgrade vLLM/vllm-ascend (vllm-ascend
    ships parser patches, e.g. patch_deepseek_v4_tool_call_parser.py in v0.23.0) or switch to the parser matching
    the model. Schema violations under auto: use a named tool_choice or a stronger model. Schema violations of a
    forced (named/required) call: the server did not constrain the arguments — vLLM 0.31+ under its default
    `--tool-strict-level auto` pins argument schemas only for tools sent with `"strict": true`: start vllm serve with
    `--tool-strict-level parameter`, or mark the agent's tools strict.
    """
    facts = ctx.fact("smoke")
    checked = 0
    problems: list[tuple[str, Exchange, str]] = []
    for name, x, c in _all_calls(facts, NON_STREAM_TOOL + STREAM_TOOL):
        checked += 1
        for p in argument_problems(c.arguments, S.SCHEMAS.get(c.name or "")):
            problems.append((name, x, T("{name} call {call} (id {id}): {problem}", name=name, call=repr(c.name),
                                        id=repr(c.id), problem=p)))
    if not checked:
        if all(n in facts.not_run for n in NON_STREAM_TOOL):
            return ctx.skip(T("no tool-call scenario ran: {not_run}", not_run=facts.not_run.get(S.NAMED, 'not run')))
        return ctx.unknown(T("no tool call came back in any scenario, so there were no arguments to examine"))
    if problems:
        seen, evidence = set(), []
        for name, x, _ in problems:
            if name not in seen:
                seen.add(name)
                evidence.append(ev(x.describe(), _calls_text(x)))
        forced = sorted({name for name, _, p in problems if name in FORCED and _schema_problem(p)})
        fix = None
        if forced:
            # A forced call whose arguments are not what the schema says: the server did not constrain them.
            fix = (T("{forced}: the tool_choice forced the call, yet its arguments do not follow the tool's schema. "
                     "{strict_fix} Before vLLM 0.31 a forced call is decoded under the full schema: a violation "
                     "there points at the structured-output backend.", forced=', '.join(forced),
                     strict_fix=_strict_fix(ctx)))
        return ctx.fail(T("{n_problems} problem(s) in tool-call arguments: {problems}", n_problems=len(problems),
                          problems=join("; ", [p for _, _, p in problems[:4]])),
                        evidence, remediation=fix)
    return ctx.ok(T("all {checked} tool call(s) carry a clean, schema-valid JSON object", checked=checked))


@check("TOOL106", "tool-call-finish-reason", severity="error", needs=NEEDS, stage="smoke")
def tool_call_finish_reason(ctx):
    """finish_reason agrees with the tool calls

    What it checks: a response with tool calls ends with `finish_reason: "tool_calls"` (a forced named call may
    say "stop": OpenAI and vLLM answer named choices that way, so it passes, noted), and `finish_reason:
    "tool_calls"` never comes with an empty `tool_calls` list; "length" with calls means the arguments were cut.
    Why it matters: agent loops branch on finish_reason. "stop" with calls drops the calls; "tool_calls" with none
    is the signature of a parser that stripped the call markup (vllm#24140: content ' get_current_weather
    arguments_get_current_weather ', tool_calls []).
    How to fix: Empty calls with "tool_calls": the tool-call special tokens were removed before parsing
    (skip_special_tokens) or the parser does not match the model — use the model's parser (TOOL113 names it).
    "stop" under auto/required: upgrade vLLM (its serving layer sets "tool_calls" when the parser found calls).
    "length": raise max_tokens.
    """
    facts = ctx.fact("smoke")
    fails, seen, named_stop = [], 0, []
    evidence = []
    for name in NON_STREAM_TOOL + STREAM_TOOL:
        x = facts.get(name)
        if x is None or x.reply is None or x.error or x.status != 200:
            continue
        seen += 1
        r = x.reply
        fr = r.finish_reason
        problem = None
        if r.tool_calls and fr == "length":
            problem = (fails, T("{name}: finish_reason 'length' with {n} call(s): arguments cut off", name=name,
                                n=len(r.tool_calls)))
        elif r.tool_calls and fr != "tool_calls":
            if name in (S.NAMED, S.NAMED_STREAM) and fr == "stop":
                named_stop.append(name)  # the OpenAI contract for a named tool_choice (vLLM does the same)
            else:
                problem = (fails, T("{name}: {n} call(s) but finish_reason {finish_reason}", name=name,
                                    n=len(r.tool_calls), finish_reason=repr(fr)))
        elif not r.tool_calls and fr == "tool_calls":
            residue = [t for t in S.SCHEMAS if t in (r.content or "")]
            problem = (fails, T("{name}: finish_reason 'tool_calls' but tool_calls is {field}/empty", name=name,
                                field=r.tool_calls_field)
                       + (T("; content holds residue of the call ({residue})", residue=residue) if residue else ""))
        if problem:
            problem[0].append(problem[1])
            evidence.append(ev(x.describe(), _calls_text(x)))
    if not seen:
        return ctx.skip(T("no tool-call scenario returned a response to examine"))
    if fails:
        return ctx.fail(join("; ", fails), evidence)
    note = (T(" ({named_stop}: 'stop' for a named tool_choice, as OpenAI answers it — clients should read "
              "`message.tool_calls`, not branch on finish_reason)", named_stop=', '.join(named_stop)) if named_stop else "")
    return ctx.ok(T("finish_reason matched the tool calls in {seen} response(s){note}", seen=seen, note=note))


@check("TOOL107", "tool-call-ids", severity="error", needs=NEEDS, stage="smoke")
def tool_call_ids(ctx):
    """Every tool call has a unique id and type "function"

    What it checks: each call carries a non-empty `id`, ids are unique within a response (fail) and across the
    responses of this run (warning), `type` is "function" (warning when missing), and a deprecated
    `message.function_call`, when still sent, names the same function as `tool_calls[0]` (warning).
    Why it matters: the client answers each call with a role:tool message keyed by `tool_call_id`; a missing or
    repeated id sends a tool result to the wrong call, or the server rejects the history.
    How to fix: Upgrade vLLM/vllm-ascend (vLLM issues random `chatcmpl-tool-…` ids; DeepSeek/Kimi parsers derive
    ids from the model text and older releases repeated them); a gateway that rewrites responses must keep ids.
    """
    facts = ctx.fact("smoke")
    fails, warns, evidence = [], [], []
    all_ids: Counter = Counter()
    n = 0
    for name in NON_STREAM_TOOL + STREAM_TOOL:
        x = facts.get(name)
        if x is None or x.reply is None or x.error or x.status != 200 or not x.reply.tool_calls:
            continue
        ids = [c.id for c in x.reply.tool_calls]
        n += len(ids)
        bad = False
        if any(not i for i in ids):
            fails.append(T("{name}: {sum} call(s) without an id", name=name, sum=sum((1 for i in ids if not i))))
            bad = True
        dup = [i for i, k in Counter(i for i in ids if i).items() if k > 1]
        if dup:
            fails.append(T("{name}: id(s) {dup} repeated within one response", name=name, dup=dup))
            bad = True
        if any(c.type not in ("function",) for c in x.reply.tool_calls):
            warns.append(T("{name}: call type {value} (expected 'function')", name=name,
                           value=[c.type for c in x.reply.tool_calls]))
            bad = True
        legacy = x.reply.legacy_function_call
        if legacy is not None and legacy.get("name") != x.reply.tool_calls[0].name:
            warns.append(T("{name}: the deprecated message.function_call names {legacy} while tool_calls[0] names "
                           "{name2}", name=name, legacy=repr(legacy.get('name')),
                           name2=repr(x.reply.tool_calls[0].name)))
            bad = True
        all_ids.update(set(i for i in ids if i))
        if bad:
            evidence.append(ev(x.describe(), _calls_text(x)))
    if not n:
        return ctx.skip(T("no tool calls came back to examine"))
    across = [i for i, k in all_ids.items() if k > 1]
    if across:
        warns.append(T("id(s) {across} reused across different responses", across=across[:3]))
    if fails:
        return ctx.fail(join("; ", fails + warns), evidence)
    if warns:
        return ctx.warn(join("; ", warns), evidence)
    return ctx.ok(T("{n} tool call(s), each with its own id and type 'function'", n=n))


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
    fails, warns, evidence = [], [], []
    seen, usable, skip_reason = _answered(ctx, facts, STREAM_TOOL, fails, evidence)
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
            evidence.append(ev(x.describe(), _sse_excerpt(x)))
    if not seen:
        return ctx.skip(T("no streaming scenario ran: {skip_reason}", skip_reason=skip_reason))
    if fails:
        return ctx.fail(join("; ", fails), evidence)
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
    facts, x, early = _answered_scenario(ctx, S.NAMED_STREAM, T("named tool_choice stream"))
    if early:
        return early
    s, r = x.stream, x.reply
    if s is None:
        return ctx.fail(T("asked for a stream, got a non-SSE body"), _evid(x))
    evidence = [ev(x.describe(), _sse_excerpt(x))]
    if not r.tool_calls:
        return ctx.fail(T("the stream carried no tool-call deltas{leak_hint}", leak_hint=_leak_hint(x)), evidence)
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
            evidence.append(ev(ref.describe(), _calls_text(ref)))
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
    fails, warns, evidence, oks = [], [], [], []
    seen, usable, reason = _answered(ctx, facts, (S.PARALLEL, S.PARALLEL_STREAM), fails, evidence)
    for name, x in usable:
        r = x.reply
        mine = []
        if x.stream is not None and (x.stream.events == 0 or not x.stream.done):
            fails.append(T("{name}: the stream broke off ({events} event(s), {value} [DONE]; see TOOL108)", name=name,
                           events=x.stream.events, value=T("with") if x.stream.done else T("no")))
            evidence.append(_evid(x)[0])
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
            evidence.append(ev(x.describe(), _calls_text(x) if x.stream is None else _sse_excerpt(x)))
        elif len(r.tool_calls) < 2:
            warns.append(T("{name}: {n_tool_calls} call(s) for two independent lookups{leak_hint}", name=name,
                           n_tool_calls=len(r.tool_calls), leak_hint=_leak_hint(x)))
            evidence.append(ev(x.describe(), _calls_text(x)))
        else:
            oks.append(T("{name}: {n_tool_calls} calls", name=name, n_tool_calls=len(r.tool_calls)))
    if not seen:
        return ctx.skip(T("the parallel scenarios did not run: {reason}", reason=reason))
    if fails:
        return ctx.fail(join("; ", fails + warns), evidence)
    if warns:
        return ctx.warn(join("; ", warns + oks), evidence)
    return ctx.ok(T("{oks}, distinct ids and indices", oks=join("; ", oks)))


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
    facts, x, skip = _scenario(ctx, S.ROUNDTRIP)
    if skip:
        return skip
    if x.error:
        return _http_problem(ctx, x, T("round trip"))
    if x.status != 200:
        msg = error_message(x)
        evidence = _evid(x)
        compat = facts.get(S.ROUNDTRIP_COMPAT)
        hint = _id_note(x.request.get("answers_call_id"), msg)
        if compat is not None:
            evidence.append(ev(compat.describe(), _excerpt(compat, 600)))
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
                            remediation=_known_fix(msg))
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
    bad = _http_problem(ctx, x, T("round trip"))
    if bad:
        return bad
    r = x.reply
    text = (r.content or "").strip()
    if r.tool_calls:
        return ctx.warn(T("after the tool result the model called {value} again instead of answering",
                          value=[c.name for c in r.tool_calls]), _evid(x, _calls_text(x)))
    if not text:
        return ctx.fail(T("the answer after the tool result has no text content"), _evid(x, _calls_text(x)))
    sentinel = facts.sentinel or ""
    if sentinel and sentinel not in text:
        return ctx.warn(T("the answer does not mention the tool result's sentinel {sentinel}: the tool result may not "
                          "reach the model (answer: {text})", sentinel=sentinel,
                          text=repr(text[:120])), _evid(x),
                        remediation=T("Check that the chat template renders role:tool messages (look for the tool "
                                      "content in the rendered prompt, vllm serve logs it with "
                                      "`--enable-log-requests`); small models may also just ignore it."))
    return ctx.ok(T("tool result on call id {request} accepted and used (sentinel {sentinel} in the answer)",
                    request=repr(x.request.get('answers_call_id')), sentinel=sentinel), _evid(x))


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
    facts, x, early = _answered_scenario(ctx, S.IRRELEVANT, T("irrelevant question"))
    if early:
        return early
    r = x.reply
    if r.tool_calls:
        return ctx.warn(T("a question needing no tool got {n_tool_calls} call(s) ({value})",
                          n_tool_calls=len(r.tool_calls), value=[c.name for c in r.tool_calls]),
                        _evid(x, _calls_text(x)))
    if not (r.content or "").strip():
        return ctx.warn(T("a question needing no tool got neither text nor a call"), _evid(x, _calls_text(x)))
    return ctx.ok(T("answered in text without a call ({content})", content=repr(r.content.strip()[:60])), _evid(x))


@check("TOOL113", "tool-markup-leak", severity="error", needs=NEEDS, stage="smoke")
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
    answers = _answers(facts)
    if not answers:
        return _nothing_to_scan(ctx, facts, T("markup"))
    matrix = ctx.matrix  # the shipped matrix plus any --matrix layers: the markup families are rows there
    fams = L.families(matrix)
    leaks, evidence, scanned = [], [], len(answers)
    for name, x in answers:
        r = x.reply
        found = (L.detect_leaks(r.content, "content", matrix)
                 + L.detect_leaks(r.reasoning, r.reasoning_field or "reasoning", matrix))
        for lk in found:
            leaks.append((name, lk))
            evidence.append(ev(f"{x.describe()} {lk.field}", lk.excerpt))
    if not leaks:
        return ctx.ok(T("no tool-call or reasoning markup in the content of {scanned} answer(s)", scanned=scanned))
    families = list(dict.fromkeys(lk.family for _, lk in leaks))
    msg = join("; ", [T("{markup} in {where} ({marker})", markup=fams[lk.family].label,
                        where=f"{name}.{lk.field}", marker=repr(lk.marker)) for name, lk in leaks[:4]])
    remediation = join("\n", [L.remediation_for(f, matrix) for f in families])
    loose = [name for name, _ in leaks if _unconstrained(name, facts.exchanges[name])]
    if loose:
        # The parser is there (it emitted the envelope under a forced choice); the arguments ran away.
        remediation = (T("{fromkeys}: {strict_level_fix}\nIf the parser is missing too: {remediation}",
                         fromkeys=', '.join(dict.fromkeys(loose)), strict_level_fix=L.strict_level_fix(matrix),
                         remediation=remediation))
    details = {"families": families, "parsers": [fams[f].tool_parser for f in families]}
    if not any(fams[f].tool_parser for f in families):  # reasoning tags only: the answer is still usable
        return ctx.warn(T("raw markup leaked: {msg}", msg=msg), evidence[:4], remediation=remediation, **details)
    return ctx.fail(T("raw markup leaked: {msg}", msg=msg), evidence[:4], remediation=remediation, **details)
