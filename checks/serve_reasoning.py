"""SERVE324: a model whose chat template thinks by default, served without a reasoning parser.

vLLM's reasoning outputs (docs/features/reasoning_outputs.md of vLLM 0.30.0, read in its sdist): "To use reasoning
models, you need to specify the --reasoning-parser flags"; "The reasoning feature for the Qwen3 series is enabled by
default. To disable it, you must pass enable_thinking=False in your chat_template_kwargs". Without the parser the
`<think>…</think>` block stays in `content`, ahead of the answer — what users report as thinking "jumbled with the
answer" (vllm-ascend#8350: Qwen3.5 on v0.18.0rc1; maintainer: `--reasoning-parser qwen3` to separate it,
`--default-chat-template-kwargs '{"enable_thinking": false}'` to turn it off).
"""

from __future__ import annotations

import re

from ascend_doctor.i18n import T
from ascend_doctor.plugin import check, ev

from ._serve import chat_templates, json_option, model_or_outcome

# The switch of the Qwen3 chat template, which the Qwen3.5 templates carry too (as copies of both in public
# repositories quote it; the Qwen3.5 form adds `{%- else %}{{- '<think>\n' }}`): `{%- if enable_thinking is
# defined and enable_thinking is false %}` writes an empty think block, so the model thinks unless a request says
# otherwise. Only this switch is recognised: a template that thinks
# only when asked (DeepSeek-V3.1's `thinking`, Gemma 4's `enable_thinking` default off) is not held to a parser.
_THINKS_UNLESS_OFF = re.compile(r"enable_thinking\s+is\s+defined\s+and\s+enable_thinking\s+is\s+false")
# vLLM's name for the Qwen3 series' reasoning parser (the reasoning_outputs.md table above)
QWEN3_PARSER = "qwen3"


@check("SERVE324", "serve-reasoning-parser", severity="warning", stage="serve", needs=["serve_cmd", "serve_model"])
def reasoning_parser(ctx):
    """A model whose chat template thinks by default is served with a reasoning parser

    What it checks: when no `--reasoning-parser` is given, the chat template vLLM will use (`--chat-template`, the
    model's chat_template.jinja/.json, tokenizer_config.json) for the Qwen3 switch that makes the model think unless
    `enable_thinking` is false — Qwen3, Qwen3.5, Qwen3.6 — and `--default-chat-template-kwargs` for that switch
    turned off. A template without that switch is not judged (other models think only when asked, or use markup
    this check does not read).

    Why it matters: vLLM separates the reasoning into the `reasoning` field only with a reasoning parser; without
    one the `<think>…</think>` text comes back in `content`, ahead of the answer, and clients that parse the
    answer (JSON, tool arguments, graders) read the thinking instead (vllm-ascend#8350: Qwen3.5 on v0.18.0rc1,
    thinking "jumbled" with the answer).

    How to fix: add `--reasoning-parser qwen3` (vLLM's parser for the Qwen3 series; SERVE102 checks the installed
    vLLM has it), or serve without thinking: `--default-chat-template-kwargs '{"enable_thinking": false}'` (vLLM
    0.14.1 on), or `chat_template_kwargs: {"enable_thinking": false}` in each request.
    """
    cmd, m, out = model_or_outcome(ctx)
    if out:
        return out
    given = cmd.get("reasoning_parser")
    if given:
        return ctx.skip(T("--reasoning-parser {parser} is given (SERVE102 and SERVE203 judge the name)",
                          parser=given))
    templates = chat_templates(cmd, m)
    if not templates:
        return ctx.skip(T("no chat template to read (see SERVE205)"))
    where, text = templates[0]
    switch = _THINKS_UNLESS_OFF.search(text)
    if switch is None:
        return ctx.skip(T("the chat template ({where}) has no switch that makes the model think by default (the "
                          "Qwen3 `enable_thinking` switch is the one this check reads)", where=where))
    evidence = [ev(where, text[max(0, switch.start() - 120):switch.end() + 120])]
    if cmd.has("default_chat_template_kwargs"):
        kwargs, kw_evidence, bad = json_option(ctx, cmd, "default_chat_template_kwargs")
        if bad:
            return bad
        evidence += kw_evidence
        if kwargs.get("enable_thinking") is False:
            return ctx.ok(T("thinking is off by default (--default-chat-template-kwargs enable_thinking false): no "
                            "reasoning to separate"), evidence)
    return ctx.warn(T("the chat template ({where}) makes the model think unless `enable_thinking` is false, and no "
                      "--reasoning-parser is given: the reasoning (<think>…</think>) comes back in `content`, ahead "
                      "of the answer", where=where), evidence,
                    remediation=T("Add `--reasoning-parser {parser}`, or serve without thinking: "
                                  "`--default-chat-template-kwargs '{{\"enable_thinking\": false}}'` (vLLM 0.14.1 on) "
                                  "or `chat_template_kwargs: {{\"enable_thinking\": false}}` in each request.",
                                  parser=QWEN3_PARSER))
