"""Redis clients built once per connection pool, for Celery's broker and Django's cache.

A ``redis.Redis`` object is only a handle on a connection pool: every command takes a
connection from the pool and gives it back, so one object serves every thread (redis-py
documents clients as thread-safe; pipelines are not, and are still made per use). Building
one is not free: redis-py 8 copies its ~170 response callbacks into a case-insensitive dict
on every ``Redis()`` — ~0.1 ms of CPU on the 2-core machine. Two libraries build one per
operation:

- kombu's Redis transport, on every publish, every late ack and every write of the unacked
  index (``Channel.conn_or_acquire`` → ``_create_client``): a turn publishes its delivery
  and its worker acks and indexes the turn's message, the outbox worker again;
- Django's ``RedisCache``, on every cache call (``RedisCacheClient.get_client``): each
  webhook counts a rate-limit hit.

Under the load bench that construction was about a tenth of the turn workers' Python time
(py-spy). These subclasses keep one client per pool and build a new one whenever the pool
changes — kombu drops its pools on a connection error, and the next operation must use the
new pool — so behaviour, reconnection included, is the library's own.

Used by ``CELERY_BROKER_TRANSPORT`` (``redis://`` brokers) and ``CACHES`` (config.settings.work).
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient as DjangoRedisCacheClient
from kombu.transport import redis as kombu_redis


class BrokerChannel(kombu_redis.Channel):
    """kombu's Redis channel, with its synchronous client kept for the life of its pool."""

    _pool_client: Any = None

    def _create_client(self, asynchronous: bool = False) -> Any:
        if asynchronous:  # kombu builds the event loop's client once already
            return super()._create_client(asynchronous=True)  # type: ignore[misc]
        pool = self.pool
        client = self._pool_client
        if client is None or client.connection_pool is not pool:
            client = super()._create_client()  # type: ignore[misc]
            self._pool_client = client
        return client


class BrokerTransport(kombu_redis.Transport):
    """kombu's Redis transport with :class:`BrokerChannel`."""

    Channel = BrokerChannel


class CacheClient(DjangoRedisCacheClient):
    """Django's Redis cache client, with one ``redis.Redis`` per connection pool."""

    def __init__(self, servers: list[str], **options: Any) -> None:
        super().__init__(servers, **options)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
        client = self._clients.get(id(pool))
        if client is None:
            client = self._client(connection_pool=pool)  # type: ignore[attr-defined]
            # Benign race: two threads may both build one; either is a handle on the pool.
            self._clients[id(pool)] = client
        return client


class RedisCache(DjangoRedisCache):
    """Django's ``RedisCache`` on :class:`CacheClient`."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = CacheClient
