"""The pt-BR texts the case services write: the handoff briefing of an escalated case and
the follow-up the customer receives. Pure."""

from __future__ import annotations

from cases.models import Case

# The timeline note when a follow-up could not go out at all.
FOLLOW_UP_NOT_SENT_NOTE = (
    "Follow-up não enviado: a janela de 24 horas do WhatsApp está fechada e o "
    "canal não tem um modelo aprovado de follow-up."
)


def escalation_briefing(case: Case, text: str) -> str:
    """The case part of the handoff briefing (§7): what the AI opened and the team's
    answer. ``build_briefing`` adds the conversation's last lines after it."""
    return "\n".join(
        [
            f"Caso escalado #{case.short_id} (origem: caso_escalado, caso {case.pk})",
            f"Pedido: {case.title}",
            f"Resumo: {case.summary}",
            f"Bloqueio: {case.blocker}",
            f"Resposta da equipe: {text}",
        ]
    )


def follow_up_text(case: Case) -> str:
    request = case.lead_request.strip().rstrip(".")
    return (
        f"Oi! Para continuar com “{case.title}”, ainda preciso de uma informação sua: "
        f"{request}. Pode me responder por aqui?"
    )


def escalated_customer_notice(case: Case) -> str:
    """What the customer is told when the team escalates the case (a person takes over)."""
    return (
        f"Sobre “{case.title}”: passei o seu pedido para uma pessoa da nossa equipe, que "
        "continua o atendimento com você por aqui."
    )
