"""Answering a case from WhatsApp (human-cases §9, issue 12 item 7): a member writes to the
organization's WhatsApp number from the staff number registered on their membership
(``StaffNumber``) and answers with one of the three actions and a text, as in the page.

    #1a2b3c4d 1 Reembolso feito, cai em 2 dias      → Concluí ✓
    #1a2b3c4d 2 Qual o número do pedido?             → Preciso de info do cliente
    #1a2b3c4d 3 Só o gerente libera                  → Não consigo → escalar

The action may be a word too ("concluí", "info", "escalar"). Without ``#<código>`` the
answer is bound to the notice it replies to (§9: "comando preso àquela resposta"): the case of
the notice the message quotes, else of the latest notice sent to this number, while that
case still waits for the team; otherwise the member is asked for the code (never "the only
waiting case": after a colleague answered the noticed case, a "feito" would land on another
customer's). The number authenticates the member (the webhook itself is authenticated per
channel); the member's account must be active and their role must answer cases (agent or
above), and the answer is the same ``services.case_answer`` the page calls,
audited with the member as actor. A message from a staff number never reaches the AI: the
turn only answers the member with a confirmation or a short help.

Pure parsing (``parse_command``) is apart from the action (``staff_whatsapp_answer``).
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Collection
from dataclasses import dataclass
from itertools import pairwise

from django.db.models import Q, QuerySet

from accounts.models import Membership
from cases import selectors, services
from cases.models import (
    OPEN_STATUSES,
    Case,
    CaseNotice,
    CaseStatus,
    HumanAction,
    NoticeStatus,
)
from cases.phones import phone_variants
from conversation.models import Contact, Conversation
from conversation.text import normalize

log = logging.getLogger(__name__)

ACTION_WORDS: dict[str, str] = {
    "1": HumanAction.RESOLVED,
    "concluido": HumanAction.RESOLVED,
    "conclui": HumanAction.RESOLVED,
    "resolvido": HumanAction.RESOLVED,
    "resolvi": HumanAction.RESOLVED,
    "feito": HumanAction.RESOLVED,
    "2": HumanAction.NEED_LEAD_INFO,
    "info": HumanAction.NEED_LEAD_INFO,
    "preciso": HumanAction.NEED_LEAD_INFO,
    "pergunta": HumanAction.NEED_LEAD_INFO,
    "3": HumanAction.ESCALATE,
    "escalar": HumanAction.ESCALATE,
    "escalo": HumanAction.ESCALATE,
    "escalado": HumanAction.ESCALATE,
}
_COMMAND = re.compile(
    r"^\s*(?:#(?P<ref>[0-9a-f]{4,32})\b[\s:,.\-]*)?(?P<action>[^\s:,.\-]+)[\s:,.\-]*(?P<text>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_REF_ANYWHERE = re.compile(r"#([0-9a-f]{4,32})\b", re.IGNORECASE)
# "2 minutos e já olho", "1 min": a member saying when they will look, not an action with a
# text (a digit action without a code followed by one of these words is no command).
QUANTITY_WORDS = frozenset(
    {
        *("min", "mins", "minuto", "minutos", "minutinho", "minutinhos"),
        *("seg", "segundo", "segundos", "segundinho", "instante", "instantes"),
        *("h", "hr", "hrs", "hora", "horas", "horinha", "horinhas", "momento", "momentinho"),
        *("dia", "dias", "semana", "semanas", "vez", "vezes"),
    }
)

HELP_PT = (
    "Para responder um caso por aqui, escreva o código do caso, a ação e o texto:\n"
    "#código 1 texto — Concluí\n"
    "#código 2 texto — Preciso de info do cliente\n"
    "#código 3 texto — Não consigo, escalar"
)
ANSWERED_PT = {
    HumanAction.RESOLVED: "Caso #{ref} concluído. A IA vai contar ao cliente.",
    HumanAction.NEED_LEAD_INFO: (
        "Caso #{ref}: a IA vai perguntar ao cliente. O caso volta para a equipe quando ele "
        "responder."
    ),
    HumanAction.ESCALATE: (
        "Caso #{ref} escalado: a conversa passou para uma pessoa da equipe e o cliente foi avisado."
    ),
}
ESCALATED_OPTED_OUT_PT = (
    "Caso #{ref} escalado: a conversa passou para uma pessoa da equipe. O cliente pediu para "
    "não receber mensagens, então não foi avisado."
)


@dataclass(frozen=True)
class StaffCommand:
    action: str  # a HumanAction
    text: str
    case_ref: str = ""  # the short code (a prefix of the case id), or "" when none was given


def parse_command(body: str) -> StaffCommand | None:
    """``#código ação texto`` → the command, or None when it is not one. The code may also
    come after the action ("1 #código texto")."""
    match = _COMMAND.match(body or "")
    if match is None:
        return None
    action = ACTION_WORDS.get(normalize(match.group("action")).rstrip("✓ "))
    if action is None:
        return None
    ref = (match.group("ref") or "").lower()
    text = match.group("text").strip()
    if not ref:
        later = _REF_ANYWHERE.match(text)
        if later:
            ref, text = later.group(1).lower(), text[later.end() :].strip(" :,.-\n")
    if not text:
        return None
    if not ref and match.group("action").isdigit():
        words = normalize(text).split()
        if words and words[0] in QUANTITY_WORDS:
            return None
    return StaffCommand(action=action, text=text, case_ref=ref)


def staff_membership(conversation: Conversation) -> Membership | None:
    """The membership whose staff number is this conversation's contact, or None."""
    phone = conversation.contact.phone
    if phone not in selectors.staff_phones(conversation.organization):
        return None  # a customer (the common case: no query)
    # WhatsApp may give a Brazilian mobile without the 9 it was registered with (or with it).
    row = selectors.staff_number_of(conversation.organization_id, phone)
    return row.membership if row else None


