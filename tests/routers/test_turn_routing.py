"""The router inside real turns (spec Task 5), through the simulator webhook: unchanged
behaviour without a router, never classified while a human owns the conversation, and
sticky / reclassified / fallback across multi-turn conversations. Offline: no API key,
so the local classifier decides (the LLM stage is tested in test_classifier_failures).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from conversation import turns
from conversation.models import AgentVersion, Conversation, LlmCall, Message, Turn
from routers import services
from routers.models import RouterDecision
from routers.turn_routing import route_turn
from tests import factories
from tests.conftest import simulator_post
from tests.routers.factories import SUPORTE, VENDAS, make_router

PHONE = "5511977776666"


@pytest.fixture
def routing(world):
    """A channel whose own agent is "Recepção", routed over Vendas (A) and Suporte (B),
    with "Reserva" (not a member) as the fallback."""
    recepcao = factories.make_agent(world.org_a, "Recepção")
    vendas = factories.make_agent(world.org_a, "Vendas")
    suporte = factories.make_agent(world.org_a, "Suporte técnico")
    reserva = factories.make_agent(world.org_a, "Reserva")
    channel = factories.make_channel(world.org_a, agent=recepcao)
    router = make_router(channel, [(vendas, VENDAS), (suporte, SUPORTE)], fallback=reserva)
    return {
        "channel": channel,
        "router": router,
        "recepcao": recepcao,
        "vendas": vendas,
        "suporte": suporte,
        "reserva": reserva,
    }


class Say:
    """Send customer messages through the simulator webhook and run the turn on commit."""

    def __init__(self, channel: Any, capture: Any, phone: str = PHONE) -> None:
        self.channel, self.capture, self.phone, self.n = channel, capture, phone, 0

    def __call__(self, text: str) -> Turn:
        self.n += 1
        with self.capture(execute=True):
            response = simulator_post(
                Client(), self.channel, text, msg_id=f"{self.phone}-{self.n}", phone=self.phone
            )
        assert response.status_code == 200
        return Turn.objects.filter(conversation__channel=self.channel).latest("created_at")


def answered_by(turn: Turn) -> str | None:
    if turn.agent_version_id is None:
        return None
    return AgentVersion.objects.select_related("agent").get(pk=turn.agent_version_id).agent.name


@pytest.fixture
def route_queries(monkeypatch):
    """The SQL the routing step of each turn ran (savepoints aside)."""
    captured: list[list[str]] = []

    def measured(**kwargs: Any) -> Any:
        with CaptureQueriesContext(connection) as ctx:
            result = route_turn(**kwargs)
        captured.append(
            [
                q["sql"]
                for q in ctx.captured_queries
                if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))
            ]
        )
        return result

    monkeypatch.setattr(turns.pipeline, "route_turn", measured)
    return captured


def test_channel_without_router_is_answered_by_its_agent_as_before(
    world, django_capture_on_commit_callbacks, route_queries
):
    say = Say(world.channel_a, django_capture_on_commit_callbacks)
    turn = say("oi, bom dia")
    assert turn.outcome == "replied"
    assert answered_by(turn) == "Suporte"
    assert turn.trace["route"] == {"source": "channel"}
    assert not RouterDecision.objects.exists()
    assert not LlmCall.objects.filter(purpose="intent_router").exists()
    # one query: the channel's agent config (what every turn read before routers), with
    # the router lookup folded in as a subquery — a channel without a router pays nothing
    (queries,) = route_queries
    assert len(queries) == 1, "\n".join(queries)
    assert "routers_router" in queries[0] and "conversation_agentversion" in queries[0]


def test_channel_without_router_or_agent_answers_generic(world, django_capture_on_commit_callbacks):
    channel = factories.make_channel(world.org_a, agent=None)
    turn = Say(channel, django_capture_on_commit_callbacks)("oi")
    assert turn.trace["route"] == {"source": "generic"}
    assert turn.agent_version_id is None and turn.outcome == "replied"


def test_conversation_a_human_owns_is_never_classified(
    world, routing, django_capture_on_commit_callbacks
):
    conversation = factories.make_conversation(routing["channel"], phone=PHONE)
    conversation.contact.force_human = True
    conversation.contact.save()
    turn = Say(routing["channel"], django_capture_on_commit_callbacks)("quanto custa o plano?")
    assert turn.outcome == "human_owned"
    assert "route" not in turn.trace
    assert not RouterDecision.objects.exists()
    assert not Message.objects.filter(direction="outbound").exists()


def test_handoff_clears_the_conversations_sticky_agent(
    world, routing, django_capture_on_commit_callbacks
):
    say = Say(routing["channel"], django_capture_on_commit_callbacks)
    say("quanto custa o plano?")
    conversation = Conversation.objects.get(channel=routing["channel"])
    assert conversation.active_agent_id == routing["vendas"].pk
    turn = say("quero falar com um atendente humano")  # the offline orchestrator hands off
    assert turn.outcome == "handoff"
    conversation.refresh_from_db()
    assert conversation.active_agent_id is None and conversation.active_intent == ""
    assert conversation.active_agent_set_at is None
    say("oi? alguém?")  # a human owns it now: no new decision
    assert RouterDecision.objects.count() == 2


def test_proof_scenario_classified_sticky_reclassified_then_deactivated(
    world, routing, django_capture_on_commit_callbacks, route_queries
):
    """Spec Task 8 step 4: intent A → agent A; A again → same agent (sticky); a clear
    change to B → agent B; router deactivated → back to the channel's own agent."""
    say = Say(routing["channel"], django_capture_on_commit_callbacks)

    first = say("quanto custa o plano anual?")
    assert answered_by(first) == "Vendas"
    assert first.trace["route"]["outcome"] == "classified"
    assert first.trace["route"]["stage"] == "local"

    second = say("e tem desconto à vista?")
    assert answered_by(second) == "Vendas"
    assert second.trace["route"]["outcome"] == "sticky"

    third = say("na verdade meu sistema não abre, está dando erro")
    assert answered_by(third) == "Suporte técnico"
    assert third.trace["route"]["outcome"] == "reclassified"
    assert third.trace["route"]["intent"] == "suporte"

    services.router_update(router=routing["router"], actor=world.admin, is_active=False)
    fourth = say("quanto custa o plano mensal?")
    assert answered_by(fourth) == "Recepção"
    assert fourth.trace["route"] == {"source": "channel"}

    decisions = list(RouterDecision.objects.order_by("created_at"))
    assert [(d.outcome, d.intent_name, d.agent.name) for d in decisions] == [
        ("classified", "vendas", "Vendas"),
        ("sticky", "vendas", "Vendas"),
        ("reclassified", "suporte", "Suporte técnico"),
    ]
    conversation = Conversation.objects.get(channel=routing["channel"])
    assert all(d.conversation_id == conversation.pk for d in decisions)
    assert [d.turn_id for d in decisions] == [first.pk, second.pk, third.pk]
    assert conversation.active_agent_id == routing["suporte"].pk
    assert conversation.active_intent == "suporte"

    # Routing-step queries (savepoints aside); a turn without routing ran 1 (the channel's
    # agent config), which now also carries the router row, its members stamp and the
    # sticky agent's published version.
    # classified (cold cache): channel+router · members · phrases · agent config
    #   · sticky update · decision insert = 6 (adds 5)
    # sticky: channel+router (the agent's config cached for its version) · decision
    #   insert = 2 (adds 1)
    # reclassified: channel+router · agent config · sticky update · decision insert = 4
    #   (adds 3)
    # deactivated: channel+router (none) = 1 (adds 0)
    assert [len(q) for q in route_queries] == [6, 2, 4, 1], route_queries


