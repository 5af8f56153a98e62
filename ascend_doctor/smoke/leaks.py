"""Raw tool-call / reasoning markup leaked into `content` or reasoning fields: detection and the parser it needs.

Pure functions of text and the model-family table (the matrix's `markup_family` rows, handed in as `matrix`: the
run's, with the user's layers): which markup each family writes, and which `vllm serve` flags read it. The serve lint
(SERVE203) reads the same table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from ascend_doctor.i18n import T, join


def families(matrix: Any) -> dict[str, Any]:
    """The markup families (the matrix's `markup_family` rows, layered files included), by id."""
    return matrix.markup_families


_compiled: dict[tuple, list[tuple[str, re.Pattern]]] = {}


def _patterns(fams: dict[str, Any]) -> list[tuple[str, re.Pattern]]:
    """(family id, compiled pattern) in table order, compiled once per table."""
    key = tuple((f.id, tuple(f.patterns)) for f in fams.values())
    hit = _compiled.get(key)
    if hit is None:
        hit = _compiled[key] = [(f.id, re.compile(p)) for f in fams.values() for p in f.patterns]
    return hit


@dataclass(frozen=True)
class Leak:
    """One family of markup found in one field."""

    family: str
    field: str
    marker: str
    excerpt: str


def detect_leaks(text: Optional[str], matrix: Any, field: str = "content") -> list[Leak]:
    """Every markup family present in `text` (at most one Leak per family), most specific first."""
    if not text:
        return []
    fams = families(matrix)
    found: dict[str, Leak] = {}
    for family, pat in _patterns(fams):
        if family in found:
            continue
        m = pat.search(text)
        if m is None:
            continue
        start = max(0, m.start() - 40)
        found[family] = Leak(family, field, m.group(0), text[start:m.end() + 80])
    for family in list(found):
        if any(other in found for other in fams[family].shadowed_by):
            del found[family]
        elif fams[family].content_only and field != "content":
            del found[family]  # <think> inside a reasoning field is where it belongs
    return list(found.values())


def closed_without_opening(leak: Leak, content: Optional[str]) -> bool:
    """A `</think>` in content with no `<think>` before it: the chat template opened the block in the prompt (the
    DeepSeek-R1 template change, vllm#12999), so the model writes only the closing tag."""
    return leak.family == "think" and leak.marker == "</think>" and "<think>" not in (content or "")


TEMPLATE_OPENS_THINK_FIX = T(
    "Only the closing `</think>` came back: the model's chat template opens `<think>` in the prompt. With the "
    "reasoning parser already given, the parser needs the opening tag: vLLM before 0.7.3 did (vllm#12999, fixed by "
    "PR #13025), so upgrade vLLM; a template of your own that adds `<think>` needs the parser of its family.")


def _first_release(kind: str, name: str, matrix: Any) -> tuple[Optional[str], Optional[str]]:
    """(first vLLM release with `name` of `kind`, first vllm-ascend release whose vLLM has it), from the compatibility
    matrix; (None, None) when the matrix does not know the name."""
    try:
        release = matrix.first_vllm_release_with(kind, name)
        ascend = getattr(matrix, "first_ascend_release_with", lambda *a: None)(kind, name) if release else None
    except Exception:  # the matrix module may be absent or broken: degrade the text, never crash a check
        return None, None
    return (str(release) if release else None), (str(ascend.version) if ascend is not None else None)


def remediation_for(family: str, matrix: Any) -> str:
    """The serve flags the family needs and the first vLLM release that has them (from `matrix`)."""
    fam = families(matrix)[family]
    if not fam.tool_parser:
        return (T("Reasoning tags are reaching `content`: start vllm serve with `--reasoning-parser <name>` for this "
                  "model family ({note}); the reasoning then moves to `reasoning_content`.",
                  note=fam.note))
    flags = ["--enable-auto-tool-choice", f"--tool-call-parser {fam.tool_parser}"]
    if fam.reasoning_parser:
        flags.append(f"--reasoning-parser {fam.reasoning_parser}")
    if fam.tokenizer_mode:
        flags.append(f"--tokenizer-mode {fam.tokenizer_mode}")
    text = T("{label} reached the client as text: start vllm serve with `{flags}`.", label=fam.label,
             flags=' '.join(flags))
    if fam.note:
        text += f" ({fam.note}.)"
    parts = []
    unknown = False
    for kind, name in (("tool_parser", fam.tool_parser), ("reasoning_parser", fam.reasoning_parser),
                       ("tokenizer_mode", fam.tokenizer_mode)):
        if not name:
            continue
        release, ascend = _first_release(kind, name, matrix)
        if release:
            label = {"tool_parser": T("tool parser"), "reasoning_parser": T("reasoning parser"),
                     "tokenizer_mode": T("tokenizer mode")}[kind]
            parts.append(T("{kind} `{name}` first appears in vLLM {release}", kind=label, name=name, release=release)
                         + (T(" (first vllm-ascend release with it: v{ascend})", ascend=ascend) if ascend else ""))
        else:
            unknown = True
    if parts:
        text += T(" Among the vLLM releases in the compatibility matrix, {parts} — if `vllm serve` rejects the name "
                  "(`invalid tool call parser`), upgrade vLLM and vllm-ascend together to at least that vllm-ascend "
                  "release.", parts=join("; ", parts))
    if unknown:
        text += (T(" The compatibility matrix could not say which vLLM release first ships the other names; check "
                   "`vllm serve --help` of the installed vLLM for the accepted values.") if parts else
                 T(" The compatibility matrix could not say which vLLM release first ships these names; check "
                   "`vllm serve --help` of the installed vLLM for the accepted values."))
    return text


# Chat-template control tokens ---------------------------------------------------------------------------------------
# A served text should never contain the tokens that delimit turns: when it does, the chat template does not fit the
# model (or the tokenizer does not mark them special), so generation does not stop at the end of the turn and
# the model writes the next turns itself until max_tokens. Spellings from the models' own tokenizer configs.
@dataclass(frozen=True)
class ControlToken:
    """One turn-delimiting token and the template family it belongs to."""

    token: str
    family: str


CONTROL_TOKENS: tuple[ControlToken, ...] = (
    ControlToken("<|im_end|>", "ChatML (Qwen, SmolLM, Hermes)"),
    ControlToken("<|im_start|>", "ChatML (Qwen, SmolLM, Hermes)"),
    ControlToken("<|endoftext|>", "GPT-2/Qwen end of text"),
    ControlToken("<|eot_id|>", "Llama 3"),
    ControlToken("<|start_header_id|>", "Llama 3"),
    ControlToken("<|end_header_id|>", "Llama 3"),
    ControlToken("<|begin_of_text|>", "Llama 3"),
    ControlToken("<end_of_turn>", "Gemma"),
    ControlToken("<start_of_turn>", "Gemma"),
    ControlToken("<｜end▁of▁sentence｜>", "DeepSeek"),
    ControlToken("<｜begin▁of▁sentence｜>", "DeepSeek"),
    ControlToken("<｜User｜>", "DeepSeek"),
    ControlToken("<｜Assistant｜>", "DeepSeek"),
    ControlToken("<|end|>", "Phi-3"),
    ControlToken("<|user|>", "Phi-3 / GLM"),
    ControlToken("<|assistant|>", "Phi-3 / GLM"),
    ControlToken("[/INST]", "Llama 2 / Mistral"),
    ControlToken("</s>", "Llama 2 / Mistral end of sequence"),
)


@dataclass(frozen=True)
class TokenLeak:
    """Control tokens found in one field: which, the first one's place, and an excerpt around it."""

    field: str
    tokens: tuple[str, ...]
    families: tuple[str, ...]
    excerpt: str


def detect_control_tokens(text: Optional[str], field: str = "content") -> Optional[TokenLeak]:
    """The turn-delimiting tokens in `text` (None when there are none), in order of first appearance."""
    if not text:
        return None
    hits = sorted(((pos, ct) for ct in CONTROL_TOKENS if (pos := text.find(ct.token)) >= 0), key=lambda h: h[0])
    if not hits:
        return None
    first = hits[0][0]
    tokens = tuple(ct.token for _, ct in hits)
    families = tuple(dict.fromkeys(ct.family for _, ct in hits))
    return TokenLeak(field, tokens, families, text[max(0, first - 40):first + 120])


CONTROL_TOKEN_FIX = (
    "The chat template does not fit the model: serve the model's own template (its tokenizer_config.json "
    "`chat_template` or chat_template.jinja; drop a `--chat-template` written for another family, or pass "
    "`--chat-template` with the model's official one), and check that the model directory's tokenizer marks these "
    "tokens special and that generation_config.json's `eos_token_id` includes the end-of-turn token.")


# Unconstrained arguments --------------------------------------------------------------------------------------------
def unconstrained_arguments(scenario_forced: bool, content: Optional[str], finish_reason: Optional[str],
                            has_calls: bool, matrix: Any) -> bool:
    """The shape of a forced tool call whose arguments the server did not constrain: no `tool_calls`, raw call markup
    in `content`, and `finish_reason: "length"`. vLLM 0.31+ under its default `--tool-strict-level auto` constrains
    only the call envelope for tools without `"strict": true`; the model then writes arguments until max_tokens and
    the tool parser gives up (measured against vLLM 0.32.0, hermes: ../shared/facts/vllm-cpu-notes.md)."""
    return scenario_forced and not has_calls and finish_reason == "length" and bool(detect_leaks(content, matrix))


def strict_level_fix(matrix: Any) -> str:
    """The fix for `unconstrained_arguments`, with the first vLLM release that has `--tool-strict-level` (matrix)."""
    first = None
    try:
        first = matrix.first_vllm_with_option("tool-strict-level")
    except Exception:  # an unavailable matrix degrades the text, never the verdict
        first = None
    since = (T(" (the option exists from vLLM {first} on, the matrix's vllm-options.toml, read from that release's "
               "sdist: "
               "vllm/tool_parsers/tool_strict_level.py)", first=first) if first else "")
    return (T("The server constrained only the tool-call envelope, not the arguments: the model wrote them until "
              "max_tokens and the tool parser could not read the call. Start vllm serve with `--tool-strict-level "
              "parameter`{since}, or send `\"strict\": true` (with `\"additionalProperties\": false`) on every tool "
              "the agent offers — vLLM's default `--tool-strict-level auto` pins argument schemas only for tools "
              "marked strict.", since=since))
