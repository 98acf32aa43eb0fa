"""Every write of the inbox: assignment, resolution, labels, notes, canned replies and
contact edits. One transaction each, one AuditLog row each (tests/security walks them).

Reading markers are not here: they are per-member view state (``inbox.markers``).
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from accounts.models import Membership, Organization, display_name
from accounts.services import audit_log_write, audited_delete
from conversation import handoff as handoff_service
from conversation.hooks import cancel_pending_for_conversation
from conversation.models import (
    Contact,
    Conversation,
    ConversationStatus,
    Handoff,
    HandoffStatus,
)
from conversation.runtime import deserialize_state, serialize_state
from conversation.runtime.state import ConversationStatus as RuntimeStatus
from inbox.models import CannedReply, ConversationLabel, InternalNote, Label, LabelColor

log = logging.getLogger(__name__)

# Who may be assigned a conversation: a member who can answer it (DESIGN §6).
ASSIGNABLE_ROLE = "agent"


class InboxError(Exception):
    """A request the inbox refuses (the message is pt-BR, shown to the member)."""


class AssignedMeanwhile(InboxError):
    """Another member took the conversation after the acting member's page showed it."""

    def __init__(self, owner: Membership) -> None:
        super().__init__(
            _("%(name)s assumiu esta conversa antes de você.") % {"name": display_name(owner.user)}
        )
        self.owner = owner


class AlreadyTakenOver(InboxError):
    """The conversation's open handoff is already another member's."""

    def __init__(self, *, handoff: Handoff, owner: Membership) -> None:
        super().__init__(
            _("%(name)s já assumiu esta conversa.") % {"name": display_name(owner.user)}
        )
        self.handoff = handoff
        self.owner = owner


def _check_assignee(conversation: Conversation, assignee: Membership | None) -> None:
    if assignee is None:
        return
    if assignee.organization_id != conversation.organization_id:
        raise InboxError("Essa pessoa não faz parte da organização.")
    if not assignee.has_role(ASSIGNABLE_ROLE):
        raise InboxError("Leitores não podem ser responsáveis por conversas.")


def conversation_assign(
    *,
    conversation: Conversation,
    assignee: Membership | None,
    actor: Any,
    shown: str | None = None,
) -> Conversation:
    """Give the conversation to one member (``None``: back to the whole team). Audited
    with the previous and the new assignee; assigning to the same member changes nothing.

    ``shown`` is the assignee the member's page showed (a membership id, ``""`` for the
    team; ``None``: not checked). When another member has taken the conversation since,
    ``AssignedMeanwhile`` is raised instead of silently taking it from them. Locks the
    conversation row so two clicks at once are decided one after the other."""
    _check_assignee(conversation, assignee)
    with transaction.atomic():
        previous = (
            Conversation.objects.select_for_update()
            .filter(pk=conversation.pk)
            .values_list("assigned_to_id", flat=True)
            .get()
        )
        new = assignee.pk if assignee is not None else None
        if previous == new:
            conversation.assigned_to = assignee
            return conversation
        if shown is not None and previous is not None and str(previous) != shown:
            raise AssignedMeanwhile(Membership.objects.select_related("user").get(pk=previous))
        conversation.assigned_to = assignee
        conversation.save(update_fields=["assigned_to"])
        audit_log_write(
            actor=actor,
            action="conversation.assign",
            resource=conversation,
            diff={"assigned_to": [str(previous) if previous else None, str(new) if new else None]},
        )
    log.info(
        "conversation assigned",
        extra={"conversation_id": str(conversation.pk), "membership_id": str(new or "")},
    )
    return conversation


