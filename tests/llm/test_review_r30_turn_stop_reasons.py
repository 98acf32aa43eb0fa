"""Review r30: a whole turn against Claude at the HTTP level when the model's answer is
well-formed but unusable (a refusal, a send_message cut by max_tokens).

DESIGN §10.4: "the customer is never left in silence; the turn answers with a short message
that promises nothing it cannot keep and hands off, or retries later". A cut tool call holds
truncated input (the API: "the truncated response contains an incomplete tool use block"),
so half a sentence must never reach the customer either.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from conversation.models import LlmCall, Message, Turn
from conversation.turns.unavailable import UNAVAILABLE_HANDOFF_NOTICE
from tests import factories
from tests.conftest import simulator_post
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.llm.test_review_r30_stop_reasons import cut_short_send, refusal

CUT = "Olá! Verifiquei aqui e o seu pedido"


@pytest.fixture
def channel(world: Any) -> Any:
    agent = factories.make_agent(
        world.org_a, "Claude", provider="anthropic", model="claude-haiku-4-5"
    )
    return factories.make_channel(world.org_a, agent=agent)


def cut_send() -> dict[str, Any]:
    return cut_short_send(CUT)


@pytest.mark.parametrize("answer", [cut_send, refusal], ids=["max_tokens_in_send", "refusal"])
def test_an_unusable_answer_gets_the_model_down_notice_not_silence_nor_half_a_message(
    claude: FakeAnthropicServer, channel: Any, django_capture_on_commit_callbacks: Any, answer: Any
) -> None:
    claude.enqueue_json(200, answer())

    with django_capture_on_commit_callbacks(execute=True):
        simulator_post(Client(), channel, "cadê meu pedido?", msg_id="r30-1")

    outbound = list(Message.objects.filter(direction="outbound").values_list("body", flat=True))
    assert outbound == [UNAVAILABLE_HANDOFF_NOTICE]
    turn = Turn.objects.get()
    assert (turn.outcome, turn.error_code) == ("llm_unavailable", "llm_bad_response")
    # The billed tokens of the unusable answer are on the ledger, under its error.
    call = LlmCall.objects.get()
    assert (call.error_code, call.input_tokens, call.output_tokens) == ("llm_bad_response", 656, 74)
