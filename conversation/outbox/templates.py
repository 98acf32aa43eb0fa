"""WhatsApp message templates of a Meta channel: synced from the Graph API, given a purpose
on the channel's page, and sent (with their own language and every body parameter) when
the 24-hour window is closed.

``ChannelSession.templates`` holds one entry per template: ``{"name", "language",
"status", "category", "body", "parameters", "purpose"}``. ``ChannelSession.template_for``
(the cases' follow-ups and notices) reads ``name``/``purpose`` of the same entries, so a
purpose set here is what those sends use. A purpose goes only to an approved template.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from accounts.services import audit_log_write
from conversation.channels import get_adapter
from conversation.channels.base import SendError, TemplateInfo
from conversation.channels.transport import provider_timeout
from conversation.models import ChannelSession, Conversation, Message, SenderKind

from .delivery import channel_config
from .writes import outbound_enqueue

log = logging.getLogger(__name__)

# What a template can be chosen for (the values the cases app asks ``template_for``).
PURPOSES = ("follow_up", "case_notice", "reengage")
SYNC_TIMEOUT_S = 10.0
MAX_PARAMETER_LENGTH = 1024
_PLACEHOLDER = re.compile(r"\{\{\s*([^{}\s]+)\s*\}\}")


class TemplateError(Exception):
    """A template action that cannot be done; ``code`` is stable, the page words it."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass(frozen=True)
class TemplateSync:
    total: int
    added: int
    removed: int


def templates_of(channel: ChannelSession) -> list[dict[str, Any]]:
    """The channel's template entries that name a template (malformed ones skipped)."""
    return [e for e in channel.templates or [] if isinstance(e, dict) and str(e.get("name") or "")]


def find_template(channel: ChannelSession, name: str, language: str) -> dict[str, Any] | None:
    return _entry_for(templates_of(channel), name, language)


def _entry_for(
    entries: Sequence[dict[str, Any]], name: str, language: str
) -> dict[str, Any] | None:
    for entry in entries:
        if entry.get("name") == name and entry.get("language") == language:
            return entry
    return None


def _is_approved(status: object) -> bool:
    """Whether a template of this status may be sent or given a purpose (no status: a
    provider that does not review templates)."""
    return status in ("APPROVED", "", None)


def _templates_save(
    channel: ChannelSession,
    entries: list[dict[str, Any]],
    *,
    actor: Any,
    action: str,
    diff: dict[str, Any],
) -> None:
    """Store the channel's new template list and audit the change (in the caller's
    transaction, under its lock of the channel row)."""
    channel.templates = entries
    channel.save(update_fields=["templates"])
    audit_log_write(
        actor=actor,
        action=action,
        resource=channel,
        diff=diff,
    )


def channel_templates_sync(*, channel: ChannelSession, actor: Any) -> TemplateSync:
    """Replace the channel's template list with the account's (Graph ``message_templates``),
    keeping each template's purpose. The provider call runs before the transaction.
    Raises ``TemplateError`` (``unsupported``, ``invalid_config``, ``auth_failed``,
    ``unreachable``...)."""
    try:
        with provider_timeout(SYNC_TIMEOUT_S):
            remote = get_adapter(channel.provider).list_templates(channel_config(channel))
    except SendError as exc:
        log.warning(
            "template sync failed", extra={"channel_id": str(channel.pk), "error_code": exc.code}
        )
        known = ("unsupported", "invalid_config", "auth_failed", "rejected")
        raise TemplateError(exc.code if exc.code in known else "unreachable") from exc
    with transaction.atomic():
        channel = ChannelSession.objects.select_for_update().get(pk=channel.pk)
        before = templates_of(channel)
        entries = merge_templates(before, remote)
        keys_before = {(e.get("name"), e.get("language")) for e in before}
        keys_after = {(e["name"], e["language"]) for e in entries}
        result = TemplateSync(
            total=len(entries),
            added=len(keys_after - keys_before),
            removed=len(keys_before - keys_after),
        )
        _templates_save(
            channel,
            entries,
            actor=actor,
            action="channel.templates_sync",
            diff={"total": result.total, "added": result.added, "removed": result.removed},
        )
    return result


