"""Attribution of conversations and handoffs to an agent once the router's pointer is gone.

The router spec says "Handoff/fechamento limpa a atribuição": a handoff and a resolve clear
``Conversation.active_agent``. The conversation was still answered by the agent the router
chose, so the outcomes page must count it (and its handoff) for that agent, never for the
channel's own agent, which never answered it."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
import time_machine

from analytics import rollups, selectors
from conversation.handoff import perform_human_handoff
from conversation.models import Conversation, Turn
from inbox.services import conversation_resolve
from tests import factories
from tests.analytics import world as small

PERIOD = selectors.Period(small.FIRST, small.LAST)


def _routed_turn(conversation: Conversation, agent: Any, when: dt.datetime) -> Turn:
    """A turn answered by ``agent`` (the router's pick), with the sticky pointer set the
    way ``routers.turn_routing`` sets it."""
    with time_machine.travel(when, tick=False):
        turn = Turn.objects.create(
            organization=conversation.organization,
            conversation=conversation,
            trigger_kind="inbound_message",
            trigger_key=str(uuid.uuid4()),
            status="done",
            outcome="replied",
            agent_version=agent.published_version,
            trace={"route": {"source": "router", "outcome": "classified", "stage": "local"}},
        )
    Conversation.objects.filter(pk=conversation.pk).update(
        active_agent_id=agent.pk, active_intent="vendas", active_agent_set_at=when
    )
    conversation.refresh_from_db()
    return turn


def _outcomes(world: Any, **filters: Any) -> selectors.Outcomes:
    with time_machine.travel(small.NOW, tick=False):
        return selectors.outcomes(world.org_a, PERIOD, **filters)


@pytest.fixture
def sales(world: Any) -> Any:
    return factories.make_agent(world.org_a, "Vendas")  # not the channel's agent


def test_a_routed_conversation_resolved_by_staff_counts_for_the_agent_that_answered(world, sales):
    conversation = small._conversation(world.channel_a, "5511900000101", small.at(12, 10, 9))
    _routed_turn(conversation, sales, small.at(12, 10, 9, 1))
    with time_machine.travel(small.at(12, 10, 10), tick=False):
        conversation_resolve(conversation=conversation, actor=world.manager)
    conversation.refresh_from_db()
    assert conversation.active_agent_id is None  # the resolve cleared the pointer

    data = _outcomes(world, agent_id=sales.pk)
    assert data.total("conversations") == 1
    assert data.total("conversations_ai_alone") == 1  # "resolvida só pela IA": by Vendas
    channel_agent = _outcomes(world, agent_id=world.agent_a.pk)
    assert channel_agent.total("conversations") == 0
    assert channel_agent.total("conversations_ai_alone") == 0


def test_a_routed_conversation_handed_off_counts_the_handoff_for_the_agent_that_answered(
    world, sales
):
    conversation = small._conversation(world.channel_a, "5511900000102", small.at(12, 11, 9))
    _routed_turn(conversation, sales, small.at(12, 11, 9, 1))
    with time_machine.travel(small.at(12, 11, 9, 2), tick=False):
        perform_human_handoff(conversation=conversation, reason_code="requested_human")
    conversation.refresh_from_db()
    assert conversation.active_agent_id is None  # the handoff cleared the pointer
    # Back with the AI later, the channel's own agent answers: the handoff stays Vendas'.
    small._turn(conversation, small.at(12, 13, 9), {"route": {"source": "channel"}})

    data = _outcomes(world, agent_id=sales.pk)
    assert data.total("conversations_handed_off") == 0  # the conversation is now Suporte's
    assert {s.key: s.n for s in data.handoff_reasons} == {"requested_human": 1}
    channel_agent = _outcomes(world, agent_id=world.agent_a.pk)
    assert channel_agent.total("conversations_handed_off") == 1
    assert {s.key: s.n for s in channel_agent.handoff_reasons} == {}


def test_a_routed_conversation_still_counts_for_its_agent_after_the_days_are_rolled_up(
    world, sales
):
    conversation = small._conversation(world.channel_a, "5511900000103", small.at(12, 12, 9))
    _routed_turn(conversation, sales, small.at(12, 12, 9, 1))
    with time_machine.travel(small.at(12, 12, 9, 2), tick=False):
        perform_human_handoff(conversation=conversation, reason_code="low_confidence")
    with time_machine.travel(small.NOW, tick=False):
        rollups.roll_up(world.org_a.pk)

    data = _outcomes(world, agent_id=sales.pk)
    assert data.total("conversations") == 1
    assert data.total("conversations_handed_off") == 1
    assert {s.key: s.n for s in data.handoff_reasons} == {"low_confidence": 1}


def test_a_conversation_with_no_turn_falls_back_to_the_channels_agent(world):
    small._conversation(world.channel_a, "5511900000104", small.at(12, 12, 9), status="closed")
    data = _outcomes(world, agent_id=world.agent_a.pk)
    assert data.total("conversations") == 1
    assert data.total("conversations_ai_alone") == 1


def test_attribution_stays_one_grouped_query_however_many_conversations(
    world, sales, django_assert_num_queries
):
    for i in range(6):
        conversation = small._conversation(
            world.channel_a, f"55119000002{i:02d}", small.at(12, 10 + i % 3, 9)
        )
        _routed_turn(conversation, sales if i % 2 else world.agent_a, small.at(12, 10, 9, 1))
        with time_machine.travel(small.at(12, 13, 9 + i), tick=False):
            perform_human_handoff(conversation=conversation, reason_code="requested_human")
    start, end = rollups.local_day_start(small.FIRST), small.NOW
    with time_machine.travel(small.NOW, tick=False):
        with django_assert_num_queries(1):
            rollups.conversation_outcomes(rollups.Aggregate(), world.org_a.pk, start, end)
        with django_assert_num_queries(5):  # turns, handoffs, follow-ups, unresponsive, calls
            agg = rollups.aggregate(world.org_a.pk, start, end)
    handoffs = {ag: bag.get("handoffs", 0) for (_d, _ch, ag), bag in agg.counts.items()}
    assert sum(n for ag, n in handoffs.items() if ag == sales.pk) == 3
    assert sum(n for ag, n in handoffs.items() if ag == world.agent_a.pk) == 3
