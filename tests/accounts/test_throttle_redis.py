"""The rate-limit counter on Redis (production's cache): one pipelined round trip per hit,
the same counter Django's cache API reads, and a window that expires."""

from __future__ import annotations

import os
import uuid

import pytest
from django.core.cache import caches

from accounts import throttle

REDIS = os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")


# Django's backend, and production's (one client per pool: config/redis_clients.py).
@pytest.fixture(
    params=["django.core.cache.backends.redis.RedisCache", "config.redis_clients.RedisCache"]
)
def redis_cache(settings, request):  # type: ignore[no-untyped-def]
    settings.CACHES = {"default": {"BACKEND": request.param, "LOCATION": REDIS}}
    # Django's setting_changed handler rebuilds the cache handlers both ways.
    return caches["default"]


def test_hits_count_up_to_the_limit_and_refuse_after_it_on_redis(redis_cache, one_rate_window):
    key = f"test:{uuid.uuid4().hex}"
    answers = [throttle.hit(key, limit=3, window_s=60) for _ in range(5)]
    assert answers == [True, True, True, False, False]


def test_the_counter_is_the_one_djangos_cache_reads_and_it_expires(redis_cache):
    key = f"test:{uuid.uuid4().hex}"
    assert throttle._count(key, timeout=30) == 1
    assert throttle._count(key, timeout=30) == 2
    assert redis_cache.get(key) == 2
    client = redis_cache._cache.get_client(redis_cache.make_and_validate_key(key))
    assert 0 < client.ttl(redis_cache.make_and_validate_key(key)) <= 30


def test_a_hit_costs_one_round_trip_on_redis(redis_cache, monkeypatch):
    from redis.client import Pipeline, Redis

    calls: list[str] = []
    real_execute_command = Redis.execute_command
    real_pipeline_execute = Pipeline.execute

    def single(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(str(args[0]))
        return real_execute_command(self, *args, **kwargs)

    def pipelined(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append("pipeline")
        return real_pipeline_execute(self, *args, **kwargs)

    monkeypatch.setattr(Redis, "execute_command", single)
    monkeypatch.setattr(Pipeline, "execute", pipelined)
    throttle.hit(f"test:{uuid.uuid4().hex}", limit=10, window_s=60)
    assert calls == ["pipeline"]
