"""One Redis client per connection pool for the broker and the cache
(config/redis_clients.py): the same messages and values as the libraries' own classes, one
``redis.Redis`` built per pool instead of one per operation, and a new one when kombu drops
its pools after a connection error. On the real Redis of the test run."""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest
import redis
from django.core.cache import caches
from kombu import Connection

from config.redis_clients import BrokerChannel, BrokerTransport
from tests.serving.settings_probe import settings_lines

REDIS = os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every ``redis.Redis`` built while the test runs."""
    built: list[object] = []
    original = redis.Redis.__init__

    def init(self: redis.Redis, *args: object, **kwargs: object) -> None:
        built.append(self)
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(redis.Redis, "__init__", init)
    return built


def test_broker_messages_go_through_and_one_client_serves_every_publish_and_ack(
    counted: list[object],
) -> None:
    name = f"test-redis-clients-{uuid.uuid4().hex}"
    with Connection(REDIS, transport=BrokerTransport) as conn:
        assert isinstance(conn.default_channel, BrokerChannel)
        queue = conn.SimpleQueue(name)
        try:
            for i in range(5):
                queue.put({"n": i})
            received = []
            channel: Any = conn.default_channel
            client = channel._create_client()
            for _ in range(5):
                message = queue.get(timeout=5)
                received.append(message.payload["n"])
                # Held in the unacked index until acked (what redelivery would replay).
                assert client.hexists(channel.unacked_key, message.delivery_tag)
                message.ack()
                assert not client.hexists(channel.unacked_key, message.delivery_tag)
        finally:
            queue.clear()
            queue.close()
    assert received == [0, 1, 2, 3, 4]
    # Five publishes, five gets with their unacked-index writes and five acks: kombu's own
    # channel builds a client for each (15 or more); this one builds its synchronous client
    # once, beside the event loop's.
    assert len(counted) <= 2


def test_the_broker_builds_a_new_client_when_kombu_drops_its_pools() -> None:
    with Connection(REDIS, transport=BrokerTransport) as conn:
        channel: Any = conn.default_channel
        first = channel._create_client()
        assert channel._create_client() is first
        # What kombu does on a connection error (Channel._disconnect_pools).
        channel._disconnect_pools()
        second = channel._create_client()
        assert second is not first
        assert second.connection_pool is channel.pool
        assert second.ping() is True


def test_cache_values_round_trip_and_one_client_serves_every_call(
    settings: object, counted: list[object]
) -> None:
    settings.CACHES = {  # type: ignore[attr-defined]
        "default": {"BACKEND": "config.redis_clients.RedisCache", "LOCATION": REDIS}
    }
    cache = caches["default"]
    key = f"test:{uuid.uuid4().hex}"
    cache.set(key, {"a": 1}, timeout=30)
    for _ in range(10):
        assert cache.get(key) == {"a": 1}
    assert cache.add(f"{key}:n", 0, timeout=30)
    assert cache.incr(f"{key}:n") == 1
    assert len(counted) == 1


def _settings(**env: str) -> list[str]:
    return settings_lines(
        [
            "getattr(settings, 'CELERY_BROKER_TRANSPORT', None)",
            "settings.CACHES['default']['BACKEND']",
        ],
        drop_prefixes=("CELERY_", "REDIS_", "DJANGO_"),
        **env,
    )


def test_settings_use_the_pooled_clients_for_redis_and_leave_other_brokers_alone() -> None:
    assert _settings(CELERY_BROKER_URL="redis://127.0.0.1:6379/3", REDIS_URL=REDIS) == [
        "config.redis_clients:BrokerTransport",
        "config.redis_clients.RedisCache",
    ]
    # TLS to Redis keeps kombu's own handling of the scheme; AMQP is not Redis at all.
    assert _settings(CELERY_BROKER_URL="rediss://example:6380/0")[0] == "None"
    assert _settings(CELERY_BROKER_URL="amqp://guest@localhost//")[0] == "None"
    assert _settings()[1] == "django.core.cache.backends.locmem.LocMemCache"
