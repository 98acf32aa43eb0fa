"""WhatsApp channel adapters (WAHA, Meta Cloud API, simulator) behind one ``ChannelAdapter``.

``get_adapter(channel.provider)`` is the only entry point the rest of the product needs; the
adapters are stateless, so one instance per provider is shared.
"""

from __future__ import annotations

from collections.abc import Mapping

from conversation.channels.base import ChannelAdapter
from conversation.channels.meta import MetaAdapter
from conversation.channels.simulator import SimulatorAdapter
from conversation.channels.waha import WahaAdapter

_ADAPTERS: Mapping[str, ChannelAdapter] = {
    "waha": WahaAdapter(),
    "meta": MetaAdapter(),
    "simulator": SimulatorAdapter(),
}
PROVIDERS: tuple[str, ...] = tuple(_ADAPTERS)


class UnknownProviderError(ValueError):
    """No adapter for this provider name (a bad ChannelSession row or URL segment)."""


def get_adapter(provider: str) -> ChannelAdapter:
    try:
        return _ADAPTERS[provider]
    except (KeyError, TypeError):
        raise UnknownProviderError(f"unknown channel provider: {provider!r}") from None


__all__ = ["PROVIDERS", "UnknownProviderError", "get_adapter"]
