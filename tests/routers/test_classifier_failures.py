"""Every kind of classifier failure ends in the fallback agent (or the generic assistant)
and the turn still completes. The LLM stage is exercised at the HTTP level (the official
SDK against a local fake server) and with a scripted model for the timeout."""

from __future__ import annotations

import pytest
from django.test import Client

from conversation import model_calls
from conversation.llm.base import LlmTimeout
from conversation.models import AgentVersion, LlmCall, Message, Turn
from routers.models import RouterDecision
from tests import factories
from tests.conftest import simulator_post
from tests.fakes.anthropic_bodies import recorded, text_response, tool_use_response
from tests.routers.factories import SUPORTE, VENDAS, ClassifierScript, make_router, verdict

# Far from every example: the local classifier is unsure, so the LLM is asked.
UNSURE = "olá, queria tirar uma dúvida com vocês"


def classifier_tool_use(intent: str, confidence: float) -> dict:
    return tool_use_response("classify_intent", {"intent": intent, "confidence": confidence})


@pytest.fixture
def routed(world):
    vendas = factories.make_agent(world.org_a, "Vendas")  # offline orchestrators
    suporte = factories.make_agent(world.org_a, "Suporte técnico")
    reserva = factories.make_agent(world.org_a, "Reserva")
    channel = factories.make_channel(world.org_a, agent=world.agent_a)
    router = make_router(channel, [(vendas, VENDAS), (suporte, SUPORTE)], fallback=reserva)
    return {"channel": channel, "router": router, "vendas": vendas, "reserva": reserva}


def say(channel, text, capture, msg_id="m-1") -> Turn:
    with capture(execute=True):
        simulator_post(Client(), channel, text, msg_id=msg_id)
    return Turn.objects.get(trigger_key=Message.objects.get(provider_message_id=msg_id).pk)


def answered_by(turn: Turn) -> str | None:
    if turn.agent_version_id is None:
        return None
    return AgentVersion.objects.get(pk=turn.agent_version_id).agent.name


def test_llm_classification_routes_and_is_recorded_in_the_ledger(
    claude, routed, django_capture_on_commit_callbacks
):
    claude.enqueue_json(200, classifier_tool_use("vendas", 0.91))
    turn = say(routed["channel"], UNSURE, django_capture_on_commit_callbacks)
    assert turn.outcome == "replied"
    assert answered_by(turn) == "Vendas"
    decision = RouterDecision.objects.get()
    assert (decision.outcome, decision.stage, decision.intent_name) == (
        "classified",
        "llm",
        "vendas",
    )
    call = LlmCall.objects.get(purpose="intent_router")
    assert (call.turn_id, call.error_code, call.input_tokens) == (turn.pk, "", 656)
    request = claude.requests[0].json
    assert request["model"] == "claude-haiku-4-5"  # the router's classifier_model
    assert request["tool_choice"] == {"type": "tool", "name": "classify_intent"}
    assert request["tools"][0]["input_schema"]["properties"]["intent"]["enum"] == [
        "vendas",
        "suporte",
        "none",
    ]


def test_router_classifier_model_comes_from_its_config(
    claude, routed, django_capture_on_commit_callbacks
):
    routed["router"].config = {**routed["router"].config, "classifier_model": "claude-sonnet-5"}
    routed["router"].save()
    claude.enqueue_json(200, classifier_tool_use("suporte", 0.9))
    say(routed["channel"], UNSURE, django_capture_on_commit_callbacks)
    assert claude.requests[0].json["model"] == "claude-sonnet-5"
    assert LlmCall.objects.get(purpose="intent_router").model == "claude-sonnet-5"


@pytest.mark.parametrize(
    ("status", "body", "outcome", "error_code"),
    [
        # invalid JSON: the model answers prose instead of the tool
        (200, text_response("desculpe, não sei classificar"), "classifier_failed", "no_verdict"),
        # unknown intent: the closed world refuses it (no verdict, not a failure)
        (200, classifier_tool_use("financeiro", 0.97), "fallback", ""),
        # model not enabled / not found for this key
        (
            404,
            recorded("error_404_not_found_error.json"),
            "classifier_failed",
            "llm_invalid_request",
        ),
        # provider overloaded
        (529, recorded("error_529_overloaded_error.json"), "classifier_failed", "llm_unavailable"),
    ],
    ids=["invalid_json", "unknown_intent", "model_not_enabled", "overloaded"],
)
def test_classifier_failure_goes_to_the_fallback_and_the_turn_completes(
    claude, routed, django_capture_on_commit_callbacks, status, body, outcome, error_code
):
    claude.enqueue_json(status, body)
    turn = say(routed["channel"], UNSURE, django_capture_on_commit_callbacks)
    assert turn.status == "done" and turn.outcome == "replied"
    assert answered_by(turn) == "Reserva"
    decision = RouterDecision.objects.get()
    assert (decision.outcome, decision.stage, decision.error_code) == (outcome, "llm", error_code)
    assert decision.agent_id == routed["reserva"].pk
    assert LlmCall.objects.get(purpose="intent_router").error_code == (
        "" if status == 200 else error_code
    )
    assert Message.objects.filter(direction="outbound", sender_kind="ai").count() == 1


