"""The runtime in a turn whose agent runs on Claude (HTTP level, recorded wire format):
classifier and matcher calls in the ledger, the fallback note for the orchestrator, and a
classifier outage taking the runtime's fallback path."""

from __future__ import annotations

import json

from conversation.models import Conversation, LlmCall, Message, Turn
from conversation.runtime_adapters.classifiers import INTENT_TOOL, MATCHER_TOOL
from conversation.turns.runtime_step import DIRECTIVE_HEADER, NOTE_HEADER
from tests.fakes.anthropic_server import Reply

from .conftest import Customer, end_turn_response, recorded, tool_use_response

OVERLOADED = Reply(
    529,
    json.dumps(recorded("error_529_overloaded_error.json")).encode(),
    {"content-type": "application/json"},
)


def purposes() -> list[tuple[str, str, str]]:
    return [(c.purpose, c.provider, c.error_code) for c in LlmCall.objects.order_by("created_at")]


def orchestrator_sends(claude, text: str) -> None:
    claude.enqueue_json(200, tool_use_response("send_message", {"text": text}))
    claude.enqueue_json(200, end_turn_response())


def test_a_typo_goes_through_the_model_matcher_and_the_runtime_answers(
    claude, claude_desk, django_capture_on_commit_callbacks
):
    claude.enqueue_json(
        200,
        tool_use_response(
            INTENT_TOOL,
            {
                "kind": "action_request",
                "action_verbs": ["cancelar"],
                "mentioned_items": ["tamburo"],
            },
        ),
    )
    claude.enqueue_json(200, tool_use_response(MATCHER_TOOL, {"matches": ["Tamboro"]}))
    customer = Customer(claude_desk.channel, django_capture_on_commit_callbacks)

    (asked,) = customer.say("cancela o tamburo")

    assert asked.body.startswith("Vamos seguir com o cancelamento do serviço Tamboro")
    assert purposes() == [
        ("conversation_intent_classifier", "anthropic", ""),
        ("conversation_item_matcher", "anthropic", ""),
    ]
    runtime = Turn.objects.get().trace["runtime"]
    assert (runtime["classifier"], runtime["decision"]) == ("llm", "ask_confirmation")
    matcher_request = claude.requests[1].json
    assert (
        "Tamboro"
        in matcher_request["tools"][0]["input_schema"]["properties"]["matches"]["items"]["enum"]
    )


def test_a_fallback_hands_the_orchestrator_the_summary_and_directive_for_that_call_only(
    claude, claude_desk, django_capture_on_commit_callbacks
):
    # "aya" is on both lines of the invoice: the runtime asks the orchestrator to disambiguate.
    claude.enqueue_json(
        200,
        tool_use_response(
            INTENT_TOOL,
            {"kind": "action_request", "action_verbs": ["cancelar"], "mentioned_items": ["aya"]},
        ),
    )
    orchestrator_sends(claude, "Qual Aya Ensina: da linha final 4321 ou 5678?")
    customer = Customer(claude_desk.channel, django_capture_on_commit_callbacks)

    (answer,) = customer.say("cancela o aya")

    assert answer.body == "Qual Aya Ensina: da linha final 4321 ou 5678?"
    turn = Turn.objects.get()
    runtime = turn.trace["runtime"]
    assert (runtime["handled"], runtime["fallback_reason"]) == (False, "ambiguous_item_match")
    assert runtime["directive"] is True and runtime["note"] is True
    last_user = claude.requests[1].json["messages"][-1]
    assert last_user["role"] == "user"
    customer_block, note_block = last_user["content"]
    assert customer_block == {"type": "text", "text": "cancela o aya"}
    note = note_block["text"]
    assert note.startswith(NOTE_HEADER) and "Turno atual: 1" in note
    assert DIRECTIVE_HEADER in note and 'Menção "aya"' in note and "final 5678" in note
    # Nothing of the note is stored: the customer's message is what they typed.
    assert Message.objects.get(direction="inbound").body == "cancela o aya"

    # The next turn's history carries the earlier message as typed, without the note.
    claude.enqueue_json(200, tool_use_response(INTENT_TOOL, {"kind": "unknown"}))
    orchestrator_sends(claude, "Pode me dizer o final da linha?")
    customer.say("hein?")
    first_user = claude.requests[4].json["messages"][0]
    assert first_user == {"role": "user", "content": "cancela o aya"}
    classifier_prompt = claude.requests[3].json["messages"][0]["content"]
    assert "Cliente: cancela o aya" in classifier_prompt  # the classifier sees the history


def test_a_classifier_outage_takes_the_runtimes_fallback_path(
    claude, claude_desk, django_capture_on_commit_callbacks
):
    claude.enqueue(OVERLOADED, OVERLOADED)  # first try + the SDK's one retry
    orchestrator_sends(claude, "Vou verificar a sua fatura.")
    customer = Customer(claude_desk.channel, django_capture_on_commit_callbacks)

    (answer,) = customer.say("quero cancelar o VOD e o HBO Max")

    assert answer.body == "Vou verificar a sua fatura."
    turn = Turn.objects.get()
    assert turn.outcome == "replied"
    runtime = turn.trace["runtime"]
    assert (runtime["intent"], runtime["source"]) == ("unknown", "fallback")
    assert (runtime["handled"], runtime["fallback_reason"]) == (False, "uncovered_intent")
    assert purposes() == [
        ("conversation_intent_classifier", "anthropic", "llm_unavailable"),
        ("orchestrator", "anthropic", ""),
        ("orchestrator", "anthropic", ""),
    ]
    assert Conversation.objects.get().runtime_state["live"]["turn_index"] == 1
