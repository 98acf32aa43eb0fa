"""``/api/v1/ai/routers`` (spec Task 6): the spec's five tests, roles, other-org 404,
members PUT, audit of every mutation, and the quality loop through the API."""

from __future__ import annotations

import json

import pytest

from accounts.models import AuditLog
from routers.models import LabelledPhrase, QualityRun, Router, RouterDecision, RouterMember
from tests import factories
from tests.routers.factories import SUPORTE, VENDAS, make_router

BASE = "/api/v1/ai/routers"


def post(client, url, body, method="post"):
    return getattr(client, method)(url, data=json.dumps(body), content_type="application/json")


# --- the spec's five --------------------------------------------------------------------


def test_list_returns_the_organizations_routers_with_member_count(world, router):
    make_router(world.channel_b, [(world.agent_b, SUPORTE)], name="De fora")
    response = world.client_for(world.agent).get(BASE)
    assert response.status_code == 200
    (item,) = response.json()["data"]["routers"]
    assert item["id"] == str(router.pk)
    assert item["member_count"] == 2
    assert item["channel_id"] == str(world.channel_a.pk)
    assert item["is_active"] is True and item["fallback_agent_id"] is None


def test_a_classifier_model_the_organization_may_not_use_is_refused(world, router):
    world.org_a.settings = {"llm": {"enabled_models": ["claude-haiku-4-5"]}}
    world.org_a.save(update_fields=["settings"])
    client = world.client_for(world.admin)
    patch = post(
        client, f"{BASE}/{router.pk}", {"config": {"classifier_model": "gpt-4o"}}, method="patch"
    )
    assert patch.status_code == 422, patch.json()
    assert "classifier_model" in json.dumps(patch.json())
    router.refresh_from_db()
    assert router.config["classifier_model"] == "claude-haiku-4-5"
    # The router's current model stays choosable, and an enabled one is taken.
    ok = post(
        client,
        f"{BASE}/{router.pk}",
        {"config": {"classifier_model": "claude-haiku-4-5", "min_confidence": 0.5}},
        method="patch",
    )
    assert ok.status_code == 200, ok.json()


def test_create_takes_the_organization_from_the_membership_never_the_body(world):
    # The spec's test 2, under the API's rule that an unknown field is refused: a body
    # naming an organization is a 422 that names the field and creates nothing anywhere;
    # the same body without it creates the router in the caller's organization.
    body = {
        "name": "Atendimento",
        "channel_id": str(world.channel_a.pk),
        "fallback_agent_id": str(world.agent_a.pk),
        "organization_id": str(world.org_b.pk),
        "config": {"min_confidence": 0.7},
    }
    client = world.client_for(world.admin)
    refused = post(client, BASE, body)
    assert refused.status_code == 422, refused.json()
    assert refused.json()["error"]["fields"] == {"organization_id": ["Campo desconhecido."]}
    assert not Router.objects.exists()

    del body["organization_id"]
    response = post(client, BASE, body)
    assert response.status_code == 201, response.json()
    router = Router.objects.get(pk=response.json()["data"]["id"])
    assert router.organization_id == world.org_a.pk
    assert router.config["min_confidence"] == 0.7
    assert router.config["classifier_model"] == "claude-haiku-4-5"  # defaults fill the rest
    assert router.fallback_agent_id == world.agent_a.pk
    audit = AuditLog.objects.get(action="router.create")
    assert (audit.organization_id, audit.actor_id, audit.resource_id) == (
        world.org_a.pk,
        world.admin.pk,
        str(router.pk),
    )