def test_model_the_organization_did_not_enable_is_never_called(
    claude, world, routed, django_capture_on_commit_callbacks
):
    world.org_a.settings = {"llm": {"enabled_models": ["claude-sonnet-4-5"]}}
    world.org_a.save()
    turn = say(routed["channel"], UNSURE, django_capture_on_commit_callbacks)
    assert claude.requests == []
    decision = RouterDecision.objects.get()
    assert (decision.outcome, decision.error_code) == ("classifier_failed", "llm_model_not_enabled")
    assert answered_by(turn) == "Reserva" and turn.outcome == "replied"


def test_confident_local_verdict_needs_no_llm_even_when_the_model_is_not_enabled(
    claude, world, routed, django_capture_on_commit_callbacks
):
    world.org_a.settings = {"llm": {"enabled_models": []}}
    world.org_a.save()
    turn = say(routed["channel"], "quanto custa o plano?", django_capture_on_commit_callbacks)
    assert claude.requests == []
    assert answered_by(turn) == "Vendas"
    assert RouterDecision.objects.get().stage == "local"


def test_timeout_goes_to_the_fallback(routed, django_capture_on_commit_callbacks):
    script = ClassifierScript([LlmTimeout("slow")])
    with model_calls.use_model_client(script):
        turn = say(routed["channel"], UNSURE, django_capture_on_commit_callbacks)
    assert turn.outcome == "replied" and answered_by(turn) == "Reserva"
    decision = RouterDecision.objects.get()
    assert (decision.outcome, decision.error_code) == ("classifier_failed", "llm_timeout")
    assert script.requests[0].purpose == "intent_router"
    assert script.requests[0].timeout_s <= 10  # a classification never waits like a reply


def test_failure_without_fallback_answers_generic_and_the_turn_completes(
    routed, django_capture_on_commit_callbacks
):
    routed["router"].fallback_agent = None
    routed["router"].save()
    with model_calls.use_model_client(ClassifierScript([LlmTimeout("slow")])):
        turn = say(routed["channel"], UNSURE, django_capture_on_commit_callbacks)
    assert turn.status == "done" and turn.outcome == "replied"
    assert turn.agent_version_id is None  # the generic assistant
    assert RouterDecision.objects.get().outcome == "classifier_failed"


def test_sticky_conversation_survives_a_classifier_failure(
    routed, django_capture_on_commit_callbacks
):
    with model_calls.use_model_client(
        ClassifierScript([verdict("vendas", 0.9), LlmTimeout("slow")])
    ):
        first = say(routed["channel"], UNSURE, django_capture_on_commit_callbacks, "m-1")
        second = say(
            routed["channel"],
            "e sobre aquilo, alguma novidade?",
            django_capture_on_commit_callbacks,
            "m-2",
        )
    assert answered_by(first) == answered_by(second) == "Vendas"
    outcomes = list(
        RouterDecision.objects.order_by("created_at").values_list("outcome", "error_code")
    )
    assert outcomes == [("classified", ""), ("sticky", "llm_timeout")]


def test_router_classifier_spends_a_smaller_retry_budget_than_replies(
    claude, routed, settings, django_capture_on_commit_callbacks
):
    # Replies may retry twice; a routing decision retries once, then takes its fallback.
    settings.ANTHROPIC_MAX_RETRIES = 2
    settings.ROUTER_LLM_MAX_RETRIES = 1
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    for _ in range(3):
        claude.enqueue_json(529, overloaded, headers={"retry-after-ms": "1"})
    turn = say(routed["channel"], UNSURE, django_capture_on_commit_callbacks)
    decision = RouterDecision.objects.get()
    assert (decision.outcome, decision.error_code) == ("classifier_failed", "llm_unavailable")
    assert len(claude.requests) == 2  # the first try and one retry, not three
    assert answered_by(turn) == "Reserva"
