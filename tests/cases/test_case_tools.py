"""The case tools in the orchestrator (human-cases §4) and the resident block (§5.2)."""

from __future__ import annotations

import pytest

from cases.models import Case, CaseEvent, CaseStatus
from cases.tools import CASES_SYSTEM_BLOCK
from conversation.models import Conversation, Turn
from tests import factories
from tests.cases.conftest import (
    PHONE,
    Script,
    enable_cases,
    end,
    open_case,
    outbound_bodies,
    say,
    tool,
    tools,
)

OPEN_INPUT = {
    "title": "Liberar acesso ao painel",
    "summary": "O cliente não entra no painel desde ontem; e-mail ana@exemplo.com.",
    "blocker": "Liberar acesso exige o time de TI.",
}


def tool_names(request) -> list[str]:
    return [t.name for t in request.tools]


def test_case_tools_and_block_are_present_only_when_cases_are_enabled(
    world, django_capture_on_commit_callbacks
):
    enable_cases(world.agent_a, enabled=False)
    with Script([end(), end()]) as model:
        say(world.channel_a, "oi", "t-1", django_capture_on_commit_callbacks)
        enable_cases(world.agent_a)
        say(world.channel_a, "oi de novo", "t-2", django_capture_on_commit_callbacks)

    off, on = model.requests
    assert "open_human_case" not in tool_names(off)
    assert "provide_case_update" not in tool_names(off)
    assert CASES_SYSTEM_BLOCK not in off.system
    assert {"open_human_case", "provide_case_update"} <= set(tool_names(on))
    # The resident block lives in the cached prefix: a system block, not the messages.
    assert on.system[-1] == CASES_SYSTEM_BLOCK
    assert "prometer humano ⇒ abrir caso" in CASES_SYSTEM_BLOCK
    assert "não silencia" in CASES_SYSTEM_BLOCK


def test_resident_block_stays_with_a_long_conversation(
    cases_world, django_capture_on_commit_callbacks
):
    conversation = factories.make_conversation(cases_world.channel_a, phone=PHONE)
    for i in range(60):
        factories.make_message(conversation, f"linha antiga {i}")
    with Script([end()]) as model:
        say(cases_world.channel_a, "e agora?", "long-1", django_capture_on_commit_callbacks)

    assert CASES_SYSTEM_BLOCK in model.requests[0].system


def test_open_human_case_opens_a_case_from_the_real_conversation(
    cases_world, django_capture_on_commit_callbacks
):
    with Script(
        [
            tool("open_human_case", OPEN_INPUT),
            tool("send_message", {"text": "Abri um chamado; a equipe vai verificar."}, 1),
            end(),
        ]
    ) as model:
        say(
            cases_world.channel_a,
            "não consigo entrar no painel",
            "o-1",
            django_capture_on_commit_callbacks,
        )

    conversation = Conversation.objects.get()
    case = Case.objects.get()
    assert case.status == CaseStatus.AWAITING_HUMAN
    assert (case.organization_id, case.conversation_id, case.lead_id) == (
        cases_world.org_a.pk,
        conversation.pk,
        conversation.contact_id,
    )
    assert case.agent_id == cases_world.agent_a.pk
    assert case.title == OPEN_INPUT["title"]
    assert case.context_snapshot["messages"][-1]["body"] == "não consigo entrar no painel"
    result = model.requests[1].messages[-1].content[0]
    assert '"ok": true' in result.content and str(case.pk) in result.content
    assert outbound_bodies() == ["Abri um chamado; a equipe vai verificar."]
    turn = Turn.objects.get()
    assert turn.trace["cases_opened"] == [str(case.pk)]
    assert "vetoes" not in turn.trace


@pytest.mark.parametrize(
    "bad_input",
    [
        {**OPEN_INPUT, "organization_id": "00000000-0000-0000-0000-000000000000"},
        {**OPEN_INPUT, "lead_id": "x"},
        {**OPEN_INPUT, "context_snapshot": {"fake": True}},
        {"title": "t", "summary": "s"},
        {**OPEN_INPUT, "title": "   "},
    ],
)
def test_open_human_case_rejects_unknown_or_missing_keys_as_a_teaching_error(
    cases_world, bad_input, django_capture_on_commit_callbacks
):
    with Script([tool("open_human_case", bad_input), end()]) as model:
        say(cases_world.channel_a, "preciso de ajuda", "bad-1", django_capture_on_commit_callbacks)

    assert not Case.objects.exists()
    result = model.requests[1].messages[-1].content[0]
    assert result.is_error is True
    assert Turn.objects.get().outcome == "no_reply"


def test_provide_case_update_returns_the_lead_answer_to_the_team(
    cases_world, django_capture_on_commit_callbacks
):
    conversation = factories.make_conversation(cases_world.channel_a, phone=PHONE)
    case = open_case(conversation)
    from cases import services

    services.case_answer(case=case, actor=cases_world.agent, action="need_lead_info", text="CPF")
    with Script(
        [
            tool("provide_case_update", {"case_id": str(case.pk), "info": "123.456.789-00"}),
            tool("send_message", {"text": "Obrigado! Passei para a equipe."}, 1),
            end(),
        ]
    ) as model:
        say(
            cases_world.channel_a,
            "meu CPF é 123.456.789-00",
            "p-1",
            django_capture_on_commit_callbacks,
        )

    case.refresh_from_db()
    assert case.status == CaseStatus.AWAITING_HUMAN
    event = case.events.get(kind="lead_provided")
    assert event.body == "123.456.789-00"
    # The model saw the internal note naming the case it had to update.
    last_user = model.requests[0].messages[-1].text()
    assert f"[CASO_AGUARDANDO_CLIENTE] case_id={case.pk}" in last_user
    assert "meu CPF é 123.456.789-00" in last_user


