"""The markup-leak detector on the corpus transcripts and on hand-written samples of every family."""

from __future__ import annotations

import json
import re

import pytest

from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.smoke import leaks
from ascend_doctor.smoke.client import parse_sse, reply_from_stream
from ascend_doctor.smoke.leaks import families as _families
from ascend_doctor.smoke.leaks import remediation_for as _remediation_for
from tests.helpers import corpus_params, read_corpus

SHIPPED = Knowledge().matrix  # the tests below judge with the shipped tables unless they layer their own


def detect_leaks(text, field="content", matrix=None):
    return leaks.detect_leaks(text, matrix or SHIPPED, field)


def families():
    return _families(SHIPPED)


def remediation_for(family, matrix=None):
    return _remediation_for(family, matrix or SHIPPED)


BAR = "｜"  # U+FF5C
SP = "▁"  # U+2581

# Hand-written samples (shapes from vLLM's parsers, ../shared/facts/matrix-facts.md §4.3).
SAMPLES = [
    ("deepseek_v3", f"<{BAR}tool{SP}calls{SP}begin{BAR}><{BAR}tool{SP}call{SP}begin{BAR}>function<{BAR}tool{SP}sep"
                    f"{BAR}>get_weather\n```json\n{{\"city\": \"Paris\"}}\n```<{BAR}tool{SP}call{SP}end{BAR}>"),
    ("deepseek_v31", f"<{BAR}tool{SP}calls{SP}begin{BAR}><{BAR}tool{SP}call{SP}begin{BAR}>get_weather<{BAR}tool"
                     f"{SP}sep{BAR}>{{\"city\": \"Paris\"}}<{BAR}tool{SP}call{SP}end{BAR}><{BAR}tool{SP}calls{SP}end"
                     f"{BAR}>"),
    ("deepseek_v32", f"<{BAR}DSML{BAR}function_calls>\n<{BAR}DSML{BAR}invoke name=\"get_weather\">\n<{BAR}DSML{BAR}"
                     f"parameter name=\"city\" string=\"true\">Paris</{BAR}DSML{BAR}parameter>\n</{BAR}DSML{BAR}"
                     f"invoke>\n</{BAR}DSML{BAR}function_calls>"),
    ("deepseek_v4", f"Let me check.\n\n<{BAR}DSML{BAR}tool_calls>\n<{BAR}DSML{BAR}invoke name=\"get_weather\">"),
    ("deepseek_v4", f"<{BAR}{BAR}DSML{BAR}{BAR}tool_calls> <{BAR}{BAR}DSML{BAR}{BAR}invoke name=\"x\">..."),
    ("deepseek_v4", "< | DSML | tool_use> get_weather"),  # mangled ASCII form (flocks PR #687)
    ("deepseek_v41", f"<{BAR}DSML{BAR} calls>\n<{BAR}DSML{BAR} invoke name=\"get_weather\">"),
    ("qwen3_coder", "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n"
                    "</tool_call>"),
    ("hermes", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"),
    ("mistral", "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]"),
    ("llama3_json", "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}"),
    ("think", "<think>The user wants the weather.</think>Paris is sunny."),
]

CLEAN = [
    "It is sunny in Paris, 21 °C.",
    '{"city": "Paris"}',
    "I think the function call would be get_weather(city='Paris').",
    "Use the <b>tool</b> carefully; the pipe | character and full-width ｜ are fine on their own.",
    "",
    None,
]


@pytest.mark.parametrize("family,text", SAMPLES, ids=[f"{f}-{i}" for i, (f, _) in enumerate(SAMPLES)])
def test_each_family_is_named(family, text):
    found = detect_leaks(text)
    assert found, text
    assert found[0].family == family
    assert found[0].marker in text


@pytest.mark.parametrize("text", CLEAN)
def test_clean_text_has_no_leak(text):
    assert detect_leaks(text) == []


def test_think_in_a_reasoning_field_is_not_a_leak():
    assert detect_leaks("<think>plan</think>", field="reasoning_content") == []
    assert [lk.family for lk in detect_leaks("<think>plan</think>", field="content")] == ["think"]


def test_qwen3_xml_inside_tool_call_is_not_reported_as_hermes_too():
    fams = [lk.family for lk in detect_leaks("<tool_call>\n<function=get_weather>")]
    assert fams == ["qwen3_coder"]


def _corpus_text(path):
    fields, body = read_corpus(path)
    name = path.name
    if name.endswith(".jsonl.txt"):
        # One chat.completion.chunk JSON per line (no `data:` prefix): assemble as SSE events.
        sse = "".join(f"data: {line}\n\n" for line in body.splitlines() if line.strip().startswith("{"))
        payloads, info = parse_sse(sse)
        return reply_from_stream(payloads, info)
    if "hermes-toolcall-stream-capture" in name:
        # A client log: the SSE lines are prefixed by the client's trace; take the `data: ` payloads only.
        events = re.findall(r"data: data: (\{.*\})", body)
        payloads, info = parse_sse("".join(f"data: {e}\n\n" for e in events))
        return reply_from_stream(payloads, info)
    return body


@pytest.mark.parametrize("path", corpus_params("tool_call_leak"))
def test_corpus_transcripts(path):
    fields, body = read_corpus(path)
    assert fields.get("KIND") == "tool_call_leak"
    sample = _corpus_text(path)
    name = path.name
    if "dsml-doubled-bars" in name:
        # freelens-ai-extension#127: DeepSeek V4 DSML with doubled full-width bars, verbatim in the UI.
        found = detect_leaks(sample)
        assert [lk.family for lk in found] == ["deepseek_v4"]
        assert "deepseek_v4" in remediation_for(found[0].family)
    elif "qwen3coder-function-tag-leak" in name:
        # llama-server b6522: `<tool_call>\n<function=get_current_weather` leaked into delta.content, then the
        # same call arrived structured — the detector must flag the content even though tool_calls is fine.
        assert sample.tool_calls and sample.tool_calls[0].name == "get_current_weather"
        assert [lk.family for lk in detect_leaks(sample.content)] == ["qwen3_coder"]
    elif "required-stripped-markup" in name:
        # vllm#24140: special tokens were stripped, only residue is left — no markup family to name; the
        # finish_reason/empty-tool_calls check (TOOL106) is what catches it (see test_checks).
        content = re.search(r"content='([^']*)'", sample).group(1)
        assert detect_leaks(content) == []
        assert "get_current_weather" in content
    elif "hermes-toolcall-stream-capture" in name:
        # A correct vLLM hermes stream: structured tool_calls, nothing in content.
        assert sample.tool_calls and sample.tool_calls[0].name == "run_command"
        assert json.loads(sample.tool_calls[0].arguments) == {"command": "ls"}
        assert detect_leaks(sample.content) == []
        # ...while the server's own prompt log line does contain hermes markup, as a sanity check of the pattern.
        assert "hermes" in [lk.family for lk in detect_leaks(body)]
    else:
        pytest.fail(f"new corpus file {name}: add its expectation here")


def test_remediation_names_flags_and_first_release_from_the_matrix():
    m = SHIPPED
    text = remediation_for("deepseek_v4")
    assert "--tool-call-parser deepseek_v4" in text
    assert "--reasoning-parser deepseek_v4" in text
    assert "--tokenizer-mode deepseek_v4" in text
    release = m.first_vllm_release_with("tool_parser", "deepseek_v4")
    assert release == "0.20.0" and f"vLLM {release}" in text
    assert "first vllm-ascend release with it: v0.20.2rc1" in text  # no vllm-ascend pairs with vLLM 0.20.0/0.20.1
    v41 = remediation_for("deepseek_v41")
    assert "vLLM 0.30.0 (first vllm-ascend release with it: v0.30.0rc1)" in v41 and "0.33.0" not in v41
    hermes = remediation_for("hermes")
    assert "--tool-call-parser hermes" in hermes and "--reasoning-parser" not in hermes
    assert f"vLLM {m.first_vllm_release_with('tool_parser', 'hermes')}" in hermes


def test_remediation_with_a_matrix_that_lacks_the_name():
    class Empty:
        markup_families = families()

        def first_vllm_release_with(self, kind, name):
            return None

    text = remediation_for("mistral", Empty())
    assert "--tokenizer-mode mistral" in text and "could not say" in text


def test_every_family_has_a_remediation():
    for key in families():
        assert remediation_for(key)


def test_the_family_table_is_consistent_with_the_recorded_vllm_releases():
    """Every parser a family row names is one that some recorded vLLM release accepts (a typo in the table would
    send users to a name `vllm serve` rejects), and every markup a model family names is a markup row."""
    m = SHIPPED
    accepted = {kind: {n for row in m.parsers for n in (getattr(row, kind) or [])}
                for kind in ("tool_parser", "reasoning_parser", "tokenizer_mode")}
    for fam in m.markup_families.values():
        for kind in ("tool_parser", "reasoning_parser", "tokenizer_mode"):
            name = getattr(fam, kind)
            assert name is None or name in accepted[kind], f"{fam.id}: {kind} {name} is in no recorded vLLM"
    for fam in m.model_families:
        assert set(fam.tool_parsers) <= accepted["tool_parser"], fam.id
        assert set(fam.markup) <= set(m.markup_families), fam.id


def test_glm_calls_name_the_glm_parser_not_hermes():
    """GLM-4.5/4.7 write `<tool_call>name<arg_key>…` (vLLM glm4_moe_tool_parser.py): the hermes `<tool_call>` wrapper
    is shadowed by the inner grammar, as for Qwen3-Coder — the fix must name glm45, not hermes."""
    text = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>"
    assert [lk.family for lk in detect_leaks(text)] == ["glm45"]
    assert "--tool-call-parser glm45" in remediation_for("glm45")


def test_a_layered_matrix_adds_a_markup_family(tmp_path):
    """A site adds a family with one row in a --matrix file; the detector and the fix read it."""
    extra = tmp_path / "site.toml"
    extra.write_text("""schema_version = 1

[[markup_family]]
id = "acme"
label = "ACME <<call>>"
patterns = ['<<call>>']
tool_parser = "hermes"
source = ["site test"]
""", encoding="utf-8")
    m = Knowledge([str(extra)]).matrix
    assert [lk.family for lk in detect_leaks("x <<call>> y", matrix=m)] == ["acme"]
    assert detect_leaks("x <<call>> y") == []


# Chat-template control tokens (SRV103/SRV105) ----------------------------------------------------------------------
CONTROL = ["<|im_end|>", "<|im_start|>", "<end_of_turn>", "</s>", "<｜end▁of▁sentence｜>", "<|eot_id|>"]


@pytest.mark.parametrize("token", CONTROL)
def test_each_control_token_of_the_issue_is_found(token):
    found = leaks.detect_control_tokens(f"ready{token}\nuser: and then")
    assert found is not None and found.tokens == (token,) and token in found.excerpt


def test_control_tokens_in_order_of_appearance_with_families():
    found = leaks.detect_control_tokens("ready<|im_end|>\n<|im_start|>user\n<|eot_id|>")
    assert found.tokens == ("<|im_end|>", "<|im_start|>", "<|eot_id|>")
    assert found.families == ("ChatML (Qwen, SmolLM, Hermes)", "Llama 3")


@pytest.mark.parametrize("text", ["ready", "Paris is sunny, 18 °C.", "a <b>bold</b> word", "<think>x</think>", "",
                                  None])
def test_clean_text_has_no_control_tokens(text):
    assert leaks.detect_control_tokens(text) is None
