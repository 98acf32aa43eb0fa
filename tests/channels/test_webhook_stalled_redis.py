"""A stalled Redis (it accepts connections and answers nothing, unlike a Redis that is down)
must not hold a webhook: the rate-limit count gives up after the client's socket timeout and
lets the delivery through, so the line is stored and answered, never refused into the
provider's redelivery loop (``accounts.throttle.hit``; the broker's side is the fault drill
``tests/faults/test_faults.py::test_a_stalled_broker_holds_no_webhook``).
"""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterator

import pytest
from django.test import Client, override_settings

from accounts.throttle import hit
from conversation.models import Message
from tests import factories
from tests.faults.harness import post_waha, waha_event

pytestmark = pytest.mark.django_db


class SilentRedis:
    """A TCP server on loopback that accepts every connection and never writes a byte."""

    def __init__(self) -> None:
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self._listener.getsockname()[1]}/0"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self._held.append(conn)  # kept open, never answered

    def close(self) -> None:
        self._listener.close()
        for conn in self._held:
            conn.close()


@pytest.fixture
def stalled_cache() -> Iterator[SilentRedis]:
    server = SilentRedis()
    cache = {
        "BACKEND": "config.redis_clients.RedisCache",
        "LOCATION": server.url,
        "OPTIONS": {"socket_timeout": 0.2, "socket_connect_timeout": 0.2},
    }
    try:
        with override_settings(CACHES={"default": cache}):
            yield server
    finally:
        server.close()


def test_a_rate_limit_count_on_a_stalled_cache_lets_the_hit_through(stalled_cache, caplog):
    with caplog.at_level("WARNING", logger="accounts.throttle"):
        assert hit("webhook:some-channel", limit=1, window_s=60) is True
    record = next(r for r in caplog.records if r.getMessage() == "rate limit not counted")
    assert record.limit_key == "webhook"
    assert record.error == "TimeoutError"
    assert "some-channel" not in record.getMessage()


def test_a_webhook_is_stored_and_acknowledged_while_the_cache_is_stalled(stalled_cache):
    org = factories.make_org("Oficina Parada")
    channel = factories.make_channel(
        org,
        "waha",
        agent=factories.make_agent(org, "Oficina"),
        external_id="stalled-cache",
        webhook_secret="segredo",
    )
    message_id = f"false_5511999990000@c.us_{uuid.uuid4().hex[:24].upper()}"
    event = waha_event(
        session=channel.external_id, phone="5511999990000", text="oi", message_id=message_id
    )

    status = post_waha(Client(raise_request_exception=False), channel, event)

    assert status == 200
    stored = Message.objects.get(channel=channel, provider_message_id=message_id)
    assert stored.direction == "inbound"
