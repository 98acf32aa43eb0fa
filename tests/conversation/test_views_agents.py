"""Agents: list, edit = a new version, publish, version history; admin writes, viewer reads."""

from __future__ import annotations

import pytest

from accounts.models import AuditLog
from conversation.models import Agent, AgentVersion
from tests import factories


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The shared world creates six users: PBKDF2 would cost seconds per test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _form(**overrides):
    data = {
        "prompt": "Você atende a Loja Azul.",
        "provider": "offline",
        "model": "offline",
        "max_steps": "5",
        "history_window": "30",
        "handoff_keywords": "falar com atendente\n\n  gerente  \nfalar com atendente",
        "handoff_tool_enabled": "on",
        "runtime_profile": "invoice_support",
        "runtime_mode": "shadow",
    }
    data.update(overrides)
    return data


def test_agent_list_shows_published_version_and_model(world):
    html = world.client_for(world.viewer).get("/agentes/").content.decode()
    assert f"/agentes/{world.agent_a.pk}/" in html
    assert "Suporte" in html and "v1" in html
    assert "Offline (determinístico)" in html
    assert world.agent_b.name not in html
    assert "Novo agente" not in html  # viewer


def test_agent_list_query_count_is_constant(world, django_assert_num_queries):
    client = world.client_for(world.admin)
    client.get("/agentes/")
    # session · user · membership · nav badge · agents (+published version, version and
    # channel counts annotated) · memberships (context processor)
    with django_assert_num_queries(6):
        client.get("/agentes/")
    for i in range(5):
        factories.make_agent(world.org_a, f"Agente {i}")
    with django_assert_num_queries(6):
        response = client.get("/agentes/")
    assert response.content.decode().count("/agentes/") >= 7


def test_agent_page_prefills_the_latest_version_and_has_a_warning_slot(world):
    response = world.client_for(world.admin).get(f"/agentes/{world.agent_a.pk}/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Você atende como Suporte." in html
    assert "falar com atendente</textarea>" in html
    assert "Salvar e publicar" in html
    assert "conversation/_agent_warnings.html" in [t.name for t in response.templates]


def test_viewer_reads_the_agent_with_a_disabled_form(world):
    html = world.client_for(world.viewer).get(f"/agentes/{world.agent_a.pk}/").content.decode()
    assert "Você atende como Suporte." in html
    assert "disabled" in html
    assert "Salvar nova versão" not in html


def test_saving_creates_a_new_unpublished_version(world):
    client = world.client_for(world.admin)
    published = world.agent_a.published_version

    response = client.post(f"/agentes/{world.agent_a.pk}/", _form())

    assert response.status_code == 302
    version = AgentVersion.objects.get(agent=world.agent_a, number=2)
    assert version.prompt == "Você atende a Loja Azul."
    assert version.max_steps == 5 and version.history_window == 30
    assert version.handoff_keywords == ["falar com atendente", "gerente"]
    assert version.handoff_tool_enabled is True and version.cases_enabled is False
    assert (version.runtime_profile, version.runtime_mode) == ("invoice_support", "shadow")
    assert version.created_by == world.admin
    assert Agent.objects.get(pk=world.agent_a.pk).published_version == published
    published.refresh_from_db()
    assert published.prompt == "Você atende como Suporte."  # versions are immutable


def test_save_and_publish_moves_the_published_pointer(world):
    client = world.client_for(world.admin)
    response = client.post(f"/agentes/{world.agent_a.pk}/", _form(publish="on", cases_enabled="on"))
    assert response.status_code == 302
    agent = Agent.objects.select_related("published_version").get(pk=world.agent_a.pk)
    assert agent.published_version.number == 2
    assert agent.published_version.cases_enabled is True
    assert AuditLog.objects.filter(action="agent.publish", actor=world.admin).exists()


def test_the_agent_form_chooses_what_a_turn_does_when_the_model_is_down(world):
    client = world.client_for(world.admin)
    html = client.get(f"/agentes/{world.agent_a.pk}/").content.decode()
    assert 'name="llm_unavailable_action"' in html
    assert "Avisar o cliente e tentar de novo mais tarde" in html
    client.post(f"/agentes/{world.agent_a.pk}/", _form(llm_unavailable_action="retry"))
    assert AgentVersion.objects.get(agent=world.agent_a, number=2).llm_unavailable_action == "retry"
    client.post(f"/agentes/{world.agent_a.pk}/", _form())  # a form without it: the default
    assert AgentVersion.objects.get(agent=world.agent_a, number=3).llm_unavailable_action == (
        "handoff"
    )


def test_invalid_version_is_not_saved(world):
    client = world.client_for(world.admin)
    response = client.post(f"/agentes/{world.agent_a.pk}/", _form(max_steps="0", prompt=""))
    assert response.status_code == 200
    assert "errorlist" in response.content.decode()
    assert AgentVersion.objects.filter(agent=world.agent_a).count() == 1


def test_publishing_an_older_version(world):
    client = world.client_for(world.admin)
    client.post(f"/agentes/{world.agent_a.pk}/", _form(publish="on"))
    first = AgentVersion.objects.get(agent=world.agent_a, number=1)

    response = client.post(f"/agentes/{world.agent_a.pk}/versoes/{first.pk}/publicar/")

    assert response.status_code == 302
    assert Agent.objects.get(pk=world.agent_a.pk).published_version_id == first.pk


@pytest.mark.parametrize("role", ["viewer", "manager"])
def test_editing_is_denied_below_admin(world, role):
    client = world.client_for(getattr(world, role))
    first = world.agent_a.published_version
    assert client.post(f"/agentes/{world.agent_a.pk}/", _form(publish="on")).status_code == 403
    assert (
        client.post(f"/agentes/{world.agent_a.pk}/versoes/{first.pk}/publicar/").status_code == 403
    )
    assert client.post("/agentes/novo/", {**_form(), "name": "X"}).status_code == 403
    assert AgentVersion.objects.filter(agent__organization=world.org_a).count() == 1


def test_agents_of_another_org_are_404(world):
    client = world.client_for(world.admin)
    theirs = world.agent_b
    version = theirs.published_version
    assert client.get(f"/agentes/{theirs.pk}/").status_code == 404
    assert client.post(f"/agentes/{theirs.pk}/", _form()).status_code == 404
    assert client.post(f"/agentes/{theirs.pk}/versoes/{version.pk}/publicar/").status_code == 404
    # Own agent, another org's version: also 404.
    response = client.post(f"/agentes/{world.agent_a.pk}/versoes/{version.pk}/publicar/")
    assert response.status_code == 404
    assert AgentVersion.objects.filter(agent=theirs).count() == 1


def test_admin_creates_an_agent(world):
    client = world.client_for(world.admin)
    assert client.get("/agentes/novo/").status_code == 200

    response = client.post("/agentes/novo/", {**_form(publish="on"), "name": "Vendas"})

    agent = Agent.objects.get(organization=world.org_a, name="Vendas")
    assert response["Location"] == f"/agentes/{agent.pk}/"
    assert agent.published_version.number == 1
    assert agent.published_version.prompt == "Você atende a Loja Azul."
