"""Shared helpers of the inbox tests (the tenant world comes from tests/conftest.py)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from accounts.models import Membership
from conversation.models import Conversation
from tests import factories


def membership_of(user: Any) -> Membership:
    return Membership.objects.select_related("user", "organization").get(user=user)


def conversation_with(
    channel: Any, *, phone: str, name: str = "", text: str = "", **fields: Any
) -> Conversation:
    """A conversation whose customer wrote ``text`` just now."""
    conversation = factories.make_conversation(channel, phone=phone)
    if name:
        conversation.contact.name = name
        conversation.contact.save(update_fields=["name"])
    now = timezone.now()
    if text:
        factories.make_message(conversation, text)
        fields.setdefault("last_inbound_at", now)
    fields.setdefault("last_message_at", now)
    Conversation.objects.filter(pk=conversation.pk).update(**fields)
    conversation.refresh_from_db()
    return conversation
