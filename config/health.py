"""Health endpoints for a load balancer or an orchestrator.

- ``/health/live/`` — the process answers (no I/O): restart it when this fails.
- ``/health/ready/`` — the process can do its job: the database answers a query, the cache
  stores and returns a value, (when a broker is configured) the broker accepts a
  connection, and the pages' static files resolve (in production the manifest storage
  answers 500 on every page of a process started without ``collectstatic``). Take the
  instance out of rotation while this answers 503.

Both are answered by :class:`HealthProbeMiddleware`, ahead of the host check, the session
and the login: a load balancer or a Kubernetes probe sends the instance's address as Host
(``10.0.3.7:8000``), which ``ALLOWED_HOSTS`` rightly refuses to every page (400), and the
liveness probe must never touch the database, even with a session cookie. Neither answer
depends on the Host header, so nothing is lost by not checking it here.

Every check is bounded: kombu connects to Redis with no socket timeout at all, so a broker
that accepts connections and never answers (overloaded, paused, half-partitioned) held a
readiness request — and its web thread — for a minute and a half.

Why not django-health-check: its Celery check sends a task and waits for a worker to run it,
which ties the web tier's readiness to the workers' — a busy turns queue would take every
web process out of rotation. Readiness here checks only what this process itself needs, in
about thirty lines, and says which check failed (never a secret or a connection string).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable

from django.conf import settings
from django.contrib.staticfiles.storage import staticfiles_storage
from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

log = logging.getLogger(__name__)

# Connect, and every read and write on the socket: a probe answers within a few seconds
# (the same bound as every other Redis client of the product, config.settings.work).
BROKER_TIMEOUT_S = settings.REDIS_SOCKET_TIMEOUT_S


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def _cache() -> None:
    key = f"health:{uuid.uuid4().hex}"
    cache.set(key, "ok", timeout=10)
    if cache.get(key) != "ok":
        raise RuntimeError("cache did not return the value it stored")
    cache.delete(key)


def _broker() -> None:
    if not settings.CELERY_BROKER_URL:
        return  # embedded default: tasks run in-process, there is no broker to reach
    from config.celery import app

    with app.connection_for_write(
        url=settings.CELERY_BROKER_URL,
        connect_timeout=BROKER_TIMEOUT_S,
        transport_options={
            "socket_timeout": BROKER_TIMEOUT_S,
            "socket_connect_timeout": BROKER_TIMEOUT_S,
        },
    ) as conn:
        # One attempt: the probe itself is the retry.
        conn.ensure_connection(max_retries=0, timeout=BROKER_TIMEOUT_S)


# The stylesheet every page links (templates/base.html): if it resolves, the pages can render.
PAGE_STYLESHEET = "css/app.css"


def _static_files() -> None:
    # With production's manifest storage a file missing from the manifest raises, and
    # every page with it; elsewhere the storage resolves any name.
    staticfiles_storage.url(PAGE_STYLESHEET)


CHECKS: dict[str, Callable[[], None]] = {
    "database": _database,
    "cache": _cache,
    "broker": _broker,
    "static": _static_files,
}
# What a failed check means, for the operator reading the probe (never the exception's own
# text: it can carry a host, a user or a URL with its password).
CONSEQUENCES = {
    "database": "database unreachable: no page or webhook can be served",
    "cache": "cache unreachable: rate limits and login throttling cannot count",
    "broker": "broker unreachable: new turns and deliveries cannot be queued",
    "static": "static files not collected: every page would fail (run collectstatic)",
}


@never_cache
@require_GET
def live(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@never_cache
@require_GET
def ready(request: HttpRequest) -> JsonResponse:
    results: dict[str, dict[str, object]] = {}
    healthy = True
    for name, check in CHECKS.items():
        started = time.perf_counter()
        try:
            check()
        except Exception as exc:
            healthy = False
            results[name] = {
                "ok": False,
                "error": type(exc).__name__,
                "message": CONSEQUENCES[name],
            }
            log.warning(
                "readiness check failed", extra={"check": name, "error": type(exc).__name__}
            )
        else:
            results[name] = {"ok": True}
        results[name]["ms"] = round((time.perf_counter() - started) * 1000, 1)
    status = 200 if healthy else 503
    return JsonResponse(
        {"status": "ok" if healthy else "unavailable", "checks": results}, status=status
    )


PROBES = {"/health/live/": live, "/health/ready/": ready}


class HealthProbeMiddleware:
    """Answers ``/health/live/`` and ``/health/ready/`` (with or without the final slash)
    before the host check, the session, the login and the tenant context; placed after
    the security headers, so the probes carry them too."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        probe = PROBES.get(path if path.endswith("/") else f"{path}/")
        if probe is None:
            return self.get_response(request)
        return probe(request)
