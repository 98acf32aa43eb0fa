"""Review r31: a customer's reaction is no answer (human-cases §3, §9).

A case ``awaiting_lead`` waits for the customer to answer the team's question. A reaction
(👍 on one of our messages, or taking it back) asks nothing and answers nothing — the turn
already says so (``conversation.turns.guards.reaction_only_guard``: no agent speaks). So it
must not count as the customer's answer: the follow-up is not "answered" (its attempt is
spent and the clock is not reset), and the stale-case watcher does not send the case back to
the team as "o cliente respondeu".

The reactions arrive as the recorded Cloud API updates (``tests/fixtures/channels``, pywa's
fixture) through the signed Meta webhook, so they are stored exactly as in production."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
import respx
import time_machine
from django.utils import timezone

from cases import services
from cases.models import Case, CaseEvent, CaseFollowUp, CaseStatus
from cases.selectors import NOT_AN_ANSWER_KINDS
from conversation import dispatch, turns
from conversation.models import Conversation, Message
from conversation.turns.guards import NO_ASK_KINDS
from tests import factories
from tests.cases.test_stalled_cases import customer_writes, watch
from tests.channels._media_support import GRAPH, META_NUMBER, meta_agent_channel, meta_case
from tests.channels._support import encode
from tests.channels._webhooks import meta_post

CUSTOMER = "972987654321"  # the ``from`` of the recorded updates


@pytest.fixture
def graph() -> Any:
    with respx.mock(assert_all_called=False) as mock:
        ids = itertools.count()
        mock.post(f"{GRAPH}/{META_NUMBER}/messages").mock(
            side_effect=lambda _request: httpx.Response(
                200,
                json={"messaging_product": "whatsapp", "messages": [{"id": f"wamid.O{next(ids)}"}]},
            )
        )
        yield mock


@pytest.fixture
def waiting(cases_world, graph, django_capture_on_commit_callbacks) -> Iterator[Case]:
    """A case on a Cloud API conversation whose question the AI relayed to the customer."""
    channel = meta_agent_channel(cases_world)
    conversation = factories.make_conversation(channel, phone=CUSTOMER)
    # The customer's earlier line was answered by an earlier turn (no stranded line).
    factories.make_message(
        conversation, "Quero o reembolso do pedido 123", turn=factories.make_turn(conversation)
    )
    Conversation.objects.filter(pk=conversation.pk).update(
        last_inbound_at=timezone.now() - timedelta(hours=1),
        customer_wrote_at=timezone.now() - timedelta(hours=1),
    )
    case = services.case_open(
        conversation=conversation,
        title="Reembolso do pedido 123",
        summary="O cliente quer o reembolso do pedido 123.",
        blocker="Reembolso exige o financeiro.",
        agent_id=channel.agent_id,
    )
    with django_capture_on_commit_callbacks(execute=True):
        services.case_answer(
            case=case, actor=cases_world.agent, action="need_lead_info", text="o CPF do titular."
        )
    case.refresh_from_db()
    assert case.status == CaseStatus.AWAITING_LEAD
    yield case
    dispatch.run_delayed()  # the armed follow-up's task, while the database is still open


def customer_reacts(case: Case, update: str, at: Any, capture: Any, n: int = 0) -> Message:
    """The customer's reaction (``reaction`` or ``unreaction_empty``) arrives at ``at``."""
    body = meta_case(update, message_id=f"wamid.REACT-{update}-{n}")
    with time_machine.travel(at), capture(execute=True):
        assert meta_post(case.conversation.channel, encode(body)).status_code == 200
    line = Message.objects.get(provider_message_id=f"wamid.REACT-{update}-{n}")
    # As production stores it: the customer's inbound line of kind "reaction", on the case's
    # conversation, moving the conversation's last inbound time.
    assert (line.conversation_id, line.direction, line.kind) == (
        case.conversation_id,
        "inbound",
        "reaction",
    )
    assert Conversation.objects.get(pk=case.conversation_id).last_inbound_at >= at
    return line


@pytest.mark.parametrize("update", ["reaction", "unreaction_empty"])
def test_a_reaction_does_not_answer_the_follow_up(
    waiting, update, django_capture_on_commit_callbacks
):
    follow_up = CaseFollowUp.objects.get(case=waiting, status="pending")
    customer_reacts(
        waiting, update, timezone.now() + timedelta(minutes=30), django_capture_on_commit_callbacks
    )

    with time_machine.travel(follow_up.due_at + timedelta(minutes=1)):
        turns.run_follow_up_turn(str(follow_up.pk))

    follow_up.refresh_from_db()
    waiting.refresh_from_db()
    # The customer was still asked again: an attempt is spent, the clock is not reset.
    assert follow_up.status != "answered"
    assert waiting.followup_attempts == 1
    assert CaseEvent.objects.filter(case=waiting, kind="lead_asked", metadata__attempt=1).exists()


def test_only_reactions_for_n_follow_ups_flag_the_customer_unresponsive(
    waiting, django_capture_on_commit_callbacks
):
    # The customer thumbs-up every nudge and never answers: after the N attempts the case
    # goes back to the team flagged "cliente sem resposta", as for a silent customer.
    for n in range(services.follow_up_max_attempts() + 1):
        follow_up = CaseFollowUp.objects.get(case=waiting, status="pending")
        customer_reacts(
            waiting,
            "reaction",
            follow_up.created_at + timedelta(minutes=5),
            django_capture_on_commit_callbacks,
            n=n,
        )
        with time_machine.travel(follow_up.due_at + timedelta(minutes=1)):
            turns.run_follow_up_turn(str(follow_up.pk))

    waiting.refresh_from_db()
    assert waiting.status == CaseStatus.AWAITING_HUMAN
    assert (waiting.lead_unresponsive, waiting.attention) == (True, "lead_unresponsive")


@pytest.mark.parametrize("update", ["reaction", "unreaction_empty"])
def test_a_reaction_does_not_send_the_case_back_as_answered(
    waiting, update, django_capture_on_commit_callbacks
):
    reacted_at = waiting.waiting_since + timedelta(minutes=2)
    customer_reacts(waiting, update, reacted_at, django_capture_on_commit_callbacks)

    # Well past the grace the AI has to bring an answer back: there is none to bring.
    assert watch(reacted_at + timedelta(minutes=40)) == 0

    waiting.refresh_from_db()
    assert waiting.status == CaseStatus.AWAITING_LEAD
    assert not CaseEvent.objects.filter(case=waiting, kind="stalled").exists()


def test_an_answer_after_a_reaction_goes_back_to_the_team_without_the_reaction(
    waiting, django_capture_on_commit_callbacks
):
    reacted_at = waiting.waiting_since + timedelta(minutes=2)
    customer_reacts(waiting, "reaction", reacted_at, django_capture_on_commit_callbacks)
    customer_writes(waiting, "123.456.789-00", reacted_at + timedelta(minutes=1))

    assert watch(reacted_at + timedelta(minutes=40)) == 1

    waiting.refresh_from_db()
    assert (waiting.status, waiting.attention) == (CaseStatus.AWAITING_HUMAN, "lead_answered")
    # The team reads what the customer said; the emoji is not a line of the answer.
    assert CaseEvent.objects.get(case=waiting, kind="stalled").body == "123.456.789-00"


def test_every_line_the_turn_leaves_unanswered_is_no_answer_to_a_case():
    # The turn's "asks nothing" kinds and the cases' "answers nothing" kinds are one rule.
    assert set(NO_ASK_KINDS) <= set(NOT_AN_ANSWER_KINDS)