def test_a_follow_up_that_names_no_subject_stays_and_an_opener_moves(
    world, routing, django_capture_on_commit_callbacks
):
    """Through real turns: "quanto custa?" after a support problem asks what the repair
    costs (it stays with support, though alone it reads as sales); a message that opens
    with "outra coisa" moves."""
    say = Say(routing["channel"], django_capture_on_commit_callbacks)
    first = say("meu sistema não abre, está dando erro")
    assert answered_by(first) == "Suporte técnico"

    follow_up = say("quanto custa?")
    assert answered_by(follow_up) == "Suporte técnico"
    assert follow_up.trace["route"]["outcome"] == "sticky"
    assert follow_up.trace["route"]["intent"] == "suporte"
    assert follow_up.trace["route"]["cue"] == "no_subject"
    assert follow_up.trace["route"]["stage"] == "none"  # no verdict was asked for
    decision = RouterDecision.objects.get(turn=follow_up)
    assert (decision.outcome, decision.cue) == ("sticky", "no_subject")

    switch = say("outra coisa, quanto custa o plano anual?")
    assert answered_by(switch) == "Vendas"
    assert switch.trace["route"]["outcome"] == "reclassified"
    assert switch.trace["route"]["intent"] == "vendas"


def test_unknown_first_message_goes_to_the_fallback_then_a_clear_intent_is_classified(
    world, routing, django_capture_on_commit_callbacks
):
    say = Say(routing["channel"], django_capture_on_commit_callbacks)
    first = say("bom dia")
    assert first.trace["route"]["outcome"] == "fallback"
    assert answered_by(first) == "Reserva"
    conversation = Conversation.objects.get(channel=routing["channel"])
    # the fallback answers, but it is no intent's agent: the next message is classified
    assert conversation.active_agent_id == routing["reserva"].pk
    assert conversation.active_intent == ""

    second = say("quanto custa o plano?")
    assert second.trace["route"]["outcome"] == "classified"
    assert answered_by(second) == "Vendas"


