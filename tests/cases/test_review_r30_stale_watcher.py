"""Review r30: the stale-case watcher (human-cases §3, §9; issue 12 item 6, "no case waits
unseen").

The rule (``cases/services/stalled.py``): a case ``awaiting_lead`` whose customer answered,
with no ``provide_case_update`` following within ``CASES_LEAD_ANSWER_GRACE_MIN`` of that
answer, goes back to the team's queue with the customer's lines. The grace runs from the
answer: a customer who keeps writing after answering must not hold the case away from the
team (each new line would restart the clock for as long as they write)."""

from __future__ import annotations

from datetime import timedelta

from cases.models import Case, CaseEvent, CaseStatus
from tests.cases.conftest import open_case
from tests.cases.test_stalled_cases import ask_customer, customer_writes, watch


def test_a_customer_who_keeps_writing_after_answering_does_not_hold_the_case(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = ask_customer(
        open_case(conversation), cases_world.agent, django_capture_on_commit_callbacks
    )
    answered_at = case.waiting_since + timedelta(minutes=1)
    customer_writes(case, "meu CPF é 123.456.789-00", answered_at)
    customer_writes(case, "e aí?", answered_at + timedelta(minutes=12))
    customer_writes(case, "alguém?", answered_at + timedelta(minutes=24))

    # 26 minutes after the answer (past the 15-minute grace), 2 after the last line.
    with django_capture_on_commit_callbacks(execute=True):
        assert watch(answered_at + timedelta(minutes=26)) == 1

    case.refresh_from_db()
    assert (case.status, case.attention) == (CaseStatus.AWAITING_HUMAN, "lead_answered")
    stalled = CaseEvent.objects.get(case=case, kind="stalled")
    assert "123.456.789-00" in stalled.body


def test_a_line_within_the_grace_still_leaves_the_ai_its_time(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = ask_customer(
        open_case(conversation), cases_world.agent, django_capture_on_commit_callbacks
    )
    answered_at = case.waiting_since + timedelta(minutes=1)
    customer_writes(case, "meu CPF é 123.456.789-00", answered_at)

    assert watch(answered_at + timedelta(minutes=10)) == 0
    assert Case.objects.get(pk=case.pk).status == CaseStatus.AWAITING_LEAD
