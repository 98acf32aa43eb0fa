"""Answering a case from WhatsApp (human-cases §9, issue 12 item 7): a member's staff number
answers with one of the three actions, as the member; nothing from it reaches the AI."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from accounts.models import AuditLog, Membership, Organization
from cases import services
from cases.models import (
    Case,
    CaseEvent,
    CaseNotice,
    CaseStatus,
    NoticeKind,
    NoticeStatus,
    StaffNumber,
)
from cases.staff_replies import HELP_PT, StaffCommand, command_parts, parse_command
from conversation.models import Conversation, LlmCall, Message, Turn
from tests.cases.conftest import PHONE, open_case, say

STAFF = "5511977776666"


@pytest.mark.parametrize(
    ("body", "command"),
    [
        ("#1a2b3c4d 1 Reembolso feito", StaffCommand("resolved", "Reembolso feito", "1a2b3c4d")),
        (
            "#1A2B3C4D: 2 - Qual o pedido?",
            StaffCommand("need_lead_info", "Qual o pedido?", "1a2b3c4d"),
        ),
        ("3 #1a2b3c4d só o gerente", StaffCommand("escalate", "só o gerente", "1a2b3c4d")),
        ("Concluí ✓ pronto", StaffCommand("resolved", "✓ pronto".lstrip("✓ "), "")),
        ("escalar: não consigo", StaffCommand("escalate", "não consigo", "")),
        ("info o CPF", StaffCommand("need_lead_info", "o CPF", "")),
    ],
)
def test_commands_are_parsed(body, command):
    parsed = parse_command(body)
    assert parsed is not None
    assert (parsed.action, parsed.case_ref) == (command.action, command.case_ref)
    assert parsed.text.endswith(command.text)


@pytest.mark.parametrize("body", ["", "oi, tudo bem?", "#1a2b3c4d", "1", "4 texto", "#zz 1 x"])
def test_anything_else_is_not_a_command(body):
    assert parse_command(body) is None


@given(st.text(max_size=200))
def test_parsing_never_raises_and_a_command_always_has_text(body):
    parsed = parse_command(body)
    assert parsed is None or (
        parsed.text and parsed.action in {"resolved", "need_lead_info", "escalate"}
    )


@pytest.fixture
def staff(cases_world):
    membership = Membership.objects.get(user=cases_world.agent)
    services.staff_number_set(membership=membership, actor=cases_world.admin, phone=STAFF)
    return membership


def staff_says(cases_world, text, msg_id, capture, phone=STAFF):
    return say(cases_world.channel_a, text, msg_id, capture, phone=phone)


def staff_replies(phone=STAFF) -> list[str]:
    return list(
        Message.objects.filter(conversation__contact__phone=phone, direction="outbound")
        .order_by("created_at")
        .values_list("body", flat=True)
    )


def test_a_staff_number_resolves_a_case_as_its_member(
    conversation, cases_world, staff, django_capture_on_commit_callbacks
):
    case = open_case(conversation)

    staff_says(
        cases_world,
        f"#{case.short_id} 1 Reembolso feito",
        "s-1",
        django_capture_on_commit_callbacks,
    )

    case.refresh_from_db()
    assert case.status == CaseStatus.RESOLVED
    answer = CaseEvent.objects.get(case=case, kind="human_replied")
    assert (answer.actor_user_id, answer.human_action, answer.body) == (
        cases_world.agent.pk,
        "resolved",
        "Reembolso feito",
    )
    assert AuditLog.objects.filter(action="case.answer", actor=cases_world.agent).exists()
    assert staff_replies() == [f"Caso #{case.short_id} concluído. A IA vai contar ao cliente."]
    # The customer gets the relay; the staff conversation never reached the AI.
    assert Message.objects.filter(conversation=conversation, direction="outbound").count() == 1
    staff_turn = Turn.objects.get(conversation__contact__phone=STAFF)
    assert staff_turn.trace["guard"] == "staff_case_answer"
    assert not LlmCall.objects.filter(turn=staff_turn).exists()


def noticed(case: Case, phone: str = STAFF, provider_id: str = "") -> CaseNotice:
    """The team's WhatsApp notice of ``case`` went out to ``phone`` (as notifications send it),
    with the provider's id for it when given (what a reply quotes)."""
    return CaseNotice.objects.create(
        organization=case.organization,
        case=case,
        event=case.events.get(kind="opened"),
        kind=NoticeKind.CASE_OPENED,
        phone=phone,
        status=NoticeStatus.SENT,
        sent_at=timezone.now(),
        provider_message_id=provider_id,
    )


