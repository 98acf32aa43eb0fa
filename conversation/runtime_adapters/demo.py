"""The seeded demo of the conversation runtime: an invoice-support agent on its own
simulator channel, a demo invoice for a demo customer and as the organization's default
(so any phone typed into the simulator gets one), and knowledge about the invoice's
services for the runtime's RAG answers. Idempotent."""

from __future__ import annotations

from typing import Any

from accounts.models import Organization
from conversation.models import Agent, ChannelSession, DemoInvoice, KnowledgeDocument
from conversation.services import agent_create, channel_create, knowledge_document_save

from .invoices import demo_invoice_detail, demo_invoice_save

AGENT_NAME = "Atendimento de fatura"
CHANNEL_NAME = "Simulador — Fatura"
CHANNEL_PHONE = "5511900000001"
# Writes from the invoice's first line (final 4321).
DEMO_CUSTOMER_PHONE = "5511987654321"
INVOICE_PROMPT = (
    "Você atende clientes de telefonia pelo WhatsApp sobre a fatura: explica cobranças, "
    "tira dúvidas sobre os serviços e encaminha cancelamentos. Seja cordial e objetivo, "
    "em português do Brasil. Nunca confirme um cancelamento que não foi executado. "
    "Se o cliente pedir um atendente, passe a conversa para a equipe."
)
INVOICE_KNOWLEDGE = [
    (
        "Tamboro",
        "Tamboro é uma plataforma de jogos educativos para crianças, com atividades de "
        "matemática e leitura. É um serviço avulso cobrado por mês na fatura.",
    ),
    (
        "Aya Ensina",
        "Aya Ensina é um serviço de cursos rápidos pelo celular (idiomas, finanças e "
        "tecnologia), cobrado por mês como serviço avulso.",
    ),
    (
        "Vivo Play VOD",
        "Vivo Play VOD é o serviço de filmes e séries sob demanda: cada título alugado ou o "
        "pacote mensal aparece na seção de serviços avulsos da fatura.",
    ),
]


def seed_demo_agent_channel(
    org: Organization,
    actor: Any,
    *,
    agent_name: str,
    channel_name: str,
    phone_number: str,
    **agent_fields: Any,
) -> ChannelSession:
    """A demo agent on its own simulator channel, each found by name or created (the agent
    with ``agent_fields``). Every demo that seeds one uses this (the cases demo too)."""
    agent = Agent.objects.filter(organization=org, name=agent_name).first()
    if agent is None:
        agent = agent_create(organization=org, name=agent_name, actor=actor, **agent_fields)
    channel = ChannelSession.objects.filter(organization=org, name=channel_name).first()
    if channel is None:
        channel = channel_create(
            organization=org,
            name=channel_name,
            provider="simulator",
            actor=actor,
            phone_number=phone_number,
            agent=agent,
        )
    return channel


def seed_demo_invoice_support(org: Organization, actor: Any) -> ChannelSession:
    channel = seed_demo_agent_channel(
        org,
        actor,
        agent_name=AGENT_NAME,
        channel_name=CHANNEL_NAME,
        phone_number=CHANNEL_PHONE,
        prompt=INVOICE_PROMPT,
        runtime_profile="invoice_support",
        runtime_mode="on",
        handoff_keywords=["falar com atendente", "quero um humano"],
    )
    detail = demo_invoice_detail()
    if not DemoInvoice.objects.filter(organization=org, contact__isnull=True).exists():
        demo_invoice_save(organization=org, phone=None, detail=detail, actor=actor)
    if not DemoInvoice.objects.filter(
        organization=org, contact__phone=DEMO_CUSTOMER_PHONE
    ).exists():
        demo_invoice_save(organization=org, phone=DEMO_CUSTOMER_PHONE, detail=detail, actor=actor)
    titles = set(KnowledgeDocument.objects.filter(organization=org).values_list("title", flat=True))
    for title, body in INVOICE_KNOWLEDGE:
        if title not in titles:
            knowledge_document_save(organization=org, actor=actor, title=title, body=body)
    return channel
