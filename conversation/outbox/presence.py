"""Read receipts and "digitando...": the customer sees the message read and the agent typing
while a turn runs (Meta ``status: read`` + ``typing_indicator``; WAHA ``sendSeen`` +
``startTyping``, then ``stopTyping``).

Best effort by design: each call has a short timeout, every failure is logged (ids only)
and swallowed, and nothing here touches the database — a provider that is down or slow
never blocks, delays by more than the timeout, or fails a turn. Called with no transaction
open (the turn's decide step), so no lock is held across these calls either.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from django.conf import settings

from conversation.channels import get_adapter
from conversation.channels.base import ChannelAdapter, ChannelConfig
from conversation.channels.transport import provider_timeout
from conversation.models import Conversation, Message

from .delivery import channel_config

log = logging.getLogger(__name__)

PRESENCE_TIMEOUT_S = 3.0


def enabled() -> bool:
    return bool(settings.WHATSAPP_PRESENCE_ENABLED)


@contextmanager
def turn_presence(conversation: Conversation, lines: Sequence[Message]) -> Iterator[None]:
    """Around a turn's decide step: mark the newest customer line read and start typing on
    enter; stop typing on exit (whatever the turn did)."""
    newest = next(
        (m for m in reversed(lines) if m.direction == "inbound" and m.provider_message_id), None
    )
    started = False
    if newest is not None and enabled():
        started = _best_effort(
            "mark_read",
            conversation,
            lambda adapter, config, to: adapter.mark_read(
                config, to=to, message_id=newest.provider_message_id, typing=True
            ),
        )
    try:
        yield
    finally:
        if started:
            _best_effort(
                "stop_typing",
                conversation,
                lambda adapter, config, to: adapter.stop_typing(config, to=to),
            )


PresenceCall = Callable[[ChannelAdapter, ChannelConfig, str], None]


def _best_effort(step: str, conversation: Conversation, call: PresenceCall) -> bool:
    """Run ``call(adapter, config, phone)``; True when it went through."""
    ids = {"conversation_id": str(conversation.pk), "step": step}
    try:
        channel = conversation.channel
        phone = conversation.contact.phone
        with provider_timeout(PRESENCE_TIMEOUT_S):
            call(get_adapter(channel.provider), channel_config(channel), phone)
    except Exception as exc:  # best effort: never let a receipt fail a turn
        log.info(
            "channel presence failed",
            extra={**ids, "error_code": getattr(exc, "code", type(exc).__name__)},
        )
        return False
    return True
