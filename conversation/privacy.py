"""Data protection (LGPD): erase a customer's personal data on request, and the
per-organization retention of message text and media.

Erasure (``contact_erase``, the admin action and ``manage.py erase_contact``): the
contact's name goes blank and the phone becomes a tombstone (``apagado-<id>``, so a new
message from that number starts a new, unrelated contact); every message's text becomes
``ERASED_TEXT`` and its media files are deleted from storage; handoff reasons and
briefings, the runtime's serialized state, the runtime actions' phone numbers and the
contact's demo invoice go. Rows stay — messages, turns, handoffs, conversations — so counts
on the pages and the cost ledger stay right; audit rows stay, and they hold ids only (the
filename the audit row of a file sent to the customer copied goes too). The
contact's conversations are closed and their pending follow-ups cancelled, the contact is
marked opted out, and outbound messages still waiting are refused, so nothing erased is
ever sent. Apps above ``conversation`` (cases: their titles, summaries and events; routers:
the suggestions taken from the contact's conversations) erase their own rows through
``hooks.register_contact_eraser``.

Retention (``retention_apply``, beat ``conversation.apply_retention``): an organization
with ``message_retention_days`` = N gets the text and media of its messages older than N
days replaced by ``RETAINED_TEXT``, and the briefings of its closed handoffs older than
that cleared, as is the runtime state of a conversation silent since then; the apps above
erase the copies of that text their rows hold (``hooks.register_retention_sweeper``; cases:
the conversation snapshot and the timeline's quotes). Each run that changed something
writes one audit row.
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

from accounts import rls
from accounts.models import AuditLog, Organization
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
        _forget_filenames_in_audit(messages)
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
        _forget_filenames_in_audit(old)
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
        # The runtime's state quotes its last question and the customer's line: a conversation
        # whose every message is past the retention keeps no state (the runtime starts over).
        states = (
            Conversation.objects.filter(organization=organization, last_message_at__lt=cutoff)
            .filter(runtime_state__isnull=False)
            .update(runtime_state=None)
        )
        # The words outlive their message nowhere: the cases' copies (cases.privacy).
        copies = hooks.retain_copies_elsewhere(organization.pk, cutoff)
        if count or media or briefings or states or copies:
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
                    "runtime_states": states,
                    "case_copies": copies,
                },
            )
    if count or media or briefings or states or copies:
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
    # A file sent by its link (no stored file, maybe no caption) still has its link and name.
    for column in ("media_id", "media_url", "media_filename"):
        q |= ~Q(**{column: ""})
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


def _forget_filenames_in_audit(messages: QuerySet[Message]) -> int:
    """Blank the filename the audit row of a file sent to the customer copied
    (``message.media_send``): the row stays, the name goes with the message's own. Before the
    rows forget their names (only messages that still have one are looked up)."""
    ids = [str(pk) for pk in messages.exclude(media_filename="").values_list("pk", flat=True)]
    scrubbed = 0
    with rls.erasure():  # the audit log is append-only, but for an erasure
        for start in range(0, len(ids), 500):
            rows = AuditLog.objects.filter(
                resource_type=Message._meta.model_name,
                resource_id__in=ids[start : start + 500],
                diff__has_key="filename",
            )
            for row in rows.only("pk", "diff"):
                if row.diff.get("filename"):
                    AuditLog.objects.filter(pk=row.pk).update(diff={**row.diff, "filename": ""})
                    scrubbed += 1
    return scrubbed


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
