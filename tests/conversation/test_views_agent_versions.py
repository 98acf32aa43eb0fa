"""Agent versions with two admins at work and the organization's model list: a save never
silently buries a colleague's newer version, a rollback cannot publish a model the
organization switched off, and a new agent starts on a model the organization allows."""

from __future__ import annotations

import re

import time_machine

from conversation.models import Agent, AgentVersion
from tests import factories


def _form(**overrides: str) -> dict[str, str]:
    data = {
        "prompt": "Você atende a Loja Azul.",
        "provider": "offline",
        "model": "offline",
        "max_steps": "4",
        "history_window": "20",
        "runtime_mode": "off",
    }
    data.update(overrides)
    return data


def _based_on(html: str) -> str:
    match = re.search(r'name="based_on" value="(\d+)"', html)
    assert match, "the form says which version it was drawn from"
    return match.group(1)


def test_a_save_over_a_version_someone_saved_meanwhile_is_refused_not_lost(world):
    first, second = (
        world.client_for(world.admin),
        world.client_for(factories.make_user(world.org_a, "admin")),
    )
    url = f"/agentes/{world.agent_a.pk}/"
    seen_by_first = _based_on(first.get(url).content.decode())
    seen_by_second = _based_on(second.get(url).content.decode())
    assert seen_by_first == seen_by_second == "1"
    assert (
        second.post(url, _form(prompt="Texto da colega", based_on=seen_by_second)).status_code
        == 302
    )

    late = first.post(url, _form(prompt="Meu texto", based_on=seen_by_first, publish="on"))

    assert late.status_code == 200
    html = late.content.decode()
    assert "Outra pessoa salvou a versão 2" in html
    assert "Meu texto" in html  # what was typed is still on the page
    assert _based_on(html) == "2"  # saving again, knowingly, goes through
    assert AgentVersion.objects.filter(agent=world.agent_a).count() == 2
    assert Agent.objects.get(pk=world.agent_a.pk).published_version.number == 1
    again = first.post(url, _form(prompt="Meu texto", based_on="2", publish="on"))
    assert again.status_code == 302
    assert Agent.objects.get(pk=world.agent_a.pk).published_version.prompt == "Meu texto"


def test_a_rollback_cannot_publish_a_model_the_organization_switched_off(world):
    agent = factories.make_agent(
        world.org_a, "Vendas", provider="anthropic", model="claude-opus-4-6"
    )
    old = agent.published_version
    client = world.client_for(world.admin)
    client.post(
        f"/agentes/{agent.pk}/",
        _form(provider="anthropic", model="claude-haiku-4-5", publish="on"),
    )
    world.org_a.settings = {"llm": {"enabled_models": ["claude-haiku-4-5"]}}
    world.org_a.save()

    response = client.post(f"/agentes/{agent.pk}/versoes/{old.pk}/publicar/", follow=True)

    assert "claude-opus-4-6" in response.content.decode()
    assert "não está liberado" in response.content.decode()
    assert Agent.objects.get(pk=agent.pk).published_version.model == "claude-haiku-4-5"


@time_machine.travel("2026-12-10 12:00-03:00")
def test_a_rollback_cannot_publish_a_model_past_its_end_of_life(world):
    agent = factories.make_agent(
        world.org_a, "Antigo", provider="anthropic", model="claude-sonnet-4-5"
    )
    old = agent.published_version
    client = world.client_for(world.admin)
    client.post(f"/agentes/{agent.pk}/", _form(publish="on"))
    client.post(f"/agentes/{agent.pk}/versoes/{old.pk}/publicar/")
    assert Agent.objects.get(pk=agent.pk).published_version.model == "offline"
    # Publishing the offline version again (no model change) is always fine.
    current = Agent.objects.get(pk=agent.pk).published_version
    assert client.post(f"/agentes/{agent.pk}/versoes/{current.pk}/publicar/").status_code == 302


def test_a_new_agent_starts_on_a_model_the_organization_enabled(world):
    world.org_a.settings = {"llm": {"enabled_models": ["claude-sonnet-4-6"]}}
    world.org_a.save()
    client = world.client_for(world.admin)
    html = client.get("/agentes/novo/").content.decode()
    assert 'value="claude-haiku-4-5"' not in html
    assert '<option value="claude-sonnet-4-6" selected>' in html
    refused = client.post(
        "/agentes/novo/", {**_form(provider="anthropic", model="claude-haiku-4-5"), "name": "X"}
    )
    assert refused.status_code == 200 and "model" in refused.context["form"].errors
    assert not Agent.objects.filter(name="X").exists()


def test_after_a_rollback_the_form_says_it_starts_from_the_newer_version(world):
    client = world.client_for(world.admin)
    url = f"/agentes/{world.agent_a.pk}/"
    client.post(url, _form(prompt="Versão ruim", publish="on"))
    first = AgentVersion.objects.get(agent=world.agent_a, number=1)
    client.post(f"{url}versoes/{first.pk}/publicar/")

    html = client.get(url).content.decode()

    assert "O formulário parte da versão 2" in html
    assert "a que responde aos clientes é a versão 1" in html
