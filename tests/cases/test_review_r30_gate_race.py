"""A case closed between the gate's check and the send (review r30).

Oracle: human-cases §6, "Invariante garantida: o lead nunca recebe uma promessa de humano
sem que exista um caso aberto correspondente", and DESIGN §10.3, "A promise is covered only
by an open case of the same conversation." The promise below is §6's own example ("vou
verificar com a equipe"). The case is closed after the gate looked and before the turn's
finish writes the outbox row: what the customer receives must still be backed by an open
case of the conversation when it is written.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from cases import promise_gate
from cases import tools as case_tools
from cases.models import OPEN_STATUSES, Case, CaseSource, CaseStatus
from conversation.models import Message
from tests import factories
from tests.cases.conftest import PHONE, Script, end, open_case, say, tool

PROMISE = "Vou verificar com a equipe e te retorno."


def _close_after_the_check(monkeypatch: Any, case: Case) -> None:
    """The team resolves ``case`` right after the gate saw it open (the decide step holds
    no lock, DESIGN §5)."""
    real = promise_gate.selectors.has_open_case_in_conversation

    def check_then_close(conversation: Any) -> bool:
        seen = real(conversation)
        Case.objects.filter(pk=case.pk).update(status=CaseStatus.RESOLVED, closed_at=timezone.now())
        return seen

    monkeypatch.setattr(promise_gate.selectors, "has_open_case_in_conversation", check_then_close)


def test_a_promise_covered_by_a_case_closed_before_the_send_is_never_sent_unbacked(
    cases_world, django_capture_on_commit_callbacks, monkeypatch
):
    conversation = factories.make_conversation(cases_world.channel_a, phone=PHONE)
    case = open_case(conversation)
    _close_after_the_check(monkeypatch, case)
    with Script([tool("send_message", {"text": PROMISE}), end()]):
        say(cases_world.channel_a, "novidades?", "race-1", django_capture_on_commit_callbacks)

    sent = list(
        Message.objects.filter(direction="outbound", sender_kind="ai").values_list(
            "body", flat=True
        )
    )
    if PROMISE in sent:
        assert Case.objects.filter(conversation=conversation, status__in=OPEN_STATUSES).exists(), (
            "the promise went out with no open case of the conversation"
        )


def test_a_promise_covered_by_the_case_of_this_turn_closed_before_the_send_stays_backed(
    cases_world, django_capture_on_commit_callbacks, monkeypatch
):
    """The case the model opened in this turn is written when the tool runs (the turn's
    docstring); the team may close it before the finish writes the promise."""
    real_open = case_tools.services.case_open

    def open_then_team_closes(**kwargs: Any) -> Case:
        case = real_open(**kwargs)
        if kwargs.get("source") != CaseSource.AGENT:
            return case  # only the model's own case is closed by the team here
        Case.objects.filter(pk=case.pk).update(status=CaseStatus.RESOLVED, closed_at=timezone.now())
        return case

    opened = {
        "title": "Liberar acesso",
        "summary": "O cliente pediu.",
        "blocker": "Exige a equipe.",
    }
    monkeypatch.setattr(case_tools.services, "case_open", open_then_team_closes)
    with Script([tool("open_human_case", opened), tool("send_message", {"text": PROMISE}, 1)]):
        say(cases_world.channel_a, "meu acesso caiu", "race-2", django_capture_on_commit_callbacks)

    conversation = Case.objects.earliest("opened_at").conversation
    sent = list(
        Message.objects.filter(direction="outbound", sender_kind="ai").values_list(
            "body", flat=True
        )
    )
    if PROMISE in sent:
        assert Case.objects.filter(conversation=conversation, status__in=OPEN_STATUSES).exists(), (
            "the promise went out with no open case of the conversation"
        )
