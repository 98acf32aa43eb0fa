"""``/api/v1/ai/cases`` (human-cases §9): list, detail with timeline, and the team's answer."""

from __future__ import annotations

import json

import pytest
from django.db import transaction
from django.test import Client

from accounts.models import AuditLog
from cases import services
from cases.models import Case, CaseEvent
from tests import factories
from tests.cases.conftest import open_case


def reply(client, case, body, **headers):
    return client.post(
        f"/api/v1/ai/cases/{case.pk}/reply",
        data=json.dumps(body),
        content_type="application/json",
        **headers,
    )


def test_list_returns_the_organizations_open_cases(conversation, cases_world):
    mine = open_case(conversation)
    open_case(factories.make_conversation(cases_world.channel_b))

    response = cases_world.client_for(cases_world.viewer).get("/api/v1/ai/cases")

    assert response.status_code == 200
    data = response.json()["data"]
    assert [c["id"] for c in data["cases"]] == [str(mine.pk)]
    item = data["cases"][0]
    assert (item["status"], item["status_label"], item["lead_unresponsive"]) == (
        "awaiting_human",
        "esperando você",
        False,
    )
    assert item["contact"]["phone"] == conversation.contact.phone
    assert data["count"] == 1


def test_list_filters_and_rejects_unknown_filters(conversation, cases_world):
    case = open_case(conversation)
    services.case_answer(case=case, actor=cases_world.agent, action="resolved", text="ok")
    client = cases_world.client_for(cases_world.viewer)

    assert client.get("/api/v1/ai/cases").json()["data"]["cases"] == []
    resolved = client.get("/api/v1/ai/cases?estado=resolvidos").json()["data"]["cases"]
    assert [c["id"] for c in resolved] == [str(case.pk)]
    bad = client.get("/api/v1/ai/cases?estado=tudo")
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "validation_error"


def test_anonymous_gets_the_401_envelope(db):
    response = Client().get("/api/v1/ai/cases")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"


def test_detail_carries_the_timeline(conversation, cases_world):
    case = open_case(conversation)
    services.case_answer(case=case, actor=cases_world.agent, action="need_lead_info", text="CPF")

    data = cases_world.client_for(cases_world.viewer).get(f"/api/v1/ai/cases/{case.pk}").json()

    detail = data["data"]
    assert (detail["title"], detail["summary"], detail["blocker"]) == (
        case.title,
        case.summary,
        case.blocker,
    )
    assert [e["kind"] for e in detail["timeline"]] == ["opened", "human_replied"]
    assert detail["timeline"][1]["human_action"] == "need_lead_info"
    assert detail["lead_request"] == "CPF"


def test_another_organizations_case_is_404_with_the_envelope(cases_world):
    foreign = open_case(factories.make_conversation(cases_world.channel_b))
    client = cases_world.client_for(cases_world.admin)

    for response in (
        client.get(f"/api/v1/ai/cases/{foreign.pk}"),
        reply(client, foreign, {"action": "resolved", "text": "x"}),
    ):
        assert response.status_code == 404
        assert response.json() == {"error": {"code": "not_found", "message": "Não encontrado."}}
    assert Case.objects.get(pk=foreign.pk).status == "awaiting_human"


def test_an_agent_answers_through_the_api_audited_with_the_request_id(conversation, cases_world):
    case = open_case(conversation)
    client = cases_world.client_for(cases_world.agent)

    response = reply(
        client,
        case,
        {"action": "resolved", "text": "Reembolso aprovado."},
        HTTP_X_REQUEST_ID="req-cases-0001",
    )

    assert response.status_code == 200
    assert response.json()["data"]["status"] == "resolved"
    assert response["X-Request-Id"] == "req-cases-0001"
    audit = AuditLog.objects.get(action="case.answer")
    assert (audit.actor, audit.request_id, audit.resource_id) == (
        cases_world.agent,
        "req-cases-0001",
        str(case.pk),
    )