def test_provide_case_update_on_a_case_not_waiting_for_the_lead_is_a_teaching_error(
    cases_world, django_capture_on_commit_callbacks
):
    conversation = factories.make_conversation(cases_world.channel_a, phone=PHONE)
    case = open_case(conversation)
    with Script(
        [tool("provide_case_update", {"case_id": str(case.pk), "info": "x"}), end()]
    ) as model:
        say(cases_world.channel_a, "oi", "p-2", django_capture_on_commit_callbacks)

    result = model.requests[1].messages[-1].content[0]
    assert result.is_error and "não está esperando informação do cliente" in result.content
    assert Case.objects.get().status == CaseStatus.AWAITING_HUMAN
    assert not CaseEvent.objects.filter(kind="lead_provided").exists()


def test_provide_case_update_cannot_reach_another_organizations_case(
    cases_world, django_capture_on_commit_callbacks
):
    other_conversation = factories.make_conversation(cases_world.channel_b, phone=PHONE)
    foreign = open_case(other_conversation)
    from cases import services

    services.case_answer(
        case=foreign, actor=cases_world.outsider, action="need_lead_info", text="CPF"
    )
    with Script(
        [tool("provide_case_update", {"case_id": str(foreign.pk), "info": "x"}), end()]
    ) as model:
        say(cases_world.channel_a, "oi", "p-3", django_capture_on_commit_callbacks)

    result = model.requests[1].messages[-1].content[0]
    assert result.is_error and "não encontrado" in result.content
    assert Case.objects.get(pk=foreign.pk).status == CaseStatus.AWAITING_LEAD


@pytest.mark.parametrize("case_id", ["not-a-uuid", "", "12345"])
def test_provide_case_update_with_a_bad_id_is_a_teaching_error(
    cases_world, case_id, django_capture_on_commit_callbacks
):
    with Script([tool("provide_case_update", {"case_id": case_id, "info": "x"}), end()]) as model:
        say(cases_world.channel_a, "oi", "p-4", django_capture_on_commit_callbacks)

    assert model.requests[1].messages[-1].content[0].is_error


def test_open_case_notes_reach_the_model_outside_the_cached_prefix(
    cases_world, django_capture_on_commit_callbacks
):
    conversation = factories.make_conversation(cases_world.channel_a, phone=PHONE)
    case = open_case(conversation)
    with Script([end()]) as model:
        say(cases_world.channel_a, "e o meu reembolso?", "n-1", django_capture_on_commit_callbacks)

    request = model.requests[0]
    assert not any(str(case.pk) in block for block in request.system)
    assert f"[CASO_ABERTO] case_id={case.pk}" in request.messages[-1].text()


def test_cases_of_another_conversation_are_not_in_the_notes(
    cases_world, django_capture_on_commit_callbacks
):
    other_channel = factories.make_channel(cases_world.org_a, agent=cases_world.agent_a)
    elsewhere = factories.make_conversation(other_channel, phone=PHONE)
    open_case(elsewhere)
    with Script([end()]) as model:
        say(cases_world.channel_a, "oi", "n-2", django_capture_on_commit_callbacks)

    assert "[CASO_" not in model.requests[0].messages[-1].text()


def test_too_many_cases_in_one_turn_are_refused(cases_world, django_capture_on_commit_callbacks):
    uses = [("open_human_case", {**OPEN_INPUT, "title": f"Caso {i}"}) for i in range(4)]
    with Script([tools(*uses), end()]) as model:
        say(cases_world.channel_a, "muitos pedidos", "m-1", django_capture_on_commit_callbacks)

    assert Case.objects.count() == 3
    results = model.requests[1].messages[-1].content
    assert [r.is_error for r in results] == [False, False, False, True]


def _turn_queries(world, capture, msg_id: str) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from conversation import turns

    conversation = factories.make_conversation(world.channel_a, phone=f"55119{msg_id[-4:]}0000")
    inbound = factories.make_message(conversation, "qual o horário?")
    with (
        Script([tool("send_message", {"text": "Das 8h às 20h."}), end()]),
        CaptureQueriesContext(connection) as queries,
    ):
        turns.run_inbound_turn(str(inbound.pk))
    return len(queries)


def test_cases_add_exactly_one_query_to_a_turn(world, django_capture_on_commit_callbacks):
    enable_cases(world.agent_a, enabled=False)
    without = _turn_queries(world, django_capture_on_commit_callbacks, "q-0001")
    enable_cases(world.agent_a)
    with_cases = _turn_queries(world, django_capture_on_commit_callbacks, "q-0002")
    # + the conversation's open cases (the model's notes). The send gate runs for every
    # agent and asks the database (the conversation's open case) only for a text its local
    # stages flag, so a plain answer costs it no query either way.
    assert with_cases == without + 1
