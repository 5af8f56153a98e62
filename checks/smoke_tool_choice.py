"""TOOL101-107 (stage="smoke"): tool calls the way OpenAI clients (openai-python, LangChain, agents) expect them —
each tool_choice mode, the arguments against the tool's schema, finish_reason, call ids."""

from __future__ import annotations

from collections import Counter

from ascend_doctor.i18n import T, join
from ascend_doctor.plugin import check, ev
from ascend_doctor.smoke import scenarios as S
from ascend_doctor.smoke.arguments import argument_problems
from ascend_doctor.smoke.client import Exchange
from ascend_doctor.smoke.judge import (
    FORCED,
    NEEDS,
    NON_STREAM_TOOL,
    STREAM_TOOL,
    answered_or_outcome,
    calls_text,
    exchange_evidence,
    leak_hint,
    schema_problem,
    strict_fix,
    unconstrained,
)


def _tool_choice_check(ctx, name: str, what: str, allowed: set):
    facts, x, early = answered_or_outcome(ctx, name, what)
    if early:
        return early
    r = x.reply
    if not r.tool_calls:
        if unconstrained(name, x, ctx.knowledge.matrix):
            return ctx.fail(T("{what}: HTTP 200 without tool_calls — raw call markup in content and finish_reason "
                              "'length': the arguments were not constrained{leak_hint}",
                              what=what, leak_hint=leak_hint(x, ctx.knowledge.matrix)),
                            exchange_evidence(x, calls_text(x)), remediation=strict_fix(ctx))
        return ctx.fail(T("{what}: no tool call came back (finish_reason={finish_reason}){leak_hint}", what=what,
                          finish_reason=repr(r.finish_reason), leak_hint=leak_hint(x, ctx.knowledge.matrix)),
                        exchange_evidence(x, calls_text(x)),
                        remediation=T("Start vllm serve with `--enable-auto-tool-choice --tool-call-parser <parser>` "
                                      "matching the model; if raw markup shows in content, see TOOL113."))
    wrong = [c.name for c in r.tool_calls if c.name not in allowed]
    if wrong:
        return ctx.fail(T("{what}: called {wrong}, expected one of {allowed}", what=what, wrong=wrong,
                          allowed=sorted(allowed)), exchange_evidence(x, calls_text(x)))
    return ctx.ok(T("{what}: {n_tool_calls} call(s) to {tool_calls}", what=what, n_tool_calls=len(r.tool_calls),
                    tool_calls=', '.join((str(c.name) for c in r.tool_calls))),
                  exchange_evidence(x, calls_text(x)))


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
    facts, x, early = answered_or_outcome(ctx, S.AUTO, T("tool_choice auto"))
    if early:
        return early
    r = x.reply
    if not r.tool_calls:
        return ctx.warn(T("tool_choice auto: answered in text instead of calling get_weather{leak_hint}",
                          leak_hint=leak_hint(x, ctx.knowledge.matrix)),
                        exchange_evidence(x, calls_text(x)))
    wrong = [c.name for c in r.tool_calls if c.name not in S.SCHEMAS]
    if wrong:
        return ctx.fail(T("tool_choice auto: called unknown function(s) {wrong}", wrong=wrong),
                        exchange_evidence(x, calls_text(x)))
    if not any(c.name == "get_weather" for c in r.tool_calls):
        return ctx.warn(T("tool_choice auto: called {value}, not get_weather", value=[c.name for c in r.tool_calls]),
                        exchange_evidence(x, calls_text(x)))
    return ctx.ok(T("tool_choice auto: called get_weather ({n_tool_calls} call(s))", n_tool_calls=len(r.tool_calls)),
                  exchange_evidence(x, calls_text(x)))


@check("TOOL104", "tool-choice-none", severity="error", needs=NEEDS, stage="smoke")
def tool_choice_none(ctx):
    """tool_choice "none" answers in text without a call

    What it checks: with tools offered and `tool_choice: "none"`, the answer has text content and no tool_calls.
    Why it matters: clients use "none" to make the model summarise after tools ran; a call here loops the agent.
    How to fix: vLLM honours "none" by not parsing tool calls (0.8.x+ also drops tools from the prompt with
    `--exclude-tools-when-tool-choice-none`); upgrade if calls still come back.
    """
    facts, x, early = answered_or_outcome(ctx, S.NONE, T("tool_choice none"))
    if early:
        return early
    r = x.reply
    if r.tool_calls:
        return ctx.fail(T("tool_choice none: {n_tool_calls} tool call(s) came back anyway",
                          n_tool_calls=len(r.tool_calls)),
                        exchange_evidence(x, calls_text(x)))
    if not (r.content or "").strip():
        return ctx.fail(T("tool_choice none: no text content either"), exchange_evidence(x, calls_text(x)))
    return ctx.ok(T("tool_choice none: text answer, no call ({content})", content=repr((r.content or '').strip()[:60])),
                  exchange_evidence(x))


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
                evidence.append(ev(x.describe(), calls_text(x)))
        forced = sorted({name for name, _, p in problems if name in FORCED and schema_problem(p)})
        fix = None
        if forced:
            # A forced call whose arguments are not what the schema says: the server did not constrain them.
            fix = (T("{forced}: the tool_choice forced the call, yet its arguments do not follow the tool's schema. "
                     "{strict_fix} Before vLLM 0.31 a forced call is decoded under the full schema: a violation "
                     "there points at the structured-output backend.", forced=', '.join(forced),
                     strict_fix=strict_fix(ctx)))
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
            evidence.append(ev(x.describe(), calls_text(x)))
    if not seen:
        return ctx.skip(T("no tool-call scenario returned a response to examine"))
    if fails:
        return ctx.fail(join("; ", fails), evidence)
    note = (T(" ({named_stop}: 'stop' for a named tool_choice, as OpenAI answers it — clients should read "
              "`message.tool_calls`, not branch on finish_reason)", named_stop=', '.join(named_stop))
            if named_stop else "")
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
            evidence.append(ev(x.describe(), calls_text(x)))
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
