"""SRV101-106 (stage="smoke"): the server answers at all — reachable, the model served, a plain chat completion,
under load, no chat-template control tokens, and a gateway that passes everything through. Pure judgements of the
`smoke` fact gathered by ascend_doctor.smoke.scenarios; each names the exchange(s) it judges in its evidence."""

from __future__ import annotations

from ascend_doctor.i18n import T, join
from ascend_doctor.plugin import check, ev
from ascend_doctor.smoke import scenarios as S
from ascend_doctor.smoke.client import error_message
from ascend_doctor.smoke.judge import (
    NEEDS,
    answered_or_outcome,
    answers_of,
    exchange_evidence,
    nothing_to_scan,
    pace_evidence,
)


@check("SRV101", "server-reachable", severity="critical", needs=NEEDS, stage="smoke")
def server_reachable(ctx):
    """The OpenAI-compatible server answers at the base URL

    What it checks: `GET <base-url>/models` gets any HTTP answer (connection refused or reset fail; a timeout is
    unknown: the smoke's limit, not a verdict on the server).
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
    if not facts.reachable and x.error_kind == "timeout":
        # Connected (or still connecting) but no answer in time: a loaded or still-loading server, not a down one.
        return ctx.unknown(T("no answer from {base_url} within the timeout ({unreachable_reason}): still loading, or "
                             "too slow to judge — not a verdict on the server; rerun with a longer smoke timeout",
                             base_url=facts.base_url, unreachable_reason=facts.unreachable_reason),
                           exchange_evidence(x), cause=T("the smoke's requests timed out"))
    if not facts.reachable:
        return ctx.fail(T("no answer from {base_url}: {unreachable_reason}", base_url=facts.base_url,
                          unreachable_reason=facts.unreachable_reason), exchange_evidence(x))
    return ctx.ok(T("{base_url} answered GET /models with HTTP {status} in {latency_ms} ms", base_url=facts.base_url,
                    status=x.status, latency_ms=format(x.latency_ms, ".0f")), exchange_evidence(x))


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
                        exchange_evidence(x))
    if x.status != 200:
        fix = (T("The server wants an API key: export it and pass `--api-key-env VAR`.") if x.status in (401, 403)
               else None)
        return ctx.fail(T("GET /models answered HTTP {status}: {error_message}", status=x.status,
                          error_message=error_message(x)[:200]), exchange_evidence(x), remediation=fix)
    if facts.models_served is None:
        return ctx.fail(T("GET /models did not return the OpenAI list shape ({{\"data\": [{{\"id\": ...}}]}})"),
                        exchange_evidence(x))
    served = ", ".join(facts.models_served) or T("none")
    if facts.model_source == "option" and facts.model not in facts.models_served:
        return ctx.fail(T("model {model} is not served; the server serves: {served}", model=repr(facts.model),
                          served=served), exchange_evidence(x),
                        remediation=T("Pass one of these with --model: {served}.", served=served))
    if not facts.model:
        return ctx.fail(T("cannot choose a model: {n_models_served} served ({served}); pass --model",
                          n_models_served=len(facts.models_served), served=served),
                        exchange_evidence(x), remediation=T("Pass one of these with --model: {served}.", served=served))
    how = T("the only model served") if facts.model_source == "only-served" else T("listed")
    return ctx.ok(T("model {model} is {how}", model=repr(facts.model), how=how), exchange_evidence(x))


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

    facts, x, early = answered_or_outcome(ctx, S.CHAT, T("plain chat"))
    if early:
        return early
    evidence = exchange_evidence(x) + pace_evidence(facts)
    r = x.reply
    leak = detect_control_tokens(r.content)
    if leak is not None:
        return ctx.fail(T("plain chat answered with chat-template control tokens in content ({tokens}; "
                          "finish_reason={finish_reason}): {content}",
                          tokens=', '.join(leak.tokens), finish_reason=repr(r.finish_reason),
                          content=repr(r.content[:80])),
                        evidence, remediation=CONTROL_TOKEN_FIX)
    if not (r.content or "").strip():
        if r.reasoning and r.finish_reason == "length":
            # A reasoning model spent the whole (small) budget thinking: generation works, the answer was cut.
            return ctx.ok(T("plain chat generated only `{reasoning_field}` before max_tokens (finish_reason length) — "
                            "a reasoning model thinking first",
                            reasoning_field=r.reasoning_field), evidence)
        where = f" (text went to `{r.reasoning_field}`)" if r.reasoning else ""
        return ctx.fail(T("plain chat returned no content{where}", where=where), evidence)
    if not r.finish_reason:
        return ctx.warn(T("plain chat answered but without a finish_reason"), evidence)
    if r.finish_reason == "length":
        return ctx.warn(T("plain chat asked for one word ran to max_tokens ({chat_tokens}, finish_reason length): "
                          "{content}", chat_tokens=S.CHAT_TOKENS,
                          content=repr(r.content.strip()[:80])), evidence,
                        remediation=T("A model that does not stop after one word usually does not see its end-of-turn "
                                      "token: {control_token_fix}",
                                      control_token_fix=CONTROL_TOKEN_FIX))
    return ctx.ok(T("plain chat answered {content} (finish_reason={finish_reason}, {latency_ms} ms)",
                    content=repr(r.content.strip()[:60]), finish_reason=r.finish_reason,
                    latency_ms=format(x.latency_ms, ".0f")), evidence)


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
    answers = answers_of(facts)
    if not answers:
        return nothing_to_scan(ctx, facts, T("control tokens"))
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
    # One pair of quotes per scenario: three aspects of one answer quoted the same full response three times (#22).
    quoted = list({d.scenario: d for d in reversed(serious)}.values())[::-1][:3]
    evidence = [ev(f"{d.scenario}.{d.aspect}: via {facts.base_url}", d.gateway_bytes or d.gateway)
                for d in quoted] + [ev(f"{d.scenario}.{d.aspect}: direct {direct.base_url}",
                                       d.direct_bytes or d.direct) for d in quoted]
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
