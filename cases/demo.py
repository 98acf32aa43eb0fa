"""Demo data for human cases: a support agent with cases enabled on its own simulator
channel ("Simulador — Casos"), so a person can ask the simulator for something only a
human can do (a refund, a chargeback, cancelling an order, unlocking access) and then
answer the case from the cases inbox. Idempotent."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from accounts.models import Organization
from cases.models import CaseNotificationSettings
from conversation.models import ChannelSession
from conversation.runtime_adapters.demo import seed_demo_agent_channel

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
        channel = seed_demo_agent_channel(
            org,
            actor,
            agent_name=AGENT_NAME,
            channel_name=CHANNEL_NAME,
            phone_number="5511900000001",
            prompt=PROMPT,
            cases_enabled=True,
            handoff_keywords=["falar com atendente"],
        )
        CaseNotificationSettings.objects.get_or_create(organization=org)
    return channel
