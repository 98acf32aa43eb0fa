"""Data protection (LGPD): erase a customer's personal data on request, and the
per-organization retention of message text and media.

Erasure (``contact_erase``, the admin action and ``manage.py erase_contact``): the
contact's name goes blank and the phone becomes a tombstone (``apagado-<id>``, so a new
message from that number starts a new, unrelated contact); every message's text becomes
``ERASED_TEXT`` and its media files are deleted from storage; handoff reasons and
briefings, the runtime's serialized state, the runtime actions' phone numbers and the
contact's demo invoice go. Rows stay — messages, turns, handoffs, conversations — so counts
on the pages and the cost ledger stay right; audit rows stay, and they hold ids only. The
contact's conversations are closed and their pending follow-ups cancelled, the contact is
marked opted out, and outbound messages still waiting are refused, so nothing erased is
ever sent. Apps above ``conversation`` (cases: their titles, summaries and events; routers:
the suggestions taken from the contact's conversations) erase their own rows through
``hooks.register_contact_eraser``.

Retention (``retention_apply``, beat ``conversation.apply_retention``): an organization
with ``message_retention_days`` = N gets the text and media of its messages older than N
days replaced by ``RETAINED_TEXT``, and the briefings of its closed handoffs older than
that cleared. Each run that changed something writes one audit row.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import models, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from accounts.models import Organization
from accounts.services import audit_log_write
from conversation import hooks
from conversation.models import (
    OUTBOX_IN_FLIGHT,
    Contact,
    Conversation,
    ConversationStatus,
    DemoInvoice,
    Direction,
    Handoff,
    HandoffStatus,
    Message,
    MessageStatus,
    RuntimeAction,
)

log = logging.getLogger(__name__)

ERASED_TEXT = "[apagado a pedido do titular]"
RETAINED_TEXT = "[apagado pela política de retenção]"
ERASED_PHONE_PREFIX = "apagado-"
ERASED_ERROR_CODE = "erased"


@dataclass(frozen=True)
class Erasure:
    messages: int = 0
    media_files: int = 0
    conversations: int = 0
    handoffs: int = 0
    invoices: int = 0
    refused_outbound: int = 0
    other_rows: int = 0  # erased by the apps registered in ``hooks``, and the cases


def contact_erase(*, contact: Contact, actor: Any) -> Erasure:
    """Erase ``contact``'s personal data (see the module docstring). Idempotent: a contact
    already erased is left as it is (no second audit row)."""
    with transaction.atomic():
        contact = Contact.objects.select_for_update().get(pk=contact.pk)
        if contact.phone.startswith(ERASED_PHONE_PREFIX):
            return Erasure()
        now = timezone.now()
        conversations = list(Conversation.objects.filter(contact=contact))
        messages = Message.objects.filter(conversation__contact=contact)
        refused = messages.filter(direction=Direction.OUTBOUND, status__in=OUTBOX_IN_FLIGHT).update(
            status=MessageStatus.REFUSED, error_code=ERASED_ERROR_CODE, next_attempt_at=None
        )
        media = _delete_media(messages)
        erased = messages.update(body=ERASED_TEXT, **_cleared_media_fields())
        handoffs = Handoff.objects.filter(conversation__contact=contact)
        handoff_count = handoffs.update(reason="", briefing="")
        handoffs.filter(status=HandoffStatus.OPEN).update(
            status=HandoffStatus.RETURNED, returned_at=now
        )
        RuntimeAction.objects.filter(conversation__contact=contact).update(msisdns=[])
        invoices, _ = DemoInvoice.objects.filter(contact=contact).delete()
        for conversation in conversations:
            # Nothing scheduled may still reach the number (the cases' follow-ups).
            hooks.cancel_pending_for_conversation(conversation, "erased")
        Conversation.objects.filter(contact=contact).update(
            runtime_state=None, status=ConversationStatus.CLOSED, bot_silenced_until=None
        )
        others = hooks.erase_contact_elsewhere(contact)  # cases: cases.privacy
        contact.name = ""
        contact.phone = f"{ERASED_PHONE_PREFIX}{uuid.uuid4().hex[:20]}"
        contact.whatsapp_lid = ""
        contact.opted_out_at = contact.opted_out_at or now
        contact.force_human = False
        contact.save(update_fields=["name", "phone", "whatsapp_lid", "opted_out_at", "force_human"])
        result = Erasure(
            messages=erased,
            media_files=media,
            conversations=len(conversations),
            handoffs=handoff_count,
            invoices=invoices,
            refused_outbound=refused,
            other_rows=others,
        )
        audit_log_write(
            actor=actor,
            action="contact.erase",
            resource=contact,
            diff=asdict(result),
        )
    log.info("contact erased", extra={"contact_id": str(contact.pk), **asdict(result)})
    return result


def retention_apply(*, organization: Organization, now: datetime | None = None) -> int:
    """Apply the organization's retention once; how many messages it erased."""
    days = organization.message_retention_days
    if not days:
        return 0
    cutoff = (now or timezone.now()) - timedelta(days=int(days))
    with transaction.atomic():
        old = Message.objects.filter(organization=organization, created_at__lt=cutoff).exclude(
            status__in=OUTBOX_IN_FLIGHT
        )
        media = _delete_media(old)
        erased = old.exclude(body__in=(RETAINED_TEXT, ERASED_TEXT)).filter(
            ~Q(body="") | _has_media()
        )
        count = erased.update(body=RETAINED_TEXT, **_cleared_media_fields())
        briefings = (
            Handoff.objects.filter(organization=organization, created_at__lt=cutoff)
            .exclude(status=HandoffStatus.OPEN)
            .exclude(reason="", briefing="")
            .update(reason="", briefing="")
        )
        if count or media or briefings:
            audit_log_write(
                actor=None,
                actor_kind="system",
                action="retention.apply",
                resource=organization,
                diff={
                    "days": int(days),
                    "before": cutoff.isoformat(),
                    "messages": count,
                    "media_files": media,
                    "handoffs": briefings,
                },
            )
    if count or media or briefings:
        log.info(
            "retention applied",
            extra={"organization_id": str(organization.pk), "messages": count, "days": days},
        )
    return count


# --- cases: their texts about the contact ---------------------------------------------------

# --- media: whatever file fields messages carry ---------------------------------------------


def _media_fields() -> list[models.FileField]:
    return [f for f in Message._meta.concrete_fields if isinstance(f, models.FileField)]


def _has_media() -> Q:
    q = Q(pk__in=[])
    for f in _media_fields():
        q |= ~Q(**{f.name: ""}) & Q(**{f"{f.name}__isnull": False})
    return q


# What a message says about its media and template besides the file: the provider's ids
# and URLs lead back to the file, a filename or a template parameter can be personal.
_MEDIA_COLUMNS: dict[str, Any] = {
    "media_id": "",
    "media_url": "",
    "media_mime": "",
    "media_filename": "",
    "media_meta": {},
    "template_params": [],
}


def _cleared_media_fields() -> dict[str, Any]:
    return {**{f.name: "" for f in _media_fields()}, **_MEDIA_COLUMNS}


def _delete_media(messages: QuerySet[Message]) -> int:
    """Delete the stored files of ``messages`` (through the field's storage) — before the
    rows forget their names. Storage errors are logged, never raised: the text still goes."""
    deleted = 0
    for f in _media_fields():
        names = messages.exclude(**{f.name: ""}).values_list(f.name, flat=True)
        for name in names.iterator():
            if not name:
                continue
            try:
                f.storage.delete(name)
                deleted += 1
            except Exception:
                log.exception("media file could not be deleted", extra={"field": f.name})
    return deleted