def conversation_take_over(
    *, conversation: Conversation, assignee: Membership, actor: Any
) -> Handoff:
    """A member takes over a conversation the AI is handling: the canonical handoff
    (``conversation.handoff``) and, in the same transaction, it becomes theirs.

    Locks the conversation row: of two members taking it at once the second finds the
    first one's handoff and gets ``AlreadyTakenOver`` (their own second click, or a handoff
    still waiting for the team, is simply theirs: no second handoff, no repeated reason)."""
    _check_assignee(conversation, assignee)
    with transaction.atomic():
        owner_id = (
            Conversation.objects.select_for_update()
            .filter(pk=conversation.pk)
            .values_list("assigned_to_id", flat=True)
            .get()
        )
        handoff = Handoff.objects.filter(
            conversation_id=conversation.pk, status=HandoffStatus.OPEN
        ).first()
        if handoff is not None and owner_id not in (None, assignee.pk):
            owner = Membership.objects.select_related("user").get(pk=owner_id)
            raise AlreadyTakenOver(handoff=handoff, owner=owner)
        if handoff is None:
            handoff = handoff_service.conversation_take_over(conversation=conversation, actor=actor)
        conversation_assign(conversation=conversation, assignee=assignee, actor=actor)
    return handoff


def _closed_runtime_state(raw: Any) -> Any:
    """The stored runtime state with every dialogue closed (``live`` and ``shadow``); a
    state that does not restore is dropped — the next message starts afresh either way."""
    if not isinstance(raw, dict):
        return None
    keys = set(raw) <= {"live", "shadow"}
    envelope = raw if keys else {"live": raw}
    closed: dict[str, Any] = {}
    try:
        for key, stored in envelope.items():
            if stored is None:
                continue
            state = deserialize_state(stored)
            state.status = RuntimeStatus.CLOSED
            closed[key] = serialize_state(state)
    except Exception:  # a malformed state: nothing worth keeping
        return None
    return closed or None


def conversation_resolve(*, conversation: Conversation, actor: Any) -> Conversation:
    """Staff resolve the conversation: it closes (``closed``, who and when), its runtime
    dialogue closes, the router's agent assignment ends ("Handoff/fechamento limpa a
    atribuição", intent-router spec: the next customer message is routed afresh), pending
    follow-ups (and this conversation's open cases) cancel through the registered
    ``closed`` hook, and an open handoff goes back to the AI — the next customer message
    reopens the conversation (``conversation.inbound``).

    Locks the conversation row so two resolves (or a resolve racing a reopen) serialize."""
    with transaction.atomic():
        locked = Conversation.objects.select_for_update().get(pk=conversation.pk)
        if locked.status == ConversationStatus.CLOSED:
            return locked
        open_handoff = (
            Handoff.objects.select_related("conversation__contact")
            .filter(conversation=locked, status=HandoffStatus.OPEN)
            .first()
        )
        handed_back = False
        if open_handoff is not None:
            handoff_service.handoff_return_to_ai(handoff=open_handoff, actor=actor)
            handed_back = True
        previous = locked.status
        now = timezone.now()
        conversation.status = ConversationStatus.CLOSED
        conversation.resolved_at = now
        conversation.resolved_by = actor if getattr(actor, "is_authenticated", False) else None
        conversation.bot_silenced_until = None
        conversation.runtime_state = _closed_runtime_state(locked.runtime_state)
        conversation.active_agent = None
        conversation.active_intent = ""
        conversation.active_agent_set_at = None
        conversation.save(
            update_fields=[
                "status",
                "resolved_at",
                "resolved_by",
                "bot_silenced_until",
                "runtime_state",
                "active_agent",
                "active_intent",
                "active_agent_set_at",
            ]
        )
        cancelled = cancel_pending_for_conversation(conversation, "closed")
        diff: dict[str, Any] = {
            "status": [previous, ConversationStatus.CLOSED.value],
            "followups_cancelled": cancelled,
            "handoff_returned": handed_back,
        }
        # The assignment the resolve ended (the locked row's: the caller's copy may be stale).
        if locked.active_agent_id is not None or locked.active_intent:
            agent_id = locked.active_agent_id
            diff["active_agent"] = [str(agent_id) if agent_id else None, None]
            diff["active_intent"] = [locked.active_intent, ""]
        audit_log_write(
            actor=actor, action="conversation.resolve", resource=conversation, diff=diff
        )
    log.info("conversation resolved", extra={"conversation_id": str(conversation.pk)})
    return conversation


