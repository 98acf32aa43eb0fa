"""Demo data: a router on the demo's simulator channel, so the simulator shows routing,
stickiness and a change of subject out of the box. Idempotent."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from accounts.models import Organization
from conversation.models import Agent, ChannelSession
from conversation.services import agent_create
from routers import services
from routers.models import LabelledPhrase, Router

FINANCE_PROMPT = (
    "Você é do financeiro da Loja Demo. Ajude com boletos, segunda via, faturas, Pix, "
    "cartão, reembolsos e pagamentos em atraso. Seja preciso com valores e prazos e use a "
    "base de conhecimento; nunca invente um valor."
)

INTENTS: list[tuple[str, str, str, list[str]]] = [
    (
        "vendas",
        "Vendas",
        "O cliente quer comprar, saber preço, condições, produtos, estoque, frete ou "
        "prazo de entrega de uma compra nova.",
        [
            "quanto custa?",
            "qual o preço desse produto",
            "quero comprar",
            "vocês têm esse modelo em estoque?",
            "tem desconto à vista?",
            "qual o valor do frete para São Paulo",
            "quero fazer um pedido",
            "como faço para comprar pelo WhatsApp?",
            "tem em outra cor?",
        ],
    ),
    (
        "suporte",
        "Suporte",
        "O cliente tem um problema com um pedido ou produto que já comprou: não chegou, "
        "veio com defeito, quer trocar, devolver ou rastrear a entrega, ou não consegue "
        "acessar a conta.",
        [
            "meu pedido não chegou",
            "o produto veio com defeito",
            "quero trocar o tamanho",
            "como faço para devolver?",
            "cadê meu pedido",
            "quero rastrear minha entrega",
            "não consigo entrar na minha conta",
            "o aparelho parou de funcionar",
            "esqueci minha senha",
        ],
    ),
    (
        "financeiro",
        "Financeiro",
        "O cliente fala de dinheiro de uma compra já feita: boleto, segunda via, fatura, "
        "pagamento, Pix, cobrança, reembolso ou estorno.",
        [
            "preciso da segunda via do boleto",
            "meu boleto venceu",
            "já paguei e continua aparecendo em aberto",
            "quero pagar com Pix",
            "fui cobrado duas vezes",
            "quando cai o meu reembolso?",
            "a fatura veio com valor errado",
            "como pago a parcela atrasada",
            "quero o estorno da compra",
        ],
    ),
]

LABELLED = [
    ("oi, quanto fica o frete para Curitiba?", "vendas"),
    ("vocês parcelam no cartão?", "vendas"),
    ("quero comprar dois desse", "vendas"),
    ("tem o tênis no tamanho 42?", "vendas"),
    ("meu pedido está atrasado", "suporte"),
    ("chegou quebrado", "suporte"),
    ("quero devolver a camiseta", "suporte"),
    ("não consigo fazer login no site", "suporte"),
    ("me manda o código de barras do boleto", "financeiro"),
    ("paguei o pix mas não confirmou", "financeiro"),
    ("cobraram a mais no meu cartão", "financeiro"),
    ("preciso da nota fiscal da fatura", "financeiro"),
    ("bom dia", "none"),
    ("obrigado!", "none"),
]

# What the LLM decided for messages the local stage was unsure of: the router page shows
# them for an admin to accept or reject (offline, no LLM ever runs, so the demo seeds two).
SUGGESTED = [
    ("vcs entregam no sábado? meu cel é (11) 98765-4321", "vendas", 0.92),
    ("o app fica só carregando e não sai disso", "suporte", 0.88),
]


def seed_demo_routers(org: Organization, actor: Any) -> Router | None:
    """A router "Atendimento" on the channel "Simulador" over Vendas, Suporte and a new
    Financeiro agent, with Suporte as fallback, a starter set of labelled phrases and two
    suggested phrases waiting for review."""
    channel = ChannelSession.objects.filter(organization=org, name="Simulador").first()
    if channel is None:
        return None
    existing = Router.objects.filter(organization=org, channel=channel).first()
    if existing is not None:
        return existing
    with transaction.atomic():
        agents = {a.name: a for a in Agent.objects.filter(organization=org)}
        if "Financeiro" not in agents:
            agents["Financeiro"] = agent_create(
                organization=org, name="Financeiro", actor=actor, prompt=FINANCE_PROMPT
            )
        members = [
            services.MemberSpec(
                agent=agents[agent_name],
                intent_name=intent,
                intent_description=description,
                examples=tuple(examples),
            )
            for intent, agent_name, description, examples in INTENTS
            if agent_name in agents
        ]
        router = services.router_create(
            organization=org,
            actor=actor,
            name="Atendimento",
            channel=channel,
            fallback_agent=agents.get("Suporte"),
            members=members,
        )
        if not LabelledPhrase.objects.filter(router=router).exists():
            services.labelled_phrases_replace(router=router, actor=actor, phrases=LABELLED)
        for text, intent, confidence in SUGGESTED:
            services.suggestion_record(
                router=router, text=text, intent_name=intent, confidence=confidence
            )
    return router
