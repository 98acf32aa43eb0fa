"""The runtime in a turn whose agent runs on Claude (HTTP level, recorded wire format):
classifier and matcher calls in the ledger, the fallback note for the orchestrator, the
note about executed actions whose report was vetoed, and a classifier outage taking the
runtime's fallback path."""

from __future__ import annotations

import json

from conversation import turns
from conversation.models import Conversation, LlmCall, Message, RuntimeAction, Turn
from conversation.runtime_adapters.classifiers import INTENT_TOOL, MATCHER_TOOL
from conversation.turns.runtime_note import ACTIONS_HEADER
from conversation.turns.runtime_step import DIRECTIVE_HEADER, NOTE_HEADER
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply

from .conftest import Customer, recorded, tool_use_response

OVERLOADED = Reply(
    529,
    json.dumps(recorded("error_529_overloaded_error.json")).encode(),
    {"content-type": "application/json"},
)


ASK = "Qual dos dois serviços você quer cancelar primeiro?"


def purposes() -> list[tuple[str, str, str]]:
    return [(c.purpose, c.provider, c.error_code) for c in LlmCall.objects.order_by("created_at")]


def orchestrator_sends(claude, text: str) -> None:
    # One call: the accepted send ends the turn.
    claude.enqueue_json(200, tool_use_response("send_message", {"text": text}))


def reads_a_request_to_cancel_tamboro(claude: FakeAnthropicServer) -> None:
    """The intent extractor's next answer: the customer asks to cancel Tamboro."""
    claude.enqueue_json(
        200,
        tool_use_response(
            INTENT_TOOL,
            {
                "kind": "action_request",
                "action_verbs": ["cancelar"],
                "mentioned_items": ["Tamboro"],
            },
        ),
    )


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
    # Rule 1.6 (spec: "não contratei isso" with a confirmation pending): a "não" to the
    # runtime's confirmation falls back with the state summary and a directive naming the
    # pending items, so the orchestrator explains instead of pushing the cancellation.
    reads_a_request_to_cancel_tamboro(claude)
    customer = Customer(claude_desk.channel, django_capture_on_commit_callbacks)
    (asked,) = customer.say("cancela o tamboro")
    assert asked.body.startswith("Vamos seguir com o cancelamento do serviço Tamboro")

    orchestrator_sends(claude, "Entendi. O Tamboro pode ter vindo de um teste gratuito.")
    (answer,) = customer.say("não")  # the fast path: no classifier call

    assert answer.body == "Entendi. O Tamboro pode ter vindo de um teste gratuito."
    turn = Turn.objects.order_by("created_at").last()
    assert turn is not None
    runtime = turn.trace["runtime"]
    assert (runtime["handled"], runtime["fallback_reason"]) == (
        False,
        "confirmation_response_negation_pending",
    )
    assert (runtime["rule"], runtime["source"]) == ("1.6", "rules")
    assert runtime["directive"] is True and runtime["note"] is True
    last_user = claude.requests[1].json["messages"][-1]
    assert last_user["role"] == "user"
    customer_block, note_block = last_user["content"]
    assert customer_block == {"type": "text", "text": "não"}
    note = note_block["text"]
    assert note.startswith(NOTE_HEADER) and "Turno atual: 2" in note
    assert "Aguardando confirmação do cliente sobre: Vamos seguir" in note
    assert DIRECTIVE_HEADER in note and "confirmação pendente sobre: Tamboro" in note
    # Nothing of the note is stored: the customer's message is what they typed.
    assert list(
        Message.objects.filter(direction="inbound")
        .order_by("created_at")
        .values_list("body", flat=True)
    ) == ["cancela o tamboro", "não"]

    # The next turn's history carries the earlier messages as typed, without the note.
    claude.enqueue_json(200, tool_use_response(INTENT_TOOL, {"kind": "unknown"}))
    orchestrator_sends(claude, "Posso ajudar em algo mais?")
    customer.say("hein?")
    history = claude.requests[3].json["messages"]
    assert history[0] == {"role": "user", "content": "cancela o tamboro"}
    assert {"role": "user", "content": "não"} in history
    assert not any(NOTE_HEADER in json.dumps(m, ensure_ascii=False) for m in history[:-1])
    classifier_prompt = claude.requests[2].json["messages"][0]["content"]
    assert "Cliente: cancela o tamboro" in classifier_prompt  # the classifier sees the history