@pytest.mark.parametrize(
    ("path", "method", "body", "field"),
    [
        ("", "patch", {"active": False}, "active"),
        ("", "patch", {"config": {"min_confidance": 0.2}}, "config"),
        ("", "patch", {"name": "X", "organization_id": "B"}, "organization_id"),
        (
            "/members",
            "put",
            {
                "members": [
                    {
                        "agent_id": "AGENT",
                        "intent_name": "vendas",
                        "intent_description": "Compras.",
                        "exemples": ["quanto custa?"],
                    }
                ]
            },
            "members",
        ),
        (
            "/labelled-phrases",
            "put",
            {"phrases": [{"text": "oi", "intent_name": "none", "intent": "vendas"}]},
            "phrases",
        ),
        ("/test", "post", {"message": "oi", "organization_id": "B"}, "organization_id"),
    ],
    ids=[
        "typo_in_body",
        "typo_in_config",
        "organization_id",
        "typo_in_member",
        "typo_in_phrase",
        "test_with_organization_id",
    ],
)
def test_a_field_the_api_does_not_know_is_refused_and_changes_nothing(
    world, router, path, method, body, field
):
    text = json.dumps(body).replace('"AGENT"', f'"{world.agent_a.pk}"')
    text = text.replace('"B"', f'"{world.org_b.pk}"')
    before = (Router.objects.values().get(pk=router.pk), list(RouterMember.objects.values()))
    response = getattr(world.client_for(world.admin), method)(
        f"{BASE}/{router.pk}{path}", data=text, content_type="application/json"
    )
    assert response.status_code == 422, response.json()
    error = response.json()["error"]
    assert error["code"] == "validation_error" and field in error["fields"]
    assert "Campo desconhecido." in json.dumps(error, ensure_ascii=False)
    after = (Router.objects.values().get(pk=router.pk), list(RouterMember.objects.values()))
    assert after == before
    assert not LabelledPhrase.objects.exists()
    assert not AuditLog.objects.exists()


