"""Demo data for the inbox: a few labels and canned replies for the demo organization.
Idempotent: what exists already is left as it is."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from accounts.models import Organization
from inbox import services
from inbox.models import CannedReply, Label, LabelColor

LABELS = (
    ("Financeiro", LabelColor.GREEN),
    ("Urgente", LabelColor.RED),
    ("Entrega", LabelColor.BLUE),
)

CANNED_REPLIES = (
    (
        "saudacao",
        "Saudação",
        "Olá, {{nome}}! Aqui é {{atendente}}, da {{empresa}}. Como posso ajudar?",
    ),
    (
        "prazo",
        "Prazo de entrega",
        "{{nome}}, o prazo de entrega é de até 3 dias úteis após a confirmação do pagamento.",
    ),
    (
        "encerrar",
        "Encerramento",
        "Obrigado pelo contato, {{nome}}! Se precisar de algo mais, é só mandar mensagem.",
    ),
)


def seed_demo_inbox(org: Organization, actor: Any) -> None:
    with transaction.atomic():
        for name, color in LABELS:
            if not Label.objects.filter(organization=org, name=name).exists():
                services.label_create(organization=org, actor=actor, name=name, color=color)
        for shortcut, title, body in CANNED_REPLIES:
            if not CannedReply.objects.filter(organization=org, shortcut=shortcut).exists():
                services.canned_reply_create(
                    organization=org, actor=actor, title=title, body=body, shortcut=shortcut
                )
