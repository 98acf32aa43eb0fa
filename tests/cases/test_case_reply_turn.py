"""The human's answer re-enters the conversation (human-cases §4.3): ``case_reply_turn``."""

from __future__ import annotations

import pytest
from django.utils import timezone

from cases import reentry, services
from cases.models import Case, CaseEvent, CaseStatus
from conversation import tasks, turns
from conversation.models import Message, Turn
from tests.cases.conftest import Script, end, open_case, outbound_bodies, tool


def answer(case, actor, action, text, capture):
    with capture(execute=True):
        return services.case_answer(case=case, actor=actor, action=action, text=text)


def test_resolved_answer_is_relayed_to_the_customer_by_a_turn_keyed_by_the_event(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = open_case(conversation)
    event = answer(
        case,
        cases_world.agent,
        "resolved",
        "Reembolso aprovado, cai em 5 dias.",
        django_capture_on_commit_callbacks,
    )

    turn = Turn.objects.get(trigger_kind="case_reply")
    assert turn.trigger_key == str(event.pk)
    assert turn.outcome == "replied"
    assert turn.trace["case_id"] == str(case.pk)
    assert outbound_bodies(conversation) == [
        "Novidades sobre “Reembolso do pedido 123”: Reembolso aprovado, cai em 5 dias."
    ]
    message = Message.objects.get(direction="outbound")
    assert (message.sender_kind, message.turn_id) == ("ai", turn.pk)
    case.refresh_from_db()
    assert case.status == CaseStatus.RESOLVED


def test_need_lead_info_is_asked_to_the_customer_and_recorded(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = open_case(conversation)
    answer(
        case,
        cases_world.agent,
        "need_lead_info",
        "o CPF do titular",
        django_capture_on_commit_callbacks,
    )

    expected = (
        "Para continuar com “Reembolso do pedido 123”, preciso de uma informação sua: "
        "o CPF do titular"
    )
    assert outbound_bodies(conversation) == [expected]
    asked = CaseEvent.objects.get(case=case, kind="lead_asked")
    assert (asked.actor_kind, asked.body, asked.metadata["sent"]) == ("agent", expected, True)
    case.refresh_from_db()
    assert case.status == CaseStatus.AWAITING_LEAD


def test_a_redelivered_case_reply_task_never_sends_twice(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = open_case(conversation)
    event = answer(
        case, cases_world.agent, "resolved", "Feito.", django_capture_on_commit_callbacks
    )

    assert turns.run_case_reply_turn(str(event.pk)) is None
    with django_capture_on_commit_callbacks(execute=True):
        tasks.run_case_reply_turn.apply(args=[str(event.pk)])

    assert Turn.objects.filter(trigger_kind="case_reply").count() == 1
    assert len(outbound_bodies(conversation)) == 1


def test_escalation_runs_no_ai_turn(conversation, cases_world, django_capture_on_commit_callbacks):
    case = open_case(conversation)
    event = answer(
        case, cases_world.agent, "escalate", "Não tenho acesso.", django_capture_on_commit_callbacks
    )

    assert reentry.load_reply(str(event.pk)) is None
    assert turns.run_case_reply_turn(str(event.pk)) is None
    assert not Turn.objects.filter(trigger_kind="case_reply").exists()
    assert not Message.objects.filter(direction="outbound", sender_kind="ai").exists()


@pytest.mark.parametrize("event_id", ["nope", "00000000-0000-0000-0000-000000000000"])
def test_an_unknown_event_ends_the_turn_quietly(db, event_id):
    assert turns.run_case_reply_turn(event_id) is None


def test_no_relay_while_a_human_owns_the_conversation(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = open_case(conversation)
    conversation.bot_silenced_until = timezone.now() + timezone.timedelta(hours=1)
    conversation.save(update_fields=["bot_silenced_until"])
    answer(case, cases_world.agent, "resolved", "Feito.", django_capture_on_commit_callbacks)

    turn = Turn.objects.get(trigger_kind="case_reply")
    assert turn.outcome == "human_owned"
    assert outbound_bodies(conversation) == []


def test_no_relay_to_a_customer_who_opted_out(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = open_case(conversation)
    services.case_answer(case=case, actor=cases_world.agent, action="resolved", text="ok")
    event = case.events.get(kind="human_replied")
    conversation.contact.opted_out_at = timezone.now()
    conversation.contact.save(update_fields=["opted_out_at"])

    turn = turns.run_case_reply_turn(str(event.pk))

    assert turn is not None and turn.outcome == "no_reply"
    assert outbound_bodies(conversation) == []


def test_a_real_model_gets_the_deterministic_reentry_block_without_relay_lines(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = open_case(conversation)
    with Script([tool("send_message", {"text": "Seu reembolso foi aprovado!"}), end()]) as model:
        answer(case, cases_world.agent, "resolved", "Aprovado.", django_capture_on_commit_callbacks)

    last = model.requests[0].messages[-1].text()
    assert (
        f"O responsável interno concluiu o caso #{case.pk} com a nota: 'Aprovado.'. Repasse "
        "essa conclusão ao lead de forma natural e encerre o assunto."
    ) in last
    assert "[RELAY]" not in last
    assert outbound_bodies(conversation) == ["Seu reembolso foi aprovado!"]


def test_need_lead_info_block_tells_the_model_to_call_provide_case_update(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    case = open_case(conversation)
    with Script([end()]) as model:
        answer(case, cases_world.agent, "need_lead_info", "CPF", django_capture_on_commit_callbacks)

    last = model.requests[0].messages[-1].text()
    assert (
        f"Para resolver o caso #{case.pk}, o responsável interno precisa que você obtenha do "
        "cliente: 'CPF'. Pergunte ao lead. Quando tiver a resposta, chame provide_case_update."
    ) in last
    asked = CaseEvent.objects.get(case=case, kind="lead_asked")
    assert asked.metadata["sent"] is False  # the model sent nothing: the timeline says so


def test_a_relay_of_a_resolved_case_that_promises_more_opens_a_case_of_its_own(
    conversation, cases_world, django_capture_on_commit_callbacks
):
    """DESIGN §10.3: only an open case of the conversation covers a promise; the resolved
    case no longer does, so the team's promise gets a case at once (no veto, no loss)."""
    case = open_case(conversation)
    answer(
        case,
        cases_world.agent,
        "resolved",
        "Nossa equipe vai te ligar amanhã para confirmar.",
        django_capture_on_commit_callbacks,
    )

    assert outbound_bodies(conversation)[-1].endswith(
        "Nossa equipe vai te ligar amanhã para confirmar."
    )
    trace = Turn.objects.get(trigger_kind="case_reply").trace
    assert "vetoes" not in trace
    fallback = Case.objects.get(pk=trace["case_autofallback"])
    assert (fallback.conversation_id, fallback.source, fallback.status) == (
        conversation.pk,
        "guardrail_autofallback",
        "awaiting_human",
    )