def test_a_vetoed_report_of_an_executed_action_tells_the_orchestrator_what_was_done(
    claude, claude_desk, django_capture_on_commit_callbacks, monkeypatch
):
    # The runtime cancelled the Tamboro, but a before-send gate vetoed its report: the
    # orchestrator writes the reply instead and must know the action ran, and its result.
    def veto_reports(ctx, text):
        return "Mensagem vetada." if text.startswith("Pronto!") else None

    veto_reports.code = "test_veto"  # type: ignore[attr-defined]
    monkeypatch.setattr(turns.tools, "BEFORE_SEND_GATES", [veto_reports])
    reads_a_request_to_cancel_tamboro(claude)
    customer = Customer(claude_desk.channel, django_capture_on_commit_callbacks)
    customer.say("cancela o tamboro")
    orchestrator_sends(claude, "Cancelei o Tamboro para você.")
    (answer,) = customer.say("sim")  # the fast path: no classifier call

    assert answer.body == "Cancelei o Tamboro para você."
    turn = Turn.objects.order_by("created_at").last()
    assert turn is not None and turn.trace["vetoes"] == ["test_veto"]
    assert RuntimeAction.objects.get().outcome == "success"  # ran once, logged
    _, note_block = claude.requests[1].json["messages"][-1]["content"]
    note = note_block["text"]
    assert note.startswith(ACTIONS_HEADER)
    assert "- cancelamento avulso de Tamboro: concluído" in note
    assert NOTE_HEADER in note and "Última ação executada: cancelar_vas_avulso" in note
    assert DIRECTIVE_HEADER in note and "não peça confirmação" in note
    # The state is kept (the action is real): a later "sim" acts on nothing.
    stored = Conversation.objects.get().runtime_state
    assert stored is not None and stored["live"]["status"] == "open"


def test_an_uncovered_request_hands_the_orchestrator_the_summary_without_a_directive(
    claude, claude_desk, django_capture_on_commit_callbacks
):
    # The policy's default (spec: "intent não coberta devolve fallback_to_orchestrator e
    # injeta conversation_state_summary"): a value question is the orchestrator's.
    claude.enqueue_json(200, tool_use_response(INTENT_TOOL, {"kind": "value_question"}))
    orchestrator_sends(claude, "A sua fatura deste mês é de R$ 180,00.")
    customer = Customer(claude_desk.channel, django_capture_on_commit_callbacks)

    (answer,) = customer.say("quanto deu a minha conta?")

    assert answer.body == "A sua fatura deste mês é de R$ 180,00."
    runtime = Turn.objects.get().trace["runtime"]
    assert (runtime["handled"], runtime["fallback_reason"]) == (False, "uncovered_intent")
    assert (runtime["directive"], runtime["note"]) == (False, True)
    _, note_block = claude.requests[1].json["messages"][-1]["content"]
    assert note_block["text"].startswith(NOTE_HEADER)
    assert DIRECTIVE_HEADER not in note_block["text"]


def test_a_classifier_outage_takes_the_runtimes_fallback_path(
    claude, claude_desk, django_capture_on_commit_callbacks
):
    claude.enqueue(OVERLOADED, OVERLOADED)  # first try + the SDK's one retry
    # A question, far from the promise detector's uncertain band: no before-send model check
    # (tests/cases/test_promise_check_http.py covers that call over HTTP).
    claude.enqueue_json(200, tool_use_response("send_message", {"text": ASK}))
    customer = Customer(claude_desk.channel, django_capture_on_commit_callbacks)

    (answer,) = customer.say("quero cancelar o VOD e o HBO Max")

    assert answer.body == ASK
    turn = Turn.objects.get()
    assert turn.outcome == "replied"
    runtime = turn.trace["runtime"]
    assert (runtime["intent"], runtime["source"]) == ("unknown", "fallback")
    assert (runtime["handled"], runtime["fallback_reason"]) == (False, "uncovered_intent")
    assert purposes() == [
        ("conversation_intent_classifier", "anthropic", "llm_unavailable"),
        ("orchestrator", "anthropic", ""),
    ]
    assert Conversation.objects.get().runtime_state["live"]["turn_index"] == 1