def test_without_a_code_the_answer_goes_to_the_case_of_the_notice_it_replies_to(
    conversation, cases_world, staff, django_capture_on_commit_callbacks
):
    older, newer = open_case(conversation), open_case(conversation, title="Outro")
    noticed(older)
    noticed(newer)
    staff_says(cases_world, "2 o CPF do titular", "s-1", django_capture_on_commit_callbacks)
    newer.refresh_from_db()
    older.refresh_from_db()
    assert (newer.status, newer.lead_request) == (CaseStatus.AWAITING_LEAD, "o CPF do titular")
    assert older.status == CaseStatus.AWAITING_HUMAN


def test_without_a_code_a_noticed_case_answered_meanwhile_takes_no_other_case(
    conversation, cases_world, staff, django_capture_on_commit_callbacks
):
    # §9: the command is bound to the notice. A colleague resolved the noticed case on the
    # page; another customer's case opened since. "Feito ..." must not resolve that one.
    noticed_case = open_case(conversation)
    noticed(noticed_case)
    services.case_answer(
        case=noticed_case, actor=cases_world.admin, action="resolved", text="Pronto."
    )
    other = open_case(conversation, title="Outro cliente")

    staff_says(
        cases_world,
        "Feito, estorno do pedido 123 liberado",
        "s-1",
        django_capture_on_commit_callbacks,
    )

    other.refresh_from_db()
    assert other.status == CaseStatus.AWAITING_HUMAN
    (reply,) = staff_replies()
    assert f"#{noticed_case.short_id}" in reply and f"#{other.short_id}" in reply


def test_without_a_code_and_no_notice_to_this_number_the_member_is_asked_for_the_code(
    conversation, cases_world, staff, django_capture_on_commit_callbacks
):
    case = open_case(conversation)
    noticed(case, phone="5511955554444")  # the notices go to the team's other number
    staff_says(cases_world, "1 feito", "s-1", django_capture_on_commit_callbacks)

    (reply,) = staff_replies()
    assert f"#{case.short_id}" in reply and "código" in reply
    case.refresh_from_db()
    assert case.status == CaseStatus.AWAITING_HUMAN


def test_escalating_from_whatsapp_hands_off_and_tells_the_customer(
    conversation, cases_world, staff, django_capture_on_commit_callbacks
):
    case = open_case(conversation)
    staff_says(
        cases_world, f"#{case.short_id} 3 só o gerente", "s-1", django_capture_on_commit_callbacks
    )
    case.refresh_from_db()
    assert case.status == CaseStatus.ESCALATED
    told = Message.objects.get(conversation=conversation, direction="outbound")
    assert told.body == services.escalated_customer_notice(case)


def test_escalating_for_an_opted_out_customer_does_not_claim_they_were_told(
    conversation, cases_world, staff, django_capture_on_commit_callbacks
):
    # An opted-out contact gets no notice (services._tell_customer_escalated), so the
    # member's confirmation must not say "o cliente foi avisado".
    case = open_case(conversation)
    conversation.contact.opted_out_at = timezone.now()
    conversation.contact.save(update_fields=["opted_out_at"])

    staff_says(
        cases_world, f"#{case.short_id} 3 só o gerente", "s-1", django_capture_on_commit_callbacks
    )

    case.refresh_from_db()
    assert case.status == CaseStatus.ESCALATED
    assert not Message.objects.filter(conversation=conversation, direction="outbound").exists()
    (confirmation,) = staff_replies()
    assert f"#{case.short_id} escalado" in confirmation
    assert "não foi avisado" in confirmation


