"""Who answers a case (issue 16 item 1): a member of the same organization or the team;
"Minhas / Sem responsável / Todas" on the cases page and in the API; audited."""

from __future__ import annotations

import json
import re

import pytest

from accounts.models import AuditLog
from cases import services
from cases.models import Case, CaseEvent
from tests import factories
from tests.cases.conftest import open_case


def test_a_member_is_made_responsible_and_it_is_audited(conversation, cases_world):
    case = open_case(conversation)

    services.case_assign(case=case, actor=cases_world.admin, assignee=cases_world.agent)

    case.refresh_from_db()
    assert case.assigned_to_id == cases_world.agent.pk
    log = AuditLog.objects.get(action="case.assign")
    assert (log.actor_id, log.diff["assigned_to"]) == (cases_world.admin.pk, cases_world.agent.pk)
    event = CaseEvent.objects.get(case=case, kind="assigned")
    assert event.actor_user_id == cases_world.admin.pk


def test_assigning_the_same_member_again_changes_nothing(conversation, cases_world):
    case = open_case(conversation)
    services.case_assign(case=case, actor=cases_world.admin, assignee=cases_world.agent)
    services.case_assign(case=case, actor=cases_world.admin, assignee=cases_world.agent)
    assert AuditLog.objects.filter(action="case.assign").count() == 1


@pytest.mark.parametrize("who", ["outsider", "viewer"])
def test_only_an_answering_member_of_the_organization_can_be_responsible(
    conversation, cases_world, who
):
    case = open_case(conversation)
    with pytest.raises(services.InvalidCaseInput):
        services.case_assign(case=case, actor=cases_world.admin, assignee=getattr(cases_world, who))
    assert Case.objects.get(pk=case.pk).assigned_to_id is None
    assert not AuditLog.objects.filter(action="case.assign").exists()


def test_the_page_assigns_and_takes_over(conversation, cases_world):
    case = open_case(conversation)
    client = cases_world.client_for(cases_world.agent)

    response = client.post(f"/casos/{case.pk}/responsavel/", {"assignee": cases_world.admin.pk})
    assert response.status_code == 302
    assert Case.objects.get(pk=case.pk).assigned_to_id == cases_world.admin.pk

    client.post(f"/casos/{case.pk}/responsavel/", {"mine": "1"})
    assert Case.objects.get(pk=case.pk).assigned_to_id == cases_world.agent.pk

    client.post(f"/casos/{case.pk}/responsavel/", {"assignee": ""})
    assert Case.objects.get(pk=case.pk).assigned_to_id is None
    assert AuditLog.objects.filter(action="case.assign", actor=cases_world.agent).count() == 3


def test_the_page_refuses_a_user_of_another_organization(conversation, cases_world):
    case = open_case(conversation)
    client = cases_world.client_for(cases_world.agent)
    client.post(f"/casos/{case.pk}/responsavel/", {"assignee": cases_world.outsider.pk})
    assert Case.objects.get(pk=case.pk).assigned_to_id is None


def test_a_viewer_cannot_assign(conversation, cases_world):
    case = open_case(conversation)
    client = cases_world.client_for(cases_world.viewer)
    response = client.post(f"/casos/{case.pk}/responsavel/", {"mine": "1"})
    assert response.status_code == 403
    assert Case.objects.get(pk=case.pk).assigned_to_id is None


def test_another_organizations_case_cannot_be_assigned(cases_world):
    foreign = open_case(factories.make_conversation(cases_world.channel_b))
    client = cases_world.client_for(cases_world.admin)
    assert client.post(f"/casos/{foreign.pk}/responsavel/", {"mine": "1"}).status_code == 404


def titles(html: str) -> set[str]:
    return set(re.findall(r'class="case-row-title">([^<]+)<', html))


def test_mine_unassigned_and_all_on_the_cases_page(conversation, cases_world):
    mine = open_case(conversation, title="Meu")
    theirs = open_case(conversation, title="Do admin")
    open_case(conversation, title="Ninguém")
    services.case_assign(case=mine, actor=cases_world.agent, assignee=cases_world.agent)
    services.case_assign(case=theirs, actor=cases_world.agent, assignee=cases_world.admin)
    client = cases_world.client_for(cases_world.agent)

    assert titles(client.get("/casos/?resp=minhas").content.decode()) == {"Meu"}
    assert titles(client.get("/casos/?resp=sem-responsavel").content.decode()) == {"Ninguém"}
    page = client.get("/casos/").content.decode()
    assert titles(page) == {"Meu", "Do admin", "Ninguém"}
    for label in ("Minhas", "Sem responsável", "Todas"):
        assert label in page
    # The status tabs keep the assignee filter.
    mine_page = client.get("/casos/?resp=minhas").content.decode()
    assert "?estado=esperando-voce&amp;resp=minhas" in mine_page


def test_the_detail_names_the_responsible_member(conversation, cases_world):
    case = open_case(conversation)
    cases_world.agent.first_name = "Carla"
    cases_world.agent.save()
    services.case_assign(case=case, actor=cases_world.admin, assignee=cases_world.agent)

    html = cases_world.client_for(cases_world.viewer).get(f"/casos/{case.pk}/").content.decode()

    assert re.search(r'id="case-assignee">.*?Carla', html, re.S)
    # A viewer sees who, but gets no assignment form.
    assert "Definir responsável" not in html


# --- API ---------------------------------------------------------------------------------


def assign(client, case, body):
    return client.post(
        f"/api/v1/ai/cases/{case.pk}/assign", data=json.dumps(body), content_type="application/json"
    )


def test_the_api_assigns_and_lists_by_assignee(conversation, cases_world):
    case = open_case(conversation)
    open_case(conversation, title="Outro")
    client = cases_world.client_for(cases_world.agent)

    response = assign(client, case, {"assignee_id": cases_world.agent.pk})

    assert response.status_code == 200
    assert response.json()["data"]["assigned_to"]["id"] == cases_world.agent.pk
    mine = client.get("/api/v1/ai/cases?resp=minhas").json()["data"]["cases"]
    assert [c["id"] for c in mine] == [str(case.pk)]
    nobody = client.get("/api/v1/ai/cases?resp=sem-responsavel").json()["data"]["cases"]
    assert [c["title"] for c in nobody] == ["Outro"] and nobody[0]["assigned_to"] is None
    assert client.get("/api/v1/ai/cases?resp=quem").status_code == 422


@pytest.mark.parametrize("body", [{"assignee_id": 999999}, {"assignee_id": "x"}, {"quem": 1}])
def test_the_api_refuses_a_bad_assignee(conversation, cases_world, body):
    case = open_case(conversation)
    response = assign(cases_world.client_for(cases_world.agent), case, body)
    assert response.status_code in (400, 422)
    assert response.json()["error"]["code"]
    assert Case.objects.get(pk=case.pk).assigned_to_id is None


def test_the_api_refuses_a_user_of_another_organization(conversation, cases_world):
    case = open_case(conversation)
    response = assign(
        cases_world.client_for(cases_world.agent), case, {"assignee_id": cases_world.outsider.pk}
    )
    assert response.status_code == 422
    assert Case.objects.get(pk=case.pk).assigned_to_id is None


def test_a_viewer_cannot_assign_through_the_api(conversation, cases_world):
    case = open_case(conversation)
    response = assign(cases_world.client_for(cases_world.viewer), case, {"assignee_id": None})
    assert response.status_code == 403