def merge_templates(
    before: Sequence[dict[str, Any]], remote: Sequence[TemplateInfo]
) -> list[dict[str, Any]]:
    """The synced entries: the provider's templates, each with the purpose it had (by name
    and language, else by name) while it stays approved."""
    by_key = {(e.get("name"), e.get("language")): e for e in before}
    by_name = {e.get("name"): e for e in before if e.get("purpose")}
    entries: list[dict[str, Any]] = []
    for t in remote:
        old = by_key.get((t.name, t.language)) or by_name.get(t.name) or {}
        purpose = str(old.get("purpose") or "") if _is_approved(t.status) else ""
        entries.append(
            {
                "name": t.name,
                "language": t.language,
                "status": t.status,
                "category": t.category,
                "body": t.body,
                "parameters": t.parameters,
                "purpose": purpose,
            }
        )
    return sorted(entries, key=lambda e: (e["name"], e["language"]))


def channel_template_purpose_set(
    *, channel: ChannelSession, actor: Any, name: str, language: str, purpose: str
) -> None:
    """Give the template ``name``/``language`` the ``purpose`` ("" clears it); the purpose
    moves from any other template that had it. Audited."""
    if purpose and purpose not in PURPOSES:
        raise TemplateError("invalid_purpose")
    with transaction.atomic():
        channel = ChannelSession.objects.select_for_update().get(pk=channel.pk)
        entries = [dict(e) for e in templates_of(channel)]
        target = _entry_for(entries, name, language)
        if target is None:
            raise TemplateError("unknown_template")
        if purpose and not _is_approved(target.get("status")):
            raise TemplateError("not_approved")
        before = str(target.get("purpose") or "")
        for entry in entries:
            if purpose and entry.get("purpose") == purpose:
                entry["purpose"] = ""
        target["purpose"] = purpose
        _templates_save(
            channel,
            entries,
            actor=actor,
            action="channel.template_purpose",
            diff={"template": f"{name}/{language}", "purpose": [before, purpose]},
        )


def render_body(body: str, parameters: Sequence[str]) -> str:
    """The template's text with its placeholders filled, in order of first appearance (what
    the conversation page shows for the sent message)."""
    names = list(dict.fromkeys(_PLACEHOLDER.findall(body)))
    values = dict(zip(names, parameters, strict=False))
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), body)


def template_message_send(
    *,
    conversation: Conversation,
    actor: Any,
    name: str,
    language: str,
    parameters: Sequence[str],
) -> Message:
    """Queue the channel's template ``name``/``language`` for the conversation, with exactly
    the body parameters it asks for. Audited."""
    channel = conversation.channel
    entry = find_template(channel, name, language)
    if entry is None:
        raise TemplateError("unknown_template")
    if not _is_approved(entry.get("status")):
        raise TemplateError("not_approved")
    values = [p.strip() for p in parameters]
    expected = int(entry.get("parameters") or 0)
    if len(values) != expected or any(not v for v in values):
        raise TemplateError("wrong_parameters")
    if any(len(v) > MAX_PARAMETER_LENGTH for v in values):
        raise TemplateError("wrong_parameters")
    body = render_body(str(entry.get("body") or ""), values) or name
    with transaction.atomic():
        message = outbound_enqueue(
            conversation=conversation,
            body=body,
            sender_kind=SenderKind.HUMAN,
            sent_by=actor if getattr(actor, "is_authenticated", False) else None,
            template_name=name,
            template_language=language,
            template_params=values,
        )
        conversation.save(update_fields=["last_message_at"])
        audit_log_write(
            actor=actor,
            action="message.template_send",
            resource=message,
            diff={"template": f"{name}/{language}", "parameters": len(values)},
        )
    return message
