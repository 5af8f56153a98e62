"""A real `vllm serve` whose tokenizer and template do not fit the model: SmolLM2 with ChatML's `<|im_end|>` and
`<|im_start|>` no longer special and `<|endoftext|>` as end of sequence (tests/smoke/vllm_server.leaky_model). The
model still ends its turn with `<|im_end|>`, vLLM no longer stops there nor strips it, and the reply runs on into the
next turn until max_tokens — the `ready<|im_end|>\\n<|im_start|>user…` users paste. Plain chat (SRV103) and the
control-token detector (SRV105) must fail it with the chat-template fix. Only the two plain-text scenarios run: the
tool scenarios would each run to max_tokens too and add minutes without adding a fact.
"""

from __future__ import annotations

import pytest

from ascend_doctor.core.options import RunOptions
from ascend_doctor.core.registry import load_registry
from ascend_doctor.report import Status
from ascend_doctor.smoke import scenarios as S
from ascend_doctor.smoke.client import SmokeClient
from ascend_doctor.smoke.stage import evaluate_smoke
from tests.smoke.vllm_server import (
    ALIAS,
    VllmServer,
    leaky_dir,
    leaky_model,
    remove,
    skip_reason,
    vllm_model,
    vllm_python,
)

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

if skip_reason():
    pytest.skip(skip_reason(), allow_module_level=True)


@pytest.fixture(scope="module")
def leaky():
    tmp = leaky_dir()
    try:
        model = leaky_model(vllm_model(), tmp / "smollm2-leaky")
        with VllmServer(vllm_python(), str(model), strict_level="parameter", template=None) as srv:
            facts = S.SmokeFacts(base_url=srv.base_url, reachable=True, model=ALIAS, model_source="option",
                                 models_served=[ALIAS])
            with SmokeClient(srv.base_url, timeout=600.0) as client:
                facts.exchanges[S.CHAT] = client.chat(S.CHAT, S._payload(ALIAS, S._user(S.Q_CHAT),
                                                                         max_tokens=S.CHAT_TOKENS))
                facts.exchanges[S.NONE] = client.chat(S.NONE, S._payload(ALIAS, S._user(S.Q_WEATHER),
                                                                         max_tokens=S.ANSWER_TOKENS))
            opts = RunOptions(select=["SRV103", "SRV105"])
            yield facts, {f.code: f for f in evaluate_smoke(load_registry(entry_points=False), facts, opts)}
    finally:
        remove(tmp)


def test_the_real_server_leaks_the_turn_end(leaky):
    facts, _ = leaky
    reply = facts.get(S.CHAT).reply
    assert facts.get(S.CHAT).status == 200
    assert "<|im_end|>" in reply.content and reply.finish_reason == "length"


def test_plain_chat_fails_with_the_template_fix(leaky):
    _, found = leaky
    f = found["SRV103"]
    assert f.status == Status.FAIL and "<|im_end|>" in f.message and "finish_reason='length'" in f.message
    assert "chat template" in f.remediation and "--chat-template" in f.remediation


def test_control_token_check_fails_on_every_leaking_answer(leaky):
    _, found = leaky
    f = found["SRV105"]
    assert f.status == Status.FAIL and "chat.content" in f.message
    assert "<|im_end|>" in f.details["tokens"] and "ChatML (Qwen, SmolLM, Hermes)" in f.details["families"]
