"""Seed a demo organization: users of every role, two agents, a simulator channel and a
small knowledge base. Idempotent: running it twice changes nothing."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from accounts import rls
from accounts.models import Membership, Organization
from accounts.services import membership_create
from cases.demo import seed_demo_cases
from conversation.models import Agent, ChannelSession, KnowledgeDocument
from conversation.runtime_adapters.demo import seed_demo_invoice_support
from conversation.services import agent_create, channel_create, knowledge_document_save
from inbox.demo import seed_demo_inbox
from routers.demo import seed_demo_routers

DEMO_PASSWORD = "demo12345"
USERS = [("admin", "admin"), ("gestor", "manager"), ("atendente", "agent"), ("leitor", "viewer")]

KNOWLEDGE = [
    (
        "Horário de atendimento",
        "Atendemos de segunda a sexta, das 8h às 20h, e aos sábados, das 9h às 14h. "
        "Fora desse horário, o assistente virtual responde dúvidas gerais.",
    ),
    (
        "Prazo de entrega",
        "Entregamos em até 3 dias úteis nas capitais e em até 7 dias úteis no interior. "
        "O código de rastreio chega por WhatsApp assim que o pedido sai do estoque.",
    ),
    (
        "Trocas e devoluções",
        "Você pode trocar ou devolver um produto em até 7 dias corridos após o recebimento, "
        "sem custo. O reembolso cai em até 10 dias úteis depois que o produto chega ao estoque.",
    ),
    (
        "Formas de pagamento",
        "Aceitamos Pix, boleto e cartão de crédito em até 10 vezes sem juros. "
        "O Pix tem 5% de desconto.",
    ),
    (
        "Segunda via de boleto",
        "A segunda via do boleto pode ser emitida pelo site, em Minha conta > Pedidos, "
        "ou pedida aqui mesmo pelo WhatsApp informando o número do pedido.",
    ),
]

SUPPORT_PROMPT = (
    "Você atende clientes da Loja Demo pelo WhatsApp. Seja cordial e objetivo. "
    "Consulte a base de conhecimento antes de responder dúvidas sobre prazos, trocas e "
    "pagamentos. Se o cliente pedir um atendente, passe a conversa para a equipe."
)
SALES_PROMPT = (
    "Você é consultor de vendas da Loja Demo. Ajude o cliente a escolher produtos, "
    "explique formas de pagamento e prazos de entrega, sempre com base na base de conhecimento."
)


class Command(BaseCommand):
    help = "Cria a organização de demonstração (idempotente)."

    @rls.with_bypass("seed_demo")  # writes a whole organization: the walls are lifted
    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        org, _ = Organization.objects.get_or_create(slug="demo", defaults={"name": "Loja Demo"})
        User = get_user_model()
        admin_user = None
        for username, role in USERS:
            user, created = User.objects.get_or_create(
                username=username, defaults={"email": f"{username}@demo.local"}
            )
            if created:
                user.set_password(DEMO_PASSWORD)
                user.is_staff = role == "admin"
                user.is_superuser = role == "admin"
                user.save()
            if not Membership.objects.filter(organization=org, user=user).exists():
                membership_create(organization=org, user=user, role=role)
            if role == "admin":
                admin_user = user

        agents = {a.name: a for a in Agent.objects.filter(organization=org)}
        if "Suporte" not in agents:
            agents["Suporte"] = agent_create(
                organization=org,
                name="Suporte",
                actor=admin_user,
                prompt=SUPPORT_PROMPT,
                handoff_keywords=["falar com atendente", "quero um humano"],
            )
        if "Vendas" not in agents:
            agents["Vendas"] = agent_create(
                organization=org, name="Vendas", actor=admin_user, prompt=SALES_PROMPT
            )
        channel = ChannelSession.objects.filter(organization=org, name="Simulador").first()
        if channel is None:
            channel = channel_create(
                organization=org,
                name="Simulador",
                provider="simulator",
                actor=admin_user,
                phone_number="5511900000000",
                agent=agents["Suporte"],
            )
        if not KnowledgeDocument.objects.filter(organization=org).exists():
            for title, body in KNOWLEDGE:
                knowledge_document_save(organization=org, actor=admin_user, title=title, body=body)
        seed_demo_routers(org, admin_user)
        seed_demo_cases(org, admin_user)
        seed_demo_invoice_support(org, admin_user)
        seed_demo_inbox(org, admin_user)

        self.stdout.write(self.style.SUCCESS("Demo pronta: organização 'Loja Demo'."))
        self.stdout.write(
            "Entre com admin / " + DEMO_PASSWORD + " (também: gestor, atendente, leitor)."
        )
