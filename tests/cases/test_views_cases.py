"""The cases pages (human-cases §9): a tab of its own, the list with its polling, the detail
with the answer panel, the conversation's cases fragment and the notification settings."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import AuditLog
from cases import services
from cases.models import Case, CaseEvent, CaseNotificationSettings
from conversation.models import Turn
from tests import factories
from tests.cases.conftest import open_case


def many_cases(world, n: int, start: int = 0) -> list[Case]:
    out = []
    for i in range(start, start + n):
        conv = factories.make_conversation(world.channel_a, phone=f"55119{i:08d}")
        out.append(open_case(conv, title=f"Caso {i}"))
    return out


# --- list -----------------------------------------------------------------------------------


def test_cases_tab_is_in_the_navigation_separate_from_handoffs(cases_world):
    html = cases_world.client_for(cases_world.viewer).get("/").content.decode()
    assert 'href="/casos/"' in html and 'href="/transbordos/"' in html


def test_list_shows_open_cases_with_state_in_words_and_polls_every_60s(conversation, cases_world):
    case = open_case(conversation)
    Case.objects.filter(pk=case.pk).update(lead_unresponsive=True)

    response = cases_world.client_for(cases_world.viewer).get("/casos/")

    html = response.content.decode()
    assert response.status_code == 200
    assert case.title in html
    assert "Esperando você" in html
    assert "cliente sem resposta" in html
    assert 'hx-trigger="every 60s"' in html
    assert f'id="case-row-{case.pk}"' in html


def test_list_never_shows_another_organizations_cases(cases_world):
    foreign = open_case(factories.make_conversation(cases_world.channel_b), title="Segredo de B")

    html = cases_world.client_for(cases_world.admin).get("/casos/").content.decode()

    assert foreign.title not in html


def test_polling_returns_only_the_list_fragment(conversation, cases_world):
    case = open_case(conversation)
    response = cases_world.client_for(cases_world.viewer).get(
        "/casos/?estado=abertos", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="case-list"
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="case-list"')
    assert case.title in html and "<html" not in html


@pytest.mark.parametrize(
    ("key", "visible"),
    [("esperando-voce", "A"), ("esperando-cliente", "B"), ("resolvidos", "C")],
)
def test_filters_by_status(conversation, cases_world, key, visible):
    a = open_case(conversation, title="A")
    b = open_case(conversation, title="B")
    c = open_case(conversation, title="C")
    services.case_answer(case=b, actor=cases_world.agent, action="need_lead_info", text="CPF")
    services.case_answer(case=c, actor=cases_world.agent, action="resolved", text="ok")

    html = cases_world.client_for(cases_world.viewer).get(f"/casos/?estado={key}").content.decode()

    titles = set(re.findall(r'class="case-row-title">([ABC])<', html))
    assert titles == {visible}
    assert a


def _list_queries(client, path="/casos/") -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(path).status_code == 200
    return len(queries)


def test_the_list_runs_a_constant_number_of_queries(cases_world):
    client = cases_world.client_for(cases_world.viewer)
    many_cases(cases_world, 3)
    few = _list_queries(client)
    many_cases(cases_world, 30, start=100)
    # session, user, membership; the paginator's COUNT, the page's rows (customer and
    # channel joined), the page's fired reminders, the tabs' counts; the nav's org list.
    assert _list_queries(client) == few == 8
    assert _list_queries(client, "/casos/?page=2") == few


def test_anonymous_is_sent_to_login(db):
    from django.test import Client

    response = Client().get("/casos/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_badge_counts_cases_waiting_for_the_team(conversation, cases_world):
    open_case(conversation)
    open_case(conversation)
    html = cases_world.client_for(cases_world.viewer).get("/casos/contador/").content.decode()
    assert re.search(r'id="case-badge"[^>]*>2<', html)


# --- detail ---------------------------------------------------------------------------------


def test_detail_shows_header_what_the_ai_opened_timeline_and_the_answer_panel(
    conversation, cases_world
):
    case = open_case(conversation)

    html = cases_world.client_for(cases_world.agent).get(f"/casos/{case.pk}/").content.decode()

    assert conversation.contact.phone in html
    for text in (case.title, case.summary, case.blocker, "Linha do tempo", "Caso aberto"):
        assert text in html
    assert "esperando você" in html
    for label in ("Concluí ✓", "Preciso de info do cliente", "Não consigo → escalar"):
        assert label in html
    assert "<textarea" in html
    # The decision comes before the internal conversation in the DOM.
    assert html.index('id="case-decision"') < html.index('id="timeline-title"')
    # "Voltar aos casos" keeps the filter and points back at the case's row.
    assert f'href="/casos/?estado=abertos#case-row-{case.pk}"' in html
    assert html.index("Voltar aos casos") < html.index('id="case-detail"')


def test_opening_reading_and_going_back_change_nothing(conversation, cases_world):
    case = open_case(conversation)
    client = cases_world.client_for(cases_world.agent)
    events, turns = CaseEvent.objects.count(), Turn.objects.count()

    client.get(f"/casos/{case.pk}/?estado=esperando-voce")
    client.get(f"/casos/{case.pk}/", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="case-list")
    client.get("/casos/?estado=esperando-voce")

    assert (CaseEvent.objects.count(), Turn.objects.count()) == (events, turns)
    assert Case.objects.get(pk=case.pk).status == "awaiting_human"


def test_viewer_reads_the_case_but_gets_no_answer_buttons(conversation, cases_world):
    case = open_case(conversation)
    html = cases_world.client_for(cases_world.viewer).get(f"/casos/{case.pk}/").content.decode()
    assert case.title in html and "Concluí ✓" not in html


@pytest.mark.parametrize(
    ("action", "words"),
    [("resolved", "resolvido"), ("need_lead_info", "esperando cliente"), ("escalate", "escalado")],
)
def test_the_state_is_always_shown_in_words(conversation, cases_world, action, words):
    case = open_case(conversation)
    services.case_answer(case=case, actor=cases_world.agent, action=action, text="x")
    html = cases_world.client_for(cases_world.viewer).get(f"/casos/{case.pk}/").content.decode()
    assert re.search(rf'id="case-state">.*?{words}', html, re.S)


def test_another_organizations_case_is_404(cases_world):
    foreign = open_case(factories.make_conversation(cases_world.channel_b))
    client = cases_world.client_for(cases_world.admin)
    assert client.get(f"/casos/{foreign.pk}/").status_code == 404
    assert (
        client.post(
            f"/casos/{foreign.pk}/responder/", {"action": "resolved", "text": "x"}
        ).status_code
        == 404
    )
    assert Case.objects.get(pk=foreign.pk).status == "awaiting_human"


# --- answering ------------------------------------------------------------------------------


def test_an_agent_answers_and_is_sent_back_to_the_case(conversation, cases_world):
    case = open_case(conversation)
    response = cases_world.client_for(cases_world.agent).post(
        f"/casos/{case.pk}/responder/?estado=esperando-voce",
        {"action": "need_lead_info", "text": "O CPF do titular"},
    )

    assert response.status_code == 302
    assert response["Location"] == f"/casos/{case.pk}/?estado=esperando-voce"
    case.refresh_from_db()
    assert (case.status, case.lead_request) == ("awaiting_lead", "O CPF do titular")
    assert AuditLog.objects.filter(action="case.answer", actor=cases_world.agent).exists()


def test_a_viewer_cannot_answer(conversation, cases_world):
    case = open_case(conversation)
    response = cases_world.client_for(cases_world.viewer).post(
        f"/casos/{case.pk}/responder/", {"action": "resolved", "text": "x"}
    )
    assert response.status_code == 403
    assert Case.objects.get(pk=case.pk).status == "awaiting_human"


@pytest.mark.parametrize(
    "data", [{"action": "resolved", "text": ""}, {"action": "apagar", "text": "x"}, {"text": "x"}]
)
def test_an_invalid_answer_is_shown_again_and_changes_nothing(conversation, cases_world, data):
    case = open_case(conversation)
    response = cases_world.client_for(cases_world.agent).post(f"/casos/{case.pk}/responder/", data)
    assert response.status_code == 422
    assert Case.objects.get(pk=case.pk).status == "awaiting_human"
    assert not CaseEvent.objects.filter(kind="human_replied").exists()


def test_answering_a_closed_case_shows_a_clear_error(conversation, cases_world):
    case = open_case(conversation)
    services.case_answer(case=case, actor=cases_world.agent, action="resolved", text="ok")
    client = cases_world.client_for(cases_world.agent)

    response = client.post(
        f"/casos/{case.pk}/responder/",
        {"action": "escalate", "text": "x", "confirmed": "1"},
        follow=True,
    )

    assert "Não é possível" in response.content.decode()
    assert Case.objects.get(pk=case.pk).status == "resolved"


# --- the conversation page and the settings ------------------------------------------------


def test_the_conversation_page_loads_its_cases_fragment(conversation, cases_world):
    case = open_case(conversation)
    client = cases_world.client_for(cases_world.viewer)

    page = client.get(f"/conversas/{conversation.pk}/").content.decode()
    fragment = client.get(f"/casos/conversa/{conversation.pk}/").content.decode()

    assert f'hx-get="/casos/conversa/{conversation.pk}/"' in page
    assert case.title in fragment and f"/casos/{case.pk}/" in fragment
    other = factories.make_conversation(cases_world.channel_b)
    assert client.get(f"/casos/conversa/{other.pk}/").status_code == 404


@pytest.mark.parametrize("role", ["viewer", "agent", "manager"])
def test_only_admins_see_the_notification_settings(cases_world, role):
    client = cases_world.client_for(getattr(cases_world, role))
    assert client.get("/casos/avisos/").status_code == 403


def test_admin_saves_the_notification_settings(cases_world):
    client = cases_world.client_for(cases_world.admin)
    page = client.get("/casos/avisos/").content.decode()
    assert "O aviso não sai quando a resposta do cliente chega fora do atendimento" in page

    response = client.post(
        "/casos/avisos/",
        {
            "reminders_enabled": "on",
            "reminder_after_hours": "12",
            "reminder_count": "2",
            "whatsapp_enabled": "on",
            "whatsapp_phone": "5511955554444",
            "whatsapp_channel": str(cases_world.channel_a.pk),
        },
    )

    assert response.status_code == 302
    row = CaseNotificationSettings.objects.get(organization=cases_world.org_a)
    assert (row.reminder_after_hours, row.reminder_count, row.whatsapp_enabled) == (12, 2, True)


def test_notice_with_a_phone_but_no_channel_is_refused(cases_world):
    client = cases_world.client_for(cases_world.admin)
    response = client.post(
        "/casos/avisos/",
        {
            "reminder_after_hours": "24",
            "reminder_count": "3",
            "whatsapp_enabled": "on",
            "whatsapp_phone": "5511955554444",
        },
    )
    assert response.status_code == 200
    assert "informe o número da equipe" in response.content.decode()
    assert not CaseNotificationSettings.objects.exists()


def test_another_organizations_channel_cannot_send_the_notice(cases_world):
    client = cases_world.client_for(cases_world.admin)
    client.post(
        "/casos/avisos/",
        {
            "reminder_after_hours": "24",
            "reminder_count": "3",
            "whatsapp_enabled": "on",
            "whatsapp_phone": "5511955554444",
            "whatsapp_channel": str(cases_world.channel_b.pk),
        },
    )
    assert not CaseNotificationSettings.objects.exists()


def test_a_case_whose_contact_was_deleted_still_renders_in_list_and_detail(
    conversation, cases_world
):
    case = open_case(conversation, title="Caso sem contato")
    Case.objects.filter(pk=case.pk).update(lead=None)
    client = cases_world.client_for(cases_world.viewer)

    listing = client.get("/casos/")
    detail = client.get(f"/casos/{case.pk}/")

    assert listing.status_code == 200 and "Caso sem contato" in listing.content.decode()
    assert detail.status_code == 200 and "cliente" in detail.content.decode()
