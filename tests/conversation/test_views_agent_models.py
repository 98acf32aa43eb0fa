"""The agent's model is chosen from the SDK's models the organization enabled, and the
agent page warns before and after a model's end of life."""

from __future__ import annotations

import time_machine

from conversation.models import AgentVersion
from tests import factories


def _form(**overrides):
    data = {
        "prompt": "Você atende a Loja Azul.",
        "provider": "anthropic",
        "model": "claude-haiku-4-5",
        "max_steps": "4",
        "history_window": "20",
        "runtime_mode": "off",
    }
    data.update(overrides)
    return data


def test_the_model_is_a_select_of_the_sdk_models(world):
    html = world.client_for(world.admin).get("/agentes/novo/").content.decode()
    assert '<select name="model"' in html
    assert '<option value="claude-haiku-4-5" selected>' in html
    assert 'value="offline"' in html


@time_machine.travel("2026-12-10 12:00-03:00")
def test_a_model_past_its_end_of_life_cannot_be_chosen_for_a_new_agent(world):
    client = world.client_for(world.admin)
    assert 'value="claude-sonnet-4-5"' not in client.get("/agentes/novo/").content.decode()
    response = client.post("/agentes/novo/", {**_form(model="claude-sonnet-4-5"), "name": "X"})
    assert response.status_code == 200 and "model" in response.context["form"].errors


def test_the_organizations_enabled_list_limits_the_choice(world):
    world.org_a.settings = {"llm": {"enabled_models": ["claude-haiku-4-5"]}}
    world.org_a.save()
    client = world.client_for(world.admin)
    html = client.get("/agentes/novo/").content.decode()
    assert 'value="claude-haiku-4-5"' in html and 'value="claude-opus-4-6"' not in html
    refused = client.post("/agentes/novo/", {**_form(model="claude-opus-4-6"), "name": "Y"})
    assert "model" in refused.context["form"].errors
    created = client.post("/agentes/novo/", {**_form(), "name": "Z"})
    assert created.status_code == 302


def test_the_offline_provider_always_gets_the_offline_model(world):
    client = world.client_for(world.admin)
    client.post(
        "/agentes/novo/", {**_form(provider="offline", model="claude-haiku-4-5"), "name": "Off"}
    )
    assert AgentVersion.objects.get(agent__name="Off").model == "offline"
    bad = client.post("/agentes/novo/", {**_form(model="offline"), "name": "Bad"})
    assert "model" in bad.context["form"].errors


@time_machine.travel("2026-10-15 12:00-03:00")
def test_the_agent_page_warns_when_the_model_nears_its_end_of_life(world):
    agent = factories.make_agent(
        world.org_a, "Antigo", provider="anthropic", model="claude-sonnet-4-5"
    )
    html = world.client_for(world.viewer).get(f"/agentes/{agent.pk}/").content.decode()
    assert "chega ao fim de vida em 30/11/2026" in html
    offline_agent = world.client_for(world.viewer).get(f"/agentes/{world.agent_a.pk}/")
    assert 'id="agent-model-eol-' not in offline_agent.content.decode()


@time_machine.travel("2026-12-10 12:00-03:00")
def test_the_agent_page_warns_after_the_end_of_life_and_still_lets_it_be_kept(world):
    agent = factories.make_agent(
        world.org_a, "Antigo", provider="anthropic", model="claude-sonnet-4-5"
    )
    client = world.client_for(world.admin)
    html = client.get(f"/agentes/{agent.pk}/").content.decode()
    assert "chegou ao fim de vida em 30/11/2026" in html
    assert "claude-sonnet-4-5 — fim de vida desde 30/11/2026" in html  # still the selected one
    saved = client.post(f"/agentes/{agent.pk}/", _form(model="claude-sonnet-4-5", prompt="Novo"))
    assert saved.status_code == 302  # editing the prompt never forces a model change
    assert agent.versions.order_by("-number").first().model == "claude-sonnet-4-5"
