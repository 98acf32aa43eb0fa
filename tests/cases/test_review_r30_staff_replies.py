"""Review r30: answering a case from WhatsApp (human-cases §9; issue 12 item 7).

§9: the team answers with one of three structured actions ("Concluí", "Preciso de info do
cliente", "Não consigo → escalar") and a text, and a WhatsApp answer is "preso àquela
resposta" (bound to the notice it replies to). The staff number authenticates the member
as the page's login does (DESIGN §6: agent or above answers cases)."""

from __future__ import annotations

import pytest
from django.db import transaction

from accounts.models import Membership
from cases import services
from cases.models import Case, CaseNotice, CaseStatus
from cases.staff_replies import parse_command, staff_whatsapp_answer
from conversation.models import Conversation, Message
from tests import factories
from tests.cases.conftest import open_case, say
from tests.cases.test_staff_whatsapp import noticed as staff_notice

STAFF = "5511977776666"


@pytest.fixture
def staff(cases_world):
    membership = Membership.objects.get(user=cases_world.agent)
    services.staff_number_set(membership=membership, actor=cases_world.admin, phone=STAFF)
    return membership


def staff_says(cases_world, text, msg_id, capture):
    return say(cases_world.channel_a, text, msg_id, capture, phone=STAFF)


def staff_replies() -> list[str]:
    return list(
        Message.objects.filter(conversation__contact__phone=STAFF, direction="outbound")
        .order_by("created_at")
        .values_list("body", flat=True)
    )


def noticed(case: Case, provider_id: str, phone: str = STAFF) -> CaseNotice:
    return staff_notice(case, phone, provider_id)


def test_a_deactivated_members_number_cannot_answer(
    conversation, cases_world, staff, django_capture_on_commit_callbacks
):
    # A user whose account is deactivated cannot log in to answer on the page; the staff
    # number authenticates the same member, so it must not answer either.
    cases_world.agent.is_active = False
    cases_world.agent.save(update_fields=["is_active"])
    case = open_case(conversation)

    staff_says(cases_world, f"#{case.short_id} 1 feito", "s-1", django_capture_on_commit_callbacks)

    assert Case.objects.get(pk=case.pk).status == CaseStatus.AWAITING_HUMAN
    (reply,) = staff_replies()
    assert "não pode responder casos" in reply


@pytest.mark.parametrize(
    "body",
    [
        "1 minuto que já vejo",
        "2 minutos e eu olho isso",
        "1 min",
        "3 horas da tarde eu vejo com o gerente",
        "1 segundo",
        "2 dias pra liberar, vou cobrar",
    ],
)
def test_a_casual_reply_starting_with_a_quantity_is_no_command(body):
    # §9: the answer is one of three structured actions. "2 minutos e eu olho" is a member
    # saying they will look, not "Preciso de info do cliente: minutos e eu olho" (that text
    # would be relayed to the customer as the team's question).
    assert parse_command(body) is None


def test_a_casual_reply_to_the_notice_leaves_the_case_waiting(
    conversation, cases_world, staff, django_capture_on_commit_callbacks
):
    case = open_case(conversation)
    noticed(case, "wamid.A")

    staff_says(cases_world, "2 minutos e eu olho isso", "s-1", django_capture_on_commit_callbacks)

    case.refresh_from_db()
    assert case.status == CaseStatus.AWAITING_HUMAN
    assert not Message.objects.filter(conversation=conversation, direction="outbound").exists()


def answer(conversation_of_staff, text: str, quoted: list[str]) -> str | None:
    # As the turn loads it: the organization row carries the copy of its staff numbers.
    fresh = Conversation.objects.select_related("organization", "contact").get(
        pk=conversation_of_staff.pk
    )
    with transaction.atomic():
        return staff_whatsapp_answer(conversation=fresh, text=text, quoted=quoted)


def test_a_reply_quoting_an_older_notice_answers_that_notices_case(
    conversation, cases_world, staff
):
    # §9 "comando preso àquela resposta": the member replied (quoting) to the notice of the
    # first case; a later notice of another customer's case must not take the answer.
    first, second = open_case(conversation), open_case(conversation, title="Outro cliente")
    noticed(first, "wamid.FIRST")
    noticed(second, "wamid.SECOND")
    staff_conversation = factories.make_conversation(cases_world.channel_a, phone=STAFF)

    reply = answer(staff_conversation, "1 estorno feito", ["wamid.FIRST"])

    first.refresh_from_db()
    second.refresh_from_db()
    assert first.status == CaseStatus.RESOLVED
    assert second.status == CaseStatus.AWAITING_HUMAN
    assert reply is not None and f"#{first.short_id}" in reply


def test_a_reply_quoting_the_notice_of_a_closed_case_answers_no_other_case(
    conversation, cases_world, staff
):
    closed, waiting = open_case(conversation), open_case(conversation, title="Outro cliente")
    noticed(closed, "wamid.CLOSED")
    noticed(waiting, "wamid.WAITING")
    services.case_answer(case=closed, actor=cases_world.admin, action="resolved", text="Pronto.")
    staff_conversation = factories.make_conversation(cases_world.channel_a, phone=STAFF)

    reply = answer(staff_conversation, "feito, liberei", ["wamid.CLOSED"])

    waiting.refresh_from_db()
    assert waiting.status == CaseStatus.AWAITING_HUMAN
    assert reply is not None and f"#{closed.short_id}" in reply


def test_a_waha_bare_quote_id_finds_the_notice_sent_with_a_serialized_id(
    conversation, cases_world, staff
):
    # WAHA quotes a bare key id ("3EB0...") of a message its send answered with the
    # serialized "true_<chat>_3EB0..." (as ``Message.quoted_message`` matches).
    first, second = open_case(conversation), open_case(conversation, title="Outro cliente")
    noticed(first, f"true_{STAFF}@c.us_3EB0AAA")
    noticed(second, f"true_{STAFF}@c.us_3EB0BBB")
    staff_conversation = factories.make_conversation(cases_world.channel_a, phone=STAFF)

    answer(staff_conversation, "2 qual o CPF?", ["3EB0AAA"])

    first.refresh_from_db()
    assert (first.status, first.lead_request) == (CaseStatus.AWAITING_LEAD, "qual o CPF?")
    assert Case.objects.get(pk=second.pk).status == CaseStatus.AWAITING_HUMAN


def test_a_longer_code_finds_the_case_as_the_help_asks(
    conversation, cases_world, staff, django_capture_on_commit_callbacks
):
    # The member is told "envie mais caracteres" when a code fits two cases: a code longer
    # than the eight characters the notice prints must still find the case (PostgreSQL
    # compares the id's text form, with its hyphens).
    case = open_case(conversation)
    longer = case.pk.hex[:14]

    staff_says(
        cases_world, f"#{longer} 1 Reembolso feito", "s-1", django_capture_on_commit_callbacks
    )

    assert Case.objects.get(pk=case.pk).status == CaseStatus.RESOLVED