def test_no_match_without_fallback_answers_with_the_generic_assistant(
    world, routing, django_capture_on_commit_callbacks
):
    routing["router"].fallback_agent = None
    routing["router"].save()
    turn = Say(routing["channel"], django_capture_on_commit_callbacks)("bom dia")
    assert turn.outcome == "replied"
    assert turn.agent_version_id is None  # generic: not the channel's own agent
    decision = RouterDecision.objects.get()
    assert (decision.outcome, decision.agent_id) == ("no_match", None)


def test_decision_rows_and_trace_never_hold_the_customers_text(
    world, routing, django_capture_on_commit_callbacks
):
    secret = "meu cpf é 123.456.789-00, quanto custa o plano?"
    turn = Say(routing["channel"], django_capture_on_commit_callbacks)(secret)
    decision = RouterDecision.objects.get()
    stored = {f.name: getattr(decision, f.attname) for f in RouterDecision._meta.fields}
    assert "123.456" not in str(stored)
    assert "123.456" not in str(turn.trace)
    assert decision.latency_ms is not None and decision.stage == "local"


def test_a_routed_turn_stays_within_its_query_budget(
    world, routing, django_capture_on_commit_callbacks
):
    say = Say(routing["channel"], django_capture_on_commit_callbacks)
    say("quanto custa o plano?")
    conversation = Conversation.objects.get(channel=routing["channel"])
    message = factories.make_message(conversation, "e tem desconto à vista?")
    with CaptureQueriesContext(connection) as ctx:
        turns.run_inbound_turn(str(message.pk))
    data = [
        q["sql"] for q in ctx.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))
    ]
    routing_sql = [q for q in data if "routers_" in q]
    # channel+router (with the sticky agent's version stamp) · decision insert
    assert len(routing_sql) == 2, "\n".join(routing_sql)
    # the unrouted turn's budget (tests/conversation/test_turns.py: 12, since the open
    # cases query joined it) plus the sticky turn's one: the decision insert. The sticky
    # agent's config comes from the process cache, keyed by its published version.
    assert len(data) <= 13, "\n".join(data)
    assert Turn.objects.get(trigger_key=str(message.pk)).trace["route"]["outcome"] == "sticky"