def _answerable(organization_id: uuid.UUID) -> Q:
    return Q(organization_id=organization_id) & (
        Q(status=CaseStatus.AWAITING_HUMAN)
        | Q(status=CaseStatus.AWAITING_LEAD, lead_unresponsive=True)
    )


def _id_prefix(ref: str) -> str:
    """The code as the start of the id's text form ("1a2b3c4d5e" → "1a2b3c4d-5e"): PostgreSQL
    compares a uuid's text with its hyphens (SQLite's copy drops them from the value)."""
    cuts = (0, 8, 12, 16, 20, 32)
    return "-".join(ref[a:b] for a, b in pairwise(cuts) if ref[a:b])


def _sent_notices(organization_id: uuid.UUID, phone: str) -> QuerySet[CaseNotice]:
    # The notice went to the number as typed; the reply may come from its other form.
    return CaseNotice.objects.filter(
        organization_id=organization_id,
        phone__in=sorted(phone_variants(phone)),
        status=NoticeStatus.SENT,
    ).select_related("case")


def _quoted_notice(
    organization_id: uuid.UUID, phone: str, quoted: Collection[str]
) -> CaseNotice | None:
    """The notice (sent to this number) that the member's message quotes: by its provider id,
    or a bare WhatsApp key id as the tail of a serialized one (as ``Message.quoted_message``)."""
    match = Q()
    for ref in {q for q in quoted if q}:
        match |= Q(provider_message_id=ref)
        if "_" not in ref and "@" not in ref:
            match |= Q(provider_message_id__endswith=f"_{ref}")
    if not match:
        return None
    return _sent_notices(organization_id, phone).filter(match).order_by("-sent_at").first()