def test_a_message_that_is_no_command_gets_the_help_and_no_ai(
    conversation, cases_world, staff, django_capture_on_commit_callbacks
):
    open_case(conversation)
    staff_says(cases_world, "bom dia!", "s-1", django_capture_on_commit_callbacks)
    assert staff_replies() == [HELP_PT]
    assert not LlmCall.objects.exists()


def test_another_organizations_case_cannot_be_answered(
    cases_world, staff, django_capture_on_commit_callbacks
):
    from tests import factories

    foreign = open_case(factories.make_conversation(cases_world.channel_b))
    staff_says(
        cases_world, f"#{foreign.short_id} 1 feito", "s-1", django_capture_on_commit_callbacks
    )
    assert Case.objects.get(pk=foreign.pk).status == CaseStatus.AWAITING_HUMAN
    assert "Não encontrei" in staff_replies()[0]


def test_a_viewers_number_cannot_answer(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    membership = Membership.objects.get(user=cases_world.viewer)
    StaffNumber.objects.create(organization=cases_world.org_a, membership=membership, phone=STAFF)
    org = Organization.objects.get(pk=cases_world.org_a.pk)
    org.settings = {**org.settings, "case_staff_phones": [STAFF]}
    org.save()
    case = open_case(conversation)

    staff_says(cases_world, f"#{case.short_id} 1 feito", "s-1", django_capture_on_commit_callbacks)

    assert Case.objects.get(pk=case.pk).status == CaseStatus.AWAITING_HUMAN
    assert "não permite" in staff_replies()[0]


def test_a_customer_writing_a_command_like_text_gets_the_ai(
    conversation, cases_world, staff, django_capture_on_commit_callbacks
):
    case = open_case(conversation)
    say(cases_world.channel_a, "1 obrigado", "c-1", django_capture_on_commit_callbacks, phone=PHONE)
    assert Case.objects.get(pk=case.pk).status == CaseStatus.AWAITING_HUMAN
    turn = (
        Turn.objects.filter(conversation=Conversation.objects.get(contact__phone=PHONE))
        .order_by("-created_at")
        .first()
    )
    assert turn.trace.get("guard") != "staff_case_answer"
    assert turn.outcome == "replied"


def test_a_removed_number_is_a_customer_again(
    conversation, cases_world, staff, django_capture_on_commit_callbacks
):
    case = open_case(conversation)
    services.staff_number_set(membership=staff, actor=cases_world.admin, phone="")
    assert "case_staff_phones" not in Organization.objects.get(pk=cases_world.org_a.pk).settings

    staff_says(cases_world, f"#{case.short_id} 1 feito", "s-1", django_capture_on_commit_callbacks)

    assert Case.objects.get(pk=case.pk).status == CaseStatus.AWAITING_HUMAN


# --- the staff numbers on the settings page ---------------------------------------------


def test_an_admin_sets_a_members_number_on_the_page(cases_world):
    membership = Membership.objects.get(user=cases_world.agent)
    client = cases_world.client_for(cases_world.admin)

    response = client.post(
        "/casos/avisos/numeros/", {"membership": str(membership.pk), "phone": "+55 11 97777-6666"}
    )

    assert response.status_code == 302
    assert StaffNumber.objects.get(membership=membership).phone == STAFF
    assert AuditLog.objects.filter(action="case_staff_number.set", actor=cases_world.admin).exists()
    page = client.get("/casos/avisos/").content.decode()
    assert 'id="staff-numbers"' in page and STAFF in page


def test_a_number_is_one_members_only(cases_world, staff):
    other = Membership.objects.get(user=cases_world.manager)
    with pytest.raises(services.InvalidCaseInput):
        services.staff_number_set(membership=other, actor=cases_world.admin, phone=STAFF)
    assert not StaffNumber.objects.filter(membership=other).exists()


def test_another_organizations_member_cannot_get_a_number(cases_world):
    outsider = Membership.objects.get(user=cases_world.outsider)
    client = cases_world.client_for(cases_world.admin)
    client.post("/casos/avisos/numeros/", {"membership": str(outsider.pk), "phone": STAFF})
    assert not StaffNumber.objects.exists()


def test_only_admins_set_numbers(cases_world):
    membership = Membership.objects.get(user=cases_world.agent)
    client = cases_world.client_for(cases_world.agent)
    response = client.post(
        "/casos/avisos/numeros/", {"membership": str(membership.pk), "phone": STAFF}
    )
    assert response.status_code == 403
    assert not StaffNumber.objects.exists()


def test_the_simulator_speaks_for_no_other_member(
    conversation, cases_world, staff, django_capture_on_commit_callbacks
):
    # STAFF is the agent's staff number: in the simulator (an agent-role page) only the agent
    # may write from it. Another member posting from it would answer the case in the agent's
    # name (the case event and the audit row would name the agent).
    case = open_case(conversation)
    data = {
        "canal": str(cases_world.channel_a.pk),
        "telefone": STAFF,
        "nome": "",
        "texto": f"#{case.short_id} 3 Só o gerente libera",
        "id": "forged-1",
    }
    manager = (
        Membership.objects.exclude(user=cases_world.agent)
        .filter(organization=cases_world.org_a, role="manager")
        .first()
    )
    assert manager is not None
    with django_capture_on_commit_callbacks(execute=True):
        refused = cases_world.client_for(manager.user).post("/simulador/enviar/", data)
    assert refused.status_code == 302
    case.refresh_from_db()
    assert case.status == CaseStatus.AWAITING_HUMAN
    assert not Message.objects.filter(provider_message_id="forged-1").exists()

    with django_capture_on_commit_callbacks(execute=True):
        own = cases_world.client_for(cases_world.agent).post(
            "/simulador/enviar/", {**data, "id": "own-1"}
        )
    assert own.status_code == 302
    case.refresh_from_db()
    assert case.status == CaseStatus.ESCALATED


def test_two_commands_typed_together_answer_their_own_cases(
    conversation, cases_world, staff, django_capture_on_commit_callbacks
):
    # Lines typed within the burst window reach the turn joined, as one message with two
    # lines does: each line starting with a code is its own command.
    first, second = open_case(conversation), open_case(conversation, title="Outro")
    staff_says(
        cases_world,
        f"#{first.short_id} 1 Reembolso feito\n#{second.short_id} 2 Qual o CPF do titular?",
        "s-2",
        django_capture_on_commit_callbacks,
    )
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.status == CaseStatus.RESOLVED
    assert CaseEvent.objects.get(case=first, kind="human_replied").body == "Reembolso feito"
    assert (second.status, second.lead_request) == (
        CaseStatus.AWAITING_LEAD,
        "Qual o CPF do titular?",
    )
    (reply,) = staff_replies()
    assert f"#{first.short_id}" in reply and f"#{second.short_id}" in reply


@given(st.lists(st.text(alphabet="ab #1\n", max_size=12), max_size=6))
def test_cutting_a_burst_into_commands_loses_no_line(lines):
    text = "\n".join(lines)
    parts = command_parts(text)
    kept = [line.strip() for part in parts for line in part.splitlines() if line.strip()]
    assert kept == [line.strip() for line in text.splitlines() if line.strip()]


def test_a_reply_quoting_an_older_notice_answers_that_notices_case_through_the_turn(
    conversation, cases_world, staff, django_capture_on_commit_callbacks
):
    # §9 "comando preso àquela resposta", on the public path: the member replies to the notice
    # of the older case (the webhook's reply_to quotes its provider id); the newer notice, the
    # one a reply without a quote would go to, keeps its case waiting.
    older, newer = open_case(conversation), open_case(conversation, title="Outro")
    noticed(older, provider_id="wamid.OLDER")
    noticed(newer, provider_id="wamid.NEWER")

    with django_capture_on_commit_callbacks(execute=True):
        Client().post(
            f"/webhooks/simulator/{cases_world.channel_a.pk}",
            data=json.dumps(
                {"from": STAFF, "text": "1 estorno feito", "id": "s-q1", "reply_to": "wamid.OLDER"}
            ),
            content_type="application/json",
            HTTP_X_SIMULATOR_SECRET=cases_world.channel_a.webhook_secret,
        )

    older.refresh_from_db()
    newer.refresh_from_db()
    assert older.status == CaseStatus.RESOLVED
    assert newer.status == CaseStatus.AWAITING_HUMAN
