"""The demo's router: seeded by seed_demo, idempotent, and routing the simulator's
conversations offline (routing, stickiness and a change of subject)."""

from __future__ import annotations

import io

from django.core.management import call_command
from django.test import Client

from conversation.models import AgentVersion, ChannelSession, Turn
from routers.models import LabelledPhrase, Router, RouterDecision, RouterSuggestion
from tests.conftest import simulator_post


def test_seed_demo_creates_one_router_over_three_agents_and_is_idempotent(db):
    call_command("seed_demo", stdout=io.StringIO())
    call_command("seed_demo", stdout=io.StringIO())
    router = Router.objects.get()
    assert (router.name, router.channel.name, router.fallback_agent.name) == (
        "Atendimento",
        "Simulador",
        "Suporte",
    )
    members = {m.intent_name: m.agent.name for m in router.members.select_related("agent")}
    assert members == {"vendas": "Vendas", "suporte": "Suporte", "financeiro": "Financeiro"}
    assert all(len(m.examples) >= 8 for m in router.members.all())
    assert LabelledPhrase.objects.filter(router=router).count() >= 10
    # two suggested phrases wait for review, the phone number already stripped
    texts = sorted(RouterSuggestion.objects.filter(router=router).values_list("text", flat=True))
    assert len(texts) == 2 and "vcs entregam no sábado? meu cel é [telefone]" in texts


def test_demo_simulator_shows_routing_stickiness_and_a_change_of_subject(
    db, django_capture_on_commit_callbacks
):
    call_command("seed_demo", stdout=io.StringIO())
    channel = ChannelSession.objects.get(name="Simulador")
    answered = []
    for i, text in enumerate(
        [
            "oi, quanto custa esse tênis?",
            "tem em outra cor?",
            "na verdade, meu boleto venceu, preciso da segunda via",
        ]
    ):
        with django_capture_on_commit_callbacks(execute=True):
            simulator_post(Client(), channel, text, msg_id=f"demo-{i}")
        turn = Turn.objects.latest("created_at")
        answered.append(AgentVersion.objects.get(pk=turn.agent_version_id).agent.name)
    assert answered == ["Vendas", "Vendas", "Financeiro"]
    assert list(
        RouterDecision.objects.order_by("created_at").values_list("outcome", flat=True)
    ) == [
        "classified",
        "sticky",
        "reclassified",
    ]