def _find_case(
    organization_id: uuid.UUID, ref: str, phone: str, quoted: Collection[str] = ()
) -> tuple[Case | None, str]:
    """(the case, "") or (None, the reply that says why)."""
    if ref:
        rows = list(
            Case.objects.filter(organization_id=organization_id, id__startswith=_id_prefix(ref))
            .select_related("conversation")
            .order_by("-opened_at")[:2]
        )
        if not rows:
            return None, f"Não encontrei o caso #{ref}."
        if len(rows) > 1:
            return None, f"O código #{ref} serve para mais de um caso: envie mais caracteres."
        return rows[0], ""
    # §9 "comando preso àquela resposta": the notice the message quotes, else the latest one.
    notice = _quoted_notice(organization_id, phone, quoted)
    which = "do aviso respondido" if notice is not None else "do último aviso"
    notice = notice or _sent_notices(organization_id, phone).order_by("-sent_at").first()
    if (
        notice is not None
        and Case.objects.filter(_answerable(organization_id), pk=notice.case_id).exists()
    ):
        return notice.case, ""
    waiting = list(Case.objects.filter(_answerable(organization_id)).order_by("waiting_since")[:4])
    if not waiting:
        return None, "Nenhum caso está esperando a equipe agora."
    codes = ", ".join(f"#{c.short_id}" for c in waiting[:3])
    more = "…" if len(waiting) > 3 else ""
    if notice is not None:
        return None, (
            f"O caso #{notice.case.short_id} {which} não espera mais a equipe. "
            f"Casos esperando: {codes}{more}. Comece com o código do caso."
        )
    return None, f"Casos esperando a equipe: {codes}{more}. Comece com o código do caso."


def staff_whatsapp_answer(
    *, conversation: Conversation, text: str, quoted: Collection[str] = ()
) -> str | None:
    """Answer a case from a member's staff number. None when the contact is not a staff
    number of the organization (the message is a customer's: the turn goes on); else the
    reply for the member. ``quoted``: the provider ids the member's lines quote (a reply
    to a notice binds a command without a code to that notice's case). Runs inside the
    turn's claim (no network)."""
    membership = staff_membership(conversation)
    if membership is None:
        return None
    extra = {"membership_id": str(membership.pk), "conversation_id": str(conversation.pk)}
    if not membership.user.is_active:
        # A deactivated account cannot log in to the page; its number answers nothing either.
        log.info("staff answer refused: inactive user", extra=extra)
        return "Este número não pode responder casos: o acesso deste membro está desativado."
    if not membership.has_role("agent"):
        log.info("staff answer refused: role", extra=extra)
        return "O seu papel nesta organização não permite responder casos."
    # Several commands typed within the burst window arrive joined: each "#código" line
    # starts its own (a text typed on the next line still belongs to the one above).
    replies = [_answer(membership, conversation, part, quoted) for part in command_parts(text)]
    return "\n\n".join(replies) if replies else HELP_PT


_STARTS_WITH_CODE = re.compile(r"^\s*#[0-9a-f]{4,32}\b", re.IGNORECASE)


def command_parts(text: str) -> list[str]:
    """The burst's text cut where a line starts with a case code."""
    parts: list[list[str]] = []
    for line in (text or "").splitlines():
        if not parts or _STARTS_WITH_CODE.match(line):
            parts.append([])
        parts[-1].append(line)
    return [joined for joined in ("\n".join(lines).strip() for lines in parts) if joined]


def _answer(
    membership: Membership, conversation: Conversation, text: str, quoted: Collection[str]
) -> str:
    extra = {"membership_id": str(membership.pk), "conversation_id": str(conversation.pk)}
    command = parse_command(text)
    if command is None:
        return HELP_PT
    case, why = _find_case(
        conversation.organization_id, command.case_ref, conversation.contact.phone, quoted
    )
    if case is None:
        return why
    if case.status not in OPEN_STATUSES:
        return f"O caso #{case.short_id} já está encerrado ({case.get_status_display()})."
    try:
        services.case_answer(
            case=case, actor=membership.user, action=command.action, text=command.text
        )
    except services.CaseError as exc:
        return f"Caso #{case.short_id}: {exc.message}"
    log.info("case answered from whatsapp", extra={**extra, "case_id": str(case.pk)})
    if command.action == HumanAction.ESCALATE and conversation_opted_out(case):
        # The customer asked for no more messages, so nobody told them (services: no notice
        # to an opted-out contact); the confirmation must not say they were.
        return ESCALATED_OPTED_OUT_PT.format(ref=case.short_id)
    return ANSWERED_PT[HumanAction(command.action)].format(ref=case.short_id)


def conversation_opted_out(case: Case) -> bool:
    """Whether the case's customer opted out of messages (so was told nothing)."""
    return Contact.objects.filter(
        conversations__pk=case.conversation_id, opted_out_at__isnull=False
    ).exists()