def test_a_viewer_cannot_answer_through_the_api(conversation, cases_world):
    case = open_case(conversation)
    response = reply(
        cases_world.client_for(cases_world.viewer), case, {"action": "resolved", "text": "x"}
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"
    assert not CaseEvent.objects.filter(kind="human_replied").exists()


@pytest.mark.parametrize(
    "body",
    [
        {"action": "resolved"},
        {"action": "resolved", "text": ""},
        {"action": "apagar", "text": "x"},
        {"action": "resolved", "text": "x", "status": "resolved"},
        {"action": "resolved", "text": "x" * 4001},
    ],
)
def test_invalid_answers_are_422_and_change_nothing(conversation, cases_world, body):
    case = open_case(conversation)
    response = reply(cases_world.client_for(cases_world.agent), case, body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
    assert Case.objects.get(pk=case.pk).status == "awaiting_human"


def test_an_answer_the_case_cannot_take_is_409(conversation, cases_world):
    case = open_case(conversation)
    services.case_answer(case=case, actor=cases_world.agent, action="resolved", text="ok")

    response = reply(
        cases_world.client_for(cases_world.agent), case, {"action": "escalate", "text": "x"}
    )

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "illegal_transition" and "Não é possível" in error["message"]
    assert Case.objects.get(pk=case.pk).status == "resolved"


def test_the_cases_api_is_in_the_openapi_schema(cases_world):
    response = cases_world.client_for(cases_world.viewer).get(
        "/api/v1/schema/", HTTP_ACCEPT="application/json"
    )
    paths = (
        json.loads(response.content)["paths"]
        if response["Content-Type"].startswith("application/json")
        else response.content.decode()
    )
    for path in (
        "/api/v1/ai/cases",
        "/api/v1/ai/cases/{case_id}",
        "/api/v1/ai/cases/{case_id}/reply",
    ):
        assert path in paths


# --- constant queries (no N+1) -----------------------------------------------------------


def _api_queries(client, path: str) -> list[str]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        assert client.get(path).status_code == 200
    return [q["sql"] for q in queries.captured_queries]


def _many(world, n: int, start: int, assignee) -> None:
    for i in range(start, start + n):
        conv = factories.make_conversation(world.channel_a, phone=f"55119{i:08d}")
        case = open_case(conv, title=f"Caso {i}")
        services.case_answer(case=case, actor=world.agent, action="need_lead_info", text="CPF")
        services.case_assign(case=case, actor=world.agent, assignee=assignee)


def test_the_list_runs_a_constant_number_of_queries(cases_world):
    client = cases_world.client_for(cases_world.viewer)
    _many(cases_world, 2, 0, cases_world.agent)
    few = _api_queries(client, "/api/v1/ai/cases")
    _many(cases_world, 25, 100, cases_world.admin)
    many = _api_queries(client, "/api/v1/ai/cases")
    # session, user, membership (the role), the paginator's COUNT, the page's rows with the
    # customer, channel and assignee joined — whatever the page size.
    assert len(many) == len(few) == 5, "\n".join(many)
    mine = cases_world.client_for(cases_world.agent)
    assert len(_api_queries(mine, "/api/v1/ai/cases?resp=minhas&estado=esperando-cliente")) == 5


def test_the_detail_runs_a_constant_number_of_queries(conversation, cases_world):
    client = cases_world.client_for(cases_world.viewer)
    case = open_case(conversation)
    few = _api_queries(client, f"/api/v1/ai/cases/{case.pk}")
    for n in range(5):
        services.case_answer(case=case, actor=cases_world.agent, action="need_lead_info", text="?")
        with transaction.atomic():
            services.case_provide_update(case=case, conversation=conversation, info=f"r{n}")
    many = _api_queries(client, f"/api/v1/ai/cases/{case.pk}")
    # session, user, membership, the case (customer, conversation, assignee joined), the
    # timeline (actors joined) — however long the timeline.
    assert len(many) == len(few) == 5, "\n".join(many)


@pytest.mark.parametrize(
    "path",
    ["/api/v1/ai/cases/123", "/api/v1/ai/cases/", "/api/v1/ai/routers/abc", "/api/v1/ai/nada"],
)
def test_a_path_no_api_url_matches_answers_the_json_envelope(cases_world, path):
    response = cases_world.client_for(cases_world.viewer).get(path)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.json() == {"error": {"code": "not_found", "message": "Não encontrado."}}


def test_a_page_path_no_url_matches_still_answers_a_page(cases_world):
    response = cases_world.client_for(cases_world.viewer).get("/caixa/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_paging_past_the_last_page_is_empty_and_a_bad_page_is_refused(conversation, cases_world):
    open_case(conversation)
    client = cases_world.client_for(cases_world.viewer)

    first = client.get("/api/v1/ai/cases?page=1").json()["data"]
    past = client.get("/api/v1/ai/cases?page=2").json()["data"]

    assert (len(first["cases"]), first["pages"]) == (1, 1)
    assert past["cases"] == [] and past["page"] == 2  # a client paging until empty stops
    for bad in ("0", "-1", "abc", "1.5"):
        response = client.get(f"/api/v1/ai/cases?page={bad}")
        assert response.status_code == 422, bad
        assert response.json()["error"]["code"] == "validation_error"


def test_an_answer_with_an_unknown_and_an_invalid_field_names_both(conversation, cases_world):
    # One 422 lists everything to fix, as the routers API does (accounts.api_views.StrictInput):
    # before, the cases API named only the invalid field and the client learnt of the unknown
    # one (an organization_id is never read from a body, DESIGN §6) on its next try.
    case = open_case(conversation)
    client = cases_world.client_for(cases_world.agent)

    response = reply(client, case, {"action": "talvez", "text": "ok", "organization_id": "x"})

    assert response.status_code == 422
    fields = response.json()["error"]["fields"]
    assert set(fields) == {"action", "organization_id"}
    assert fields["organization_id"] == ["Campo desconhecido."]
    assert not CaseEvent.objects.filter(kind="human_replied").exists()
