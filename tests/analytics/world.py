"""A small world whose every figure is computed by hand (see the module's table).

Now is 2026-12-15 12:00 (São Paulo); the period is 2026-12-01..2026-12-15.

conversation  channel  started  ended / how                    cases / handoffs
c1            ch1      12-10    closed                         — (AI alone)
c2            ch1      12-11    idle since 12-11               — (AI alone)
c3            ch1      12-12    open                           handoff requested_human
c4            ch2      12-14    open, recent                   handoff low_confidence; case 1
c5            ch2      12-13    open                           case 2
c6            ch1      11-20    (before the period)            —

turns (all inbound; agent = the channel's): t1 c1 12-10 routed classified/local, runtime on
handled · t2 c1 12-10 routed fallback, runtime on fell back · t3 c2 12-11 channel, runtime
shadow · t4 c3 12-12 routed classified/llm · t5 c4 12-14 routed classified/local, runtime on
handled · t6 c6 12-02 channel.

case 1 (c4, agent 2): opened 12-14 08:00 · team asks the customer 09:00 · customer answers
09:30 · team resolves 10:30. case 2 (c5, agent 2): opened 12-13 10:00 · team asks 10:30 ·
follow-up sent 11:00 · customer unresponsive 11:30 · team escalates 12:00.

model calls: t1 haiku-4-5 1000 in / 200 out / 5000 cache read / 2000 cache write = $0.005 ·
t4 sonnet-4-5 2000 in / 100 out = $0.0075 · t5 haiku-4-5 10000 in / 1000 out = $0.015 ·
t3 the offline model (free).
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

import time_machine
from django.utils import timezone

from cases.models import Case, CaseEvent, CaseFollowUp
from conversation.models import Conversation, Handoff, LlmCall, Turn
from tests import factories

NOW = timezone.make_aware(dt.datetime(2026, 12, 15, 12, 0))
FIRST, LAST = dt.date(2026, 12, 1), dt.date(2026, 12, 15)


def at(month: int, day: int, hour: int = 12, minute: int = 0) -> dt.datetime:
    return timezone.make_aware(dt.datetime(2026, month, day, hour, minute))


@dataclass
class Small:
    ch1: Any
    ch2: Any
    agent1: Any
    agent2: Any
    conversations: dict[str, Conversation]


def _conversation(channel: Any, phone: str, when: dt.datetime, **fields: Any) -> Conversation:
    with time_machine.travel(when, tick=False):
        conversation = factories.make_conversation(channel, phone=phone)
    Conversation.objects.filter(pk=conversation.pk).update(**{"last_message_at": when, **fields})
    conversation.refresh_from_db()
    return conversation


def _turn(
    conversation: Conversation, when: dt.datetime, trace: dict[str, Any], **fields: Any
) -> Turn:
    agent = conversation.channel.agent
    with time_machine.travel(when, tick=False):
        return Turn.objects.create(
            organization=conversation.organization,
            conversation=conversation,
            trigger_kind="inbound_message",
            trigger_key=str(uuid.uuid4()),
            status="done",
            outcome=fields.pop("outcome", "replied"),
            agent_version=agent.published_version if agent else None,
            trace=trace,
            **fields,
        )


def _call(turn: Turn, model: str, when: dt.datetime, **tokens: int) -> LlmCall:
    with time_machine.travel(when, tick=False):
        return LlmCall.objects.create(
            organization=turn.organization,
            conversation=turn.conversation,
            turn=turn,
            purpose="orchestrator",
            provider="anthropic" if model != "offline" else "offline",
            model=model,
            **tokens,
        )


def _event(case: Case, kind: str, when: dt.datetime, human_action: str = "") -> None:
    with time_machine.travel(when, tick=False):
        CaseEvent.objects.create(
            organization=case.organization,
            case=case,
            kind=kind,
            actor_kind="human" if kind == "human_replied" else "system",
            human_action=human_action,
        )


def _case(
    conversation: Conversation, agent: Any, opened: dt.datetime, status: str, closed: dt.datetime
) -> Case:
    with time_machine.travel(opened, tick=False):
        return Case.objects.create(
            organization=conversation.organization,
            conversation=conversation,
            lead=conversation.contact,
            agent=agent,
            status=status,
            title="Caso",
            summary="Resumo",
            blocker="Bloqueio",
            waiting_since=opened,
            opened_at=opened,
            closed_at=closed,
        )


def build(world: Any) -> Small:
    org = world.org_a
    agent1 = world.agent_a
    agent2 = factories.make_agent(org, "Vendas")
    ch1 = world.channel_a
    ch2 = factories.make_channel(org, agent=agent2)
    c1 = _conversation(ch1, "5511900000001", at(12, 10, 10), status="closed")
    c2 = _conversation(ch1, "5511900000002", at(12, 11, 9))
    c3 = _conversation(ch1, "5511900000003", at(12, 12, 9), last_message_at=at(12, 15, 11))
    c4 = _conversation(ch2, "5511900000004", at(12, 14, 7), last_message_at=at(12, 15, 11))
    c5 = _conversation(ch2, "5511900000005", at(12, 13, 9), last_message_at=at(12, 15, 11))
    c6 = _conversation(ch1, "5511900000006", at(11, 20, 9), last_message_at=at(12, 15, 11))
    # c2 idles since 12-11 09:00; the others talked this morning.

    routed = lambda outcome, stage: {  # noqa: E731
        "source": "router",
        "outcome": outcome,
        "stage": stage,
    }
    t1 = _turn(
        c1,
        at(12, 10, 10, 1),
        {"route": routed("classified", "local"), "runtime": {"mode": "on", "handled": True}},
    )
    _turn(
        c1,
        at(12, 10, 10, 5),
        {"route": routed("fallback", "none"), "runtime": {"mode": "on", "handled": False}},
    )
    t3 = _turn(
        c2,
        at(12, 11, 9, 1),
        {"route": {"source": "channel"}, "runtime": {"mode": "shadow", "handled": False}},
    )
    t4 = _turn(c3, at(12, 12, 9, 1), {"route": routed("classified", "llm")}, outcome="handoff")
    t5 = _turn(
        c4,
        at(12, 14, 7, 1),
        {"route": routed("classified", "local"), "runtime": {"mode": "on", "handled": True}},
    )
    _turn(c6, at(12, 2, 9), {"route": {"source": "channel"}})
    _turn(c6, at(11, 20, 9), {"route": {"source": "channel"}})  # before the period

    _call(
        t1,
        "claude-haiku-4-5",
        at(12, 10, 10, 1),
        input_tokens=1000,
        output_tokens=200,
        cache_read_tokens=5000,
        cache_creation_tokens=2000,
    )
    _call(t4, "claude-sonnet-4-5-20250929", at(12, 12, 9, 1), input_tokens=2000, output_tokens=100)
    _call(t5, "claude-haiku-4-5", at(12, 14, 7, 1), input_tokens=10000, output_tokens=1000)
    _call(t3, "offline", at(12, 11, 9, 1))

    with time_machine.travel(at(12, 12, 9, 2), tick=False):
        Handoff.objects.create(organization=org, conversation=c3, reason_code="requested_human")
    with time_machine.travel(at(12, 14, 7, 2), tick=False):
        Handoff.objects.create(organization=org, conversation=c4, reason_code="low_confidence")

    case1 = _case(c4, agent2, at(12, 14, 8), "resolved", at(12, 14, 10, 30))
    _event(case1, "opened", at(12, 14, 8))
    _event(case1, "human_replied", at(12, 14, 9), "need_lead_info")
    _event(case1, "lead_asked", at(12, 14, 9, 1))
    _event(case1, "lead_provided", at(12, 14, 9, 30))
    _event(case1, "human_replied", at(12, 14, 10, 30), "resolved")
    _event(case1, "resolved", at(12, 14, 10, 30))

    case2 = _case(c5, agent2, at(12, 13, 10), "escalated", at(12, 13, 12))
    _event(case2, "opened", at(12, 13, 10))
    _event(case2, "human_replied", at(12, 13, 10, 30), "need_lead_info")
    _event(case2, "lead_unresponsive", at(12, 13, 11, 30))
    _event(case2, "human_replied", at(12, 13, 12), "escalate")
    _event(case2, "escalated", at(12, 13, 12))
    with time_machine.travel(at(12, 13, 11), tick=False):
        CaseFollowUp.objects.create(
            organization=org,
            case=case2,
            conversation=c5,
            due_at=at(12, 13, 11),
            status="sent",
            fired_at=at(12, 13, 11),
        )

    # Another organization's rows in the same days never count.
    other = _conversation(world.channel_b, "5511900000009", at(12, 12, 9))
    other_turn = _turn(other, at(12, 12, 9, 1), {"route": routed("fallback", "none")})
    _call(other_turn, "claude-haiku-4-5", at(12, 12, 9, 1), input_tokens=99999)
    with time_machine.travel(at(12, 12, 9, 2), tick=False):
        Handoff.objects.create(organization=world.org_b, conversation=other, reason_code="manual")
    return Small(
        ch1=ch1,
        ch2=ch2,
        agent1=agent1,
        agent2=agent2,
        conversations={"c1": c1, "c2": c2, "c3": c3, "c4": c4, "c5": c5, "c6": c6},
    )
