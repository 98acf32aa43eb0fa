"""Review r30 of the router inside real turns: a resolved (closed) conversation loses its
sticky agent, and a routing step that ends in a database error is still recorded."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import DatabaseError
from django.test import Client

from conversation.models import AgentVersion, Conversation, Turn
from inbox import services as inbox_services
from routers import turn_routing
from routers.models import RouterDecision
from tests import factories
from tests.conftest import simulator_post
from tests.routers.factories import SUPORTE, VENDAS, make_router

PHONE = "5511966665555"


@pytest.fixture
def routing(world):
    recepcao = factories.make_agent(world.org_a, "Recepção")
    vendas = factories.make_agent(world.org_a, "Vendas")
    suporte = factories.make_agent(world.org_a, "Suporte técnico")
    reserva = factories.make_agent(world.org_a, "Reserva")
    channel = factories.make_channel(world.org_a, agent=recepcao)
    router = make_router(channel, [(vendas, VENDAS), (suporte, SUPORTE)], fallback=reserva)
    return {"channel": channel, "router": router, "suporte": suporte, "vendas": vendas}


class Say:
    def __init__(self, channel: Any, capture: Any) -> None:
        self.channel, self.capture, self.n = channel, capture, 0

    def __call__(self, text: str) -> Turn:
        self.n += 1
        with self.capture(execute=True):
            response = simulator_post(
                Client(), self.channel, text, msg_id=f"r30-{self.n}", phone=PHONE
            )
        assert response.status_code == 200
        return Turn.objects.filter(conversation__channel=self.channel).latest("created_at")


def answered_by(turn: Turn) -> str | None:
    if turn.agent_version_id is None:
        return None
    return AgentVersion.objects.select_related("agent").get(pk=turn.agent_version_id).agent.name


def test_a_resolved_conversation_is_routed_afresh_when_the_customer_writes_again(
    world, routing, django_capture_on_commit_callbacks
):
    # Spec (intent-router, global constraints): "stickiness = ... a conversa guarda o agente
    # escolhido ... Handoff/fechamento limpa a atribuição." Staff resolving (closing) the
    # conversation must clear the sticky agent, so the next message is classified anew
    # rather than kept with the agent of the closed subject.
    say = Say(routing["channel"], django_capture_on_commit_callbacks)
    first = say("meu sistema não abre, está dando erro")
    assert answered_by(first) == "Suporte técnico"
    conversation = Conversation.objects.get(channel=routing["channel"])
    inbox_services.conversation_resolve(conversation=conversation, actor=world.admin)

    # Later, a new subject in words that name no subject of their own: with the support
    # agent still sticky it would stay there unclassified (cue no_subject).
    again = say("quanto custa?")
    assert again.trace["route"]["outcome"] == "classified", again.trace["route"]
    assert answered_by(again) == "Vendas"
    conversation.refresh_from_db()
    assert conversation.active_agent_id == routing["vendas"].pk
    assert conversation.active_intent == "vendas"

    # From there on the new assignment is sticky as usual.
    follow_up = say("e tem desconto à vista?")
    assert follow_up.trace["route"]["outcome"] == "sticky"
    assert answered_by(follow_up) == "Vendas"


def test_a_database_error_in_routing_answers_with_the_channel_agent_and_is_recorded(
    world, routing, django_capture_on_commit_callbacks, monkeypatch
):
    # Spec Task 5: "1 linha em ai_router_decisions por turno com router"; Task 4: "o router
    # nunca pode derrubar um turno" (the channel's agent, outcome classifier_failed). On
    # PostgreSQL a database error swallowed inside the resolver surfaces when its savepoint
    # is released: the turn must still land on the safe agent AND leave its decision row.
    real = turn_routing.resolve_turn_agent

    def release_fails(turn_input: Any, deps: Any) -> Any:
        real(turn_input, deps)
        raise DatabaseError("current transaction is aborted")

    monkeypatch.setattr(turn_routing, "resolve_turn_agent", release_fails)
    turn = Say(routing["channel"], django_capture_on_commit_callbacks)("quanto custa o plano?")
    assert turn.outcome == "replied"
    assert answered_by(turn) == "Recepção"
    decision = RouterDecision.objects.get(turn=turn)
    assert decision.router_id == routing["router"].pk
    assert decision.outcome == "classifier_failed"
    assert decision.error_code == "unexpected_error"
    assert decision.agent is not None and decision.agent.name == "Recepção"
    assert turn.trace["route"]["router_id"] == str(routing["router"].pk)
    # An unexpected error is not a routing choice: nothing becomes sticky.
    conversation = Conversation.objects.get(channel=routing["channel"])
    assert conversation.active_agent_id is None


def test_after_a_fallback_to_a_member_a_first_subject_without_nouns_is_classified(
    world, routing, django_capture_on_commit_callbacks
):
    # Spec Task 4, rule 2 (sticky intent null ⇒ any intent ≥ min_confidence moves). The
    # fallback agent is also one of the router's members (a common set-up): its answer to
    # "bom dia" makes it the conversation's agent, with no subject. "quanto custa?" is the
    # first subject: it must reach sales, not stay with the fallback unclassified.
    router = routing["router"]
    router.fallback_agent = routing["suporte"]
    router.save()
    say = Say(routing["channel"], django_capture_on_commit_callbacks)
    first = say("bom dia")
    assert first.trace["route"]["outcome"] == "fallback"
    assert answered_by(first) == "Suporte técnico"
    second = say("quanto custa?")
    assert second.trace["route"]["outcome"] == "reclassified", second.trace["route"]
    assert answered_by(second) == "Vendas"
