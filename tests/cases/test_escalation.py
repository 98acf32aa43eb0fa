"""Escalating a case (human-cases §7; issue 12 item 7, issue 16 item 11): a confirmation
step on the page, and the customer is told a person takes over."""

from __future__ import annotations

import pytest
from django.utils import timezone

from cases import services
from cases.guardrail import GuardContext, run_guard_chain
from cases.guardrail.promise import assess_promise
from cases.models import Case, CaseEvent, CaseStatus
from cases.selectors import has_open_case_in_conversation
from conversation.models import Contact, Handoff, Message
from tests.cases.conftest import open_case


def test_the_first_escalate_asks_for_confirmation_and_changes_nothing(conversation, cases_world):
    case = open_case(conversation)
    client = cases_world.client_for(cases_world.agent)

    response = client.post(
        f"/casos/{case.pk}/responder/", {"action": "escalate", "text": "Só o gerente libera"}
    )

    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="case-confirm-escalate"' in html and "Sim, escalar" in html
    # The confirmation carries the text and the action; nothing happened yet.
    assert 'name="confirmed" value="1"' in html and 'value="Só o gerente libera"' in html
    assert Case.objects.get(pk=case.pk).status == CaseStatus.AWAITING_HUMAN
    assert not CaseEvent.objects.filter(kind="human_replied").exists()
    assert not Handoff.objects.exists()


def test_the_confirmed_escalate_hands_off_and_tells_the_customer(conversation, cases_world):
    case = open_case(conversation)
    client = cases_world.client_for(cases_world.agent)

    response = client.post(
        f"/casos/{case.pk}/responder/",
        {"action": "escalate", "text": "Só o gerente libera", "confirmed": "1"},
    )

    assert response.status_code == 302
    case.refresh_from_db()
    assert case.status == CaseStatus.ESCALATED
    assert Handoff.objects.filter(conversation=conversation, reason_code="caso_escalado").exists()
    told = Message.objects.get(conversation=conversation, direction="outbound")
    assert told.sender_kind == "system"
    assert told.body == services.escalated_customer_notice(case)
    assert "pessoa da nossa equipe" in told.body and case.title in told.body
    # The timeline shows what the customer was actually told.
    escalated = CaseEvent.objects.get(case=case, kind="escalated")
    assert escalated.body == told.body
    assert escalated.metadata["customer_notice_id"] == str(told.pk)


def test_resolving_needs_no_confirmation(conversation, cases_world):
    case = open_case(conversation)
    client = cases_world.client_for(cases_world.agent)
    response = client.post(f"/casos/{case.pk}/responder/", {"action": "resolved", "text": "ok"})
    assert response.status_code == 302
    assert Case.objects.get(pk=case.pk).status == CaseStatus.RESOLVED


def test_an_opted_out_customer_is_not_told(conversation, cases_world):
    case = open_case(conversation)
    Contact.objects.filter(pk=conversation.contact_id).update(opted_out_at=timezone.now())
    conversation.contact.refresh_from_db()

    services.case_answer(case=case, actor=cases_world.agent, action="escalate", text="x")

    assert not Message.objects.filter(conversation=conversation, direction="outbound").exists()
    assert Case.objects.get(pk=case.pk).status == CaseStatus.ESCALATED


def test_the_promise_gate_accepts_the_notice_because_the_case_is_open(conversation, cases_world):
    case = open_case(conversation)
    body = services.escalated_customer_notice(case)
    # The line is a promise of a person's action (the detector says so) ...
    assert assess_promise(body).promise
    # ... sent while the case is open, so the chain lets it go; without a case it would not.
    assert has_open_case_in_conversation(conversation)

    def verdict(open_case_: bool) -> bool:
        return run_guard_chain(
            GuardContext(
                body=body,
                has_open_case_for_lead=open_case_,
                case_opened_this_turn=False,
                prior_vetoes_this_turn=0,
                cases_enabled=True,
            )
        ).sends

    assert verdict(True) and not verdict(False)


@pytest.mark.parametrize("via", ["page", "api"])
def test_an_escalation_goes_through_the_same_service_from_page_and_api(
    conversation, cases_world, via
):
    import json

    case = open_case(conversation)
    client = cases_world.client_for(cases_world.agent)
    if via == "page":
        client.post(
            f"/casos/{case.pk}/responder/",
            {"action": "escalate", "text": "não dá", "confirmed": "1"},
        )
    else:
        # The API is explicit already: the action is the confirmation.
        client.post(
            f"/api/v1/ai/cases/{case.pk}/reply",
            data=json.dumps({"action": "escalate", "text": "não dá"}),
            content_type="application/json",
        )
    assert Message.objects.filter(conversation=conversation, sender_kind="system").count() == 1
