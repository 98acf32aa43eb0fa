"""Demo data for human cases: a support agent with cases enabled on its own simulator
channel ("Simulador — Casos"), so a person can ask the simulator for something only a
human can do (a refund, a chargeback, cancelling an order, unlocking access) and then
answer the case from the cases inbox. Idempotent."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from accounts.models import Organization
from cases.models import CaseNotificationSettings
from conversation.models import Agent, ChannelSession
from conversation.services import agent_create, channel_create

AGENT_NAME = "Suporte com casos"
CHANNEL_NAME = "Simulador — Casos"
PROMPT = (
    "Você atende clientes da Loja Demo pelo WhatsApp. Seja cordial e objetivo e consulte a "
    "base de conhecimento para dúvidas. Reembolsos, estornos, cancelamento de pedidos e "
    "liberação de acesso exigem a equipe: abra um caso com open_human_case, diga ao cliente "
    "que a equipe vai verificar e continue a conversa."
)


def seed_demo_cases(org: Organization, actor: Any) -> ChannelSession:
    """The cases demo: agent (cases on, offline model when there is no API key), its
    simulator channel and the organization's case notification settings (defaults)."""
    with transaction.atomic():
        agent = Agent.objects.filter(organization=org, name=AGENT_NAME).first()
        if agent is None:
            agent = agent_create(
                organization=org,
                name=AGENT_NAME,
                actor=actor,
                prompt=PROMPT,
                cases_enabled=True,
                handoff_keywords=["falar com atendente"],
            )
        channel = ChannelSession.objects.filter(organization=org, name=CHANNEL_NAME).first()
        if channel is None:
            channel = channel_create(
                organization=org,
                name=CHANNEL_NAME,
                provider="simulator",
                actor=actor,
                phone_number="5511900000001",
                agent=agent,
            )
        CaseNotificationSettings.objects.get_or_create(organization=org)
    return channel
