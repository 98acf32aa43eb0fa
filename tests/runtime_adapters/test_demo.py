"""The seeded demo: the invoice agent on its own simulator channel, the scenario run by hand
through the simulator page, and the conversation page showing the runtime's decisions."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from accounts.models import Organization
from conversation.models import (
    Agent,
    ChannelSession,
    Conversation,
    DemoInvoice,
    KnowledgeDocument,
    RuntimeAction,
)
from conversation.runtime_adapters.demo import (
    AGENT_NAME,
    CHANNEL_NAME,
    DEMO_CUSTOMER_PHONE,
    seed_demo_invoice_support,
)
from tests import factories

from .conftest import Customer, load_invoice, make_desk


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.CONVERSATION_RUNTIME_ENABLED = True


def counts(org: Organization) -> tuple[int, ...]:
    return (
        Agent.objects.filter(organization=org).count(),
        ChannelSession.objects.filter(organization=org).count(),
        DemoInvoice.objects.filter(organization=org).count(),
        KnowledgeDocument.objects.filter(organization=org).count(),
    )


def test_the_invoice_demo_is_seeded_once(db):
    org = Organization.objects.create(name="Loja Demo", slug="demo-x")
    channel = seed_demo_invoice_support(org, None)
    first = counts(org)
    assert seed_demo_invoice_support(org, None) == channel
    assert counts(org) == first == (1, 1, 2, 3)

    version = Agent.objects.get(organization=org, name=AGENT_NAME).published_version
    assert version is not None
    assert (version.runtime_profile, version.runtime_mode) == ("invoice_support", "on")
    assert channel.name == CHANNEL_NAME and channel.provider == "simulator"
    assert channel.agent is not None and channel.agent.name == AGENT_NAME
    default = DemoInvoice.objects.get(organization=org, contact__isnull=True)
    customer = DemoInvoice.objects.get(organization=org, contact__phone=DEMO_CUSTOMER_PHONE)
    assert default.detail == customer.detail == load_invoice()


def test_the_scenario_by_hand_in_the_simulator_of_the_seeded_demo(
    db, django_capture_on_commit_callbacks
):
    call_command("seed_demo", stdout=None)
    admin = get_user_model().objects.get(username="admin")
    client = Client()
    client.force_login(admin)
    channel = ChannelSession.objects.get(name=CHANNEL_NAME)
    phone = "5511955554444"  # any phone: the organization's default invoice answers it

    def send(text: str, n: int) -> None:
        data = {
            "canal": str(channel.pk),
            "telefone": phone,
            "nome": "Maria",
            "texto": text,
            "id": f"demo-{n}",
        }
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post("/simulador/enviar/", data, HTTP_HX_REQUEST="true")
        assert response.status_code == 200

    send("quero cancelar o VOD e o HBO Max", 1)
    chat = client.get("/simulador/chat/", {"canal": str(channel.pk), "telefone": phone})
    assert "Entendi que você deseja cancelar o serviço Vivo Play VOD" in chat.content.decode()

    send("sim", 2)
    chat = client.get("/simulador/chat/", {"canal": str(channel.pk), "telefone": phone})
    html = chat.content.decode()
    assert html.index("Cancelei o Vivo Play VOD") < html.index("HBO Max junto ao parceiro")
    assert list(RuntimeAction.objects.values_list("tool", flat=True)) == [
        "cancelar_vas_single",
        "vas_strategic",
    ]

    send("o que é esse tal de tamboro?", 3)
    chat = client.get("/simulador/chat/", {"canal": str(channel.pk), "telefone": phone})
    assert "plataforma de jogos educativos" in chat.content.decode()  # the demo's RAG


def test_the_conversation_page_shows_the_runtime_decision_next_to_what_was_sent(
    db, django_capture_on_commit_callbacks
):
    desk = make_desk(mode="shadow")
    user = factories.make_user(desk.org, "viewer")
    customer = Customer(desk.channel, django_capture_on_commit_callbacks)
    (sent,) = customer.say("quero cancelar o VOD e o HBO Max")
    client = Client()
    client.force_login(user)
    conversation = Conversation.objects.get()

    html = client.get(f"/conversas/{conversation.pk}/").content.decode()

    block = re.search(r'<div class="grid-2 runtime-compare".*?</div>\s*</dl>\s*</div>', html, re.S)
    assert block is not None
    shown = block.group(0)
    assert "sombra" in shown and "Pedir a confirmação do cliente" in shown and "regra 5" in shown
    assert "Teria respondido" in shown  # the runtime's decision ...
    assert "Enviado pelo orquestrador" in shown and sent.body[:40] in shown  # ... vs the sent
    # Readable by a non-developer: labels, not the trace's codes.
    for code in ("ask_confirmation", "action_request", "dry_run", "on_turn_started"):
        assert code not in shown
    summary = re.search(r'<section class="runtime-outcomes".*?</section>', html, re.S)
    assert summary is not None and "Em sombra" in summary.group(0)