def label_create(
    *, organization: Organization, actor: Any, name: str, color: str = LabelColor.BLUE
) -> Label:
    name = name.strip()
    if not name:
        raise InboxError("Dê um nome à etiqueta.")
    if Label.objects.filter(organization=organization, name__iexact=name).exists():
        raise InboxError("Já existe uma etiqueta com esse nome.")
    with transaction.atomic():
        label = Label.objects.create(organization=organization, name=name, color=LabelColor(color))
        audit_log_write(
            actor=actor,
            action="label.create",
            resource=label,
            diff={"name": name, "color": label.color},
        )
    return label


def label_delete(*, label: Label, actor: Any) -> None:
    """Deletes the label and takes it off every conversation."""
    audited_delete(
        label,
        actor=actor,
        action="label.delete",
        diff={"name": label.name, "conversations": label.links.count()},
    )


def conversation_label_toggle(
    *, conversation: Conversation, label: Label, actor: Any, on: bool | None = None
) -> bool:
    """Puts the label on the conversation (``on=True``), takes it off (``on=False``), or
    flips it (``None``); returns whether it is on now. The panel's buttons say which
    (``on``): two members who both saw it off and both put it on leave it on."""
    if label.organization_id != conversation.organization_id:
        raise InboxError(_("Etiqueta desconhecida."))
    with transaction.atomic():
        links = ConversationLabel.objects.filter(conversation=conversation, label=label)
        if on is None:
            on = not links.exists()
        if on:
            _link, changed = ConversationLabel.objects.get_or_create(
                conversation=conversation,
                label=label,
                defaults={"organization_id": conversation.organization_id},
            )
        else:
            changed = links.delete()[0] > 0
        if changed:
            audit_log_write(
                actor=actor,
                action="conversation.label_add" if on else "conversation.label_remove",
                resource=conversation,
                diff={"label_id": str(label.pk), "label": label.name},
            )
    return on


def internal_note_add(
    *, contact: Contact, actor: Any, body: str, conversation: Conversation | None = None
) -> InternalNote:
    """A note for the team, on a conversation of the contact or on the contact alone.
    Never sent: it goes through no outbox; the audit row names it, not its text."""
    body = body.strip()
    if not body:
        raise InboxError("Escreva a nota.")
    if conversation is not None and conversation.contact_id != contact.pk:
        raise InboxError("A conversa não é desse contato.")
    with transaction.atomic():
        note = InternalNote.objects.create(
            organization_id=contact.organization_id,
            contact=contact,
            conversation=conversation,
            author=actor if getattr(actor, "is_authenticated", False) else None,
            body=body,
        )
        audit_log_write(
            actor=actor,
            action="note.add",
            resource=note,
            diff={"conversation_id": str(conversation.pk) if conversation else None},
        )
    return note


def canned_reply_create(
    *, organization: Organization, actor: Any, title: str, body: str, shortcut: str = ""
) -> CannedReply:
    """A ready answer; its ``/atalho`` defaults to the title's slug."""
    shortcut = slugify(shortcut or title)[:40]
    if not shortcut or not body.strip():
        raise InboxError("Preencha o título e o texto.")
    if CannedReply.objects.filter(organization=organization, shortcut=shortcut).exists():
        raise InboxError("Já existe uma resposta com esse atalho.")
    with transaction.atomic():
        reply = CannedReply.objects.create(
            organization=organization, shortcut=shortcut, title=title.strip(), body=body.strip()
        )
        audit_log_write(
            actor=actor,
            action="canned_reply.create",
            resource=reply,
            diff={"shortcut": shortcut},
        )
    return reply


def canned_reply_delete(*, canned_reply: CannedReply, actor: Any) -> None:
    audited_delete(
        canned_reply,
        actor=actor,
        action="canned_reply.delete",
        diff={"shortcut": canned_reply.shortcut},
    )


def contact_update(*, contact: Contact, actor: Any, name: str) -> Contact:
    """The contact profile's edit: the name the team sees (audited with before/after)."""
    name = name.strip()[:120]
    with transaction.atomic():
        previous = contact.name
        if previous == name:
            return contact
        contact.name = name
        contact.save(update_fields=["name"])
        audit_log_write(
            actor=actor,
            action="contact.update",
            resource=contact,
            diff={"name": [previous, name]},
        )
    return contact