def test_create_with_an_empty_name_is_422_in_the_error_envelope(world):
    body = {"name": "  ", "channel_id": str(world.channel_a.pk)}
    response = post(world.client_for(world.admin), BASE, body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error" and "name" in error["fields"]
    assert not Router.objects.exists()


def test_create_on_a_channel_with_an_active_router_is_409(world, router):
    body = {"name": "Outro", "channel_id": str(world.channel_a.pk)}
    response = post(world.client_for(world.admin), BASE, body)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "router_already_exists"
    assert response.json()["error"]["message"] == "Este número já tem um roteador ativo."
    assert Router.objects.count() == 1


def test_test_endpoint_classifies_without_recording_a_decision(world, router):
    response = post(
        world.client_for(world.manager), f"{BASE}/{router.pk}/test", {"message": "quanto custa?"}
    )
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["intent_name"] == "vendas"
    assert data["confidence"] >= 0.6 and data["accepted"] is True
    assert data["agent_name"] == "Vendas" and data["stage"] == "local"
    assert data["agent_id"] == str(RouterMember.objects.get(intent_name="vendas").agent_id)
    assert not RouterDecision.objects.exists()


# --- roles and tenancy --------------------------------------------------------------------


def test_viewer_is_denied_every_router_endpoint(world, router):
    client = world.client_for(world.viewer)
    assert client.get(BASE).status_code == 403
    assert client.get(f"{BASE}/{router.pk}").status_code == 403
    assert post(client, f"{BASE}/{router.pk}/test", {"message": "oi"}).status_code == 403
    response = post(client, BASE, {"name": "X", "channel_id": str(world.channel_a.pk)})
    assert response.status_code == 403 and response.json()["error"]["code"] == "forbidden"


def test_agent_reads_but_may_not_test_or_configure(world, router):
    client = world.client_for(world.agent)
    assert client.get(f"{BASE}/{router.pk}").status_code == 200
    assert post(client, f"{BASE}/{router.pk}/test", {"message": "oi"}).status_code == 403
    assert post(client, f"{BASE}/{router.pk}", {"name": "Y"}, "patch").status_code == 403


def test_manager_may_test_but_not_configure(world, router):
    client = world.client_for(world.manager)
    assert post(client, f"{BASE}/{router.pk}", {"name": "Y"}, "patch").status_code == 403
    assert client.delete(f"{BASE}/{router.pk}").status_code == 403
    router.refresh_from_db()
    assert router.name == "Atendimento"


def test_other_organizations_router_is_404(world, router):
    client = world.client_for(world.outsider)
    for response in (
        client.get(f"{BASE}/{router.pk}"),
        post(client, f"{BASE}/{router.pk}", {"name": "Roubado"}, "patch"),
        client.delete(f"{BASE}/{router.pk}"),
        post(client, f"{BASE}/{router.pk}/members", {"members": []}, "put"),
        post(client, f"{BASE}/{router.pk}/test", {"message": "oi"}),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    assert Router.objects.filter(pk=router.pk, name="Atendimento").exists()
    assert RouterMember.objects.filter(router=router).count() == 2


def test_create_refuses_a_channel_or_agent_of_another_organization(world):
    client = world.client_for(world.admin)
    response = post(client, BASE, {"name": "X", "channel_id": str(world.channel_b.pk)})
    assert response.status_code == 422 and "channel_id" in response.json()["error"]["fields"]
    response = post(
        client,
        BASE,
        {
            "name": "X",
            "channel_id": str(world.channel_a.pk),
            "fallback_agent_id": str(world.agent_b.pk),
        },
    )
    assert response.status_code == 422
    assert not Router.objects.exists()


def test_unauthenticated_request_is_401_in_the_envelope(db):
    from django.test import Client

    response = Client().get(BASE)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"


# --- detail, patch, delete, members --------------------------------------------------------


def test_detail_returns_router_and_members_by_position(world, router):
    response = world.client_for(world.agent).get(f"{BASE}/{router.pk}")
    data = response.json()["data"]
    assert data["router"]["config"] == router.config
    assert [m["intent_name"] for m in data["members"]] == ["vendas", "suporte"]
    assert [m["position"] for m in data["members"]] == [0, 1]
    assert data["members"][0]["examples"] == VENDAS[2]


def test_patch_deactivates_and_merges_config_with_an_audit_row(world, router):
    response = post(
        world.client_for(world.admin),
        f"{BASE}/{router.pk}",
        {"is_active": False, "config": {"min_confidence": 0.8}},
        "patch",
    )
    assert response.status_code == 200
    router.refresh_from_db()
    assert router.is_active is False
    assert router.config["min_confidence"] == 0.8 and router.config["sticky"] is True
    diff = AuditLog.objects.get(action="router.update").diff
    assert set(diff) == {"is_active", "config"}


def test_patch_reactivating_on_an_already_routed_channel_is_409(world, router):
    router.is_active = False
    router.save()
    make_router(world.channel_a, [], name="Novo")
    response = post(
        world.client_for(world.admin), f"{BASE}/{router.pk}", {"is_active": True}, "patch"
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "router_already_exists"


def test_delete_removes_router_and_members_but_keeps_decisions(world, router):
    RouterDecision.objects.create(organization=world.org_a, router=router, outcome="classified")
    response = world.client_for(world.admin).delete(f"{BASE}/{router.pk}")
    assert response.status_code == 200
    assert not Router.objects.exists() and not RouterMember.objects.exists()
    assert RouterDecision.objects.get().router_id is None
    assert AuditLog.objects.filter(action="router.delete", resource_id=str(router.pk)).exists()


def test_members_put_replaces_the_list_in_order(world, router):
    financeiro = factories.make_agent(world.org_a, "Financeiro")
    body = {
        "members": [
            {
                "agent_id": str(financeiro.pk),
                "intent_name": "financeiro",
                "intent_description": "Boleto, fatura, pagamento.",
                "examples": ["meu boleto venceu", "  ", "segunda via"],
            },
            {
                "agent_id": str(world.agent_a.pk),
                "intent_name": "suporte",
                "intent_description": "Problemas técnicos.",
            },
        ]
    }
    response = post(world.client_for(world.admin), f"{BASE}/{router.pk}/members", body, "put")
    assert response.status_code == 200 and response.json()["data"] == {"count": 2}
    members = list(RouterMember.objects.filter(router=router).order_by("position"))
    assert [(m.intent_name, m.position, m.agent_id) for m in members] == [
        ("financeiro", 0, financeiro.pk),
        ("suporte", 1, world.agent_a.pk),
    ]
    assert members[0].examples == ["meu boleto venceu", "segunda via"]
    audit = AuditLog.objects.get(action="router.members_replace")
    assert [m["intent"] for m in audit.diff["to"]] == ["financeiro", "suporte"]


@pytest.mark.parametrize(
    "members",
    [
        [{"agent_id": "AGENT", "intent_name": "a", "intent_description": "x"}] * 2,
        [{"agent_id": "AGENT", "intent_name": "none", "intent_description": "x"}],
        [{"agent_id": "AGENT", "intent_name": "a", "intent_description": ""}],
        [{"agent_id": "OTHER_ORG", "intent_name": "a", "intent_description": "x"}],
    ],
    ids=["duplicate_name", "reserved_none", "empty_description", "foreign_agent"],
)
def test_members_put_rejects_invalid_lists_and_keeps_the_old_one(world, router, members):
    ids = {"AGENT": str(world.agent_a.pk), "OTHER_ORG": str(world.agent_b.pk)}
    body = {"members": [{**m, "agent_id": ids[m["agent_id"]]} for m in members]}
    response = post(world.client_for(world.admin), f"{BASE}/{router.pk}/members", body, "put")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
    assert RouterMember.objects.filter(router=router).count() == 2


# --- quality loop --------------------------------------------------------------------------


def test_labelled_set_replace_and_quality_run_through_the_api(
    world, router, django_capture_on_commit_callbacks
):
    admin, client = world.client_for(world.admin), world.client_for(world.manager)
    phrases = {
        "phrases": [
            {"text": "quanto custa?", "intent_name": "vendas"},
            {"text": "qual o preço do plano anual", "intent_name": "vendas"},
            {"text": "meu sistema não abre", "intent_name": "suporte"},
            {"text": "bom dia", "intent_name": "none"},
        ]
    }
    response = post(admin, f"{BASE}/{router.pk}/labelled-phrases", phrases, "put")
    assert response.status_code == 200 and response.json()["data"] == {"count": 4}
    assert LabelledPhrase.objects.filter(router=router).count() == 4

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"{BASE}/{router.pk}/quality-runs")
    assert response.status_code == 202
    run_id = response.json()["data"]["run"]["id"]

    response = world.client_for(world.agent).get(f"{BASE}/{router.pk}/quality-runs/{run_id}")
    run = response.json()["data"]["run"]
    assert run["status"] == "done" and run["processed"] == run["total"] == 4
    assert run["results"]["total"] == 4
    assert "explanation" in run["results"]["suggestion"]
    assert QualityRun.objects.get(pk=run_id).organization_id == world.org_a.pk


def test_labelled_set_with_an_unknown_intent_is_422(world, router):
    body = {"phrases": [{"text": "oi", "intent_name": "financeiro"}]}
    response = post(
        world.client_for(world.admin), f"{BASE}/{router.pk}/labelled-phrases", body, "put"
    )
    assert response.status_code == 422
    assert not LabelledPhrase.objects.exists()


def test_quality_run_without_phrases_is_422(world, router):
    response = world.client_for(world.manager).post(f"{BASE}/{router.pk}/quality-runs")
    assert response.status_code == 422
    assert not QualityRun.objects.exists()


def test_router_endpoints_are_in_the_openapi_schema(world):
    response = world.client_for(world.admin).get("/api/v1/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    text = response.content.decode()
    for path in (
        "/api/v1/ai/routers",
        "/api/v1/ai/routers/{router_id}",
        "/api/v1/ai/routers/{router_id}/members",
        "/api/v1/ai/routers/{router_id}/test",
        "/api/v1/ai/routers/{router_id}/quality-runs",
    ):
        assert path in text
