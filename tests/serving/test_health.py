"""Liveness and readiness: what a load balancer sees."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import pytest
from django.test import Client


@pytest.mark.django_db
def test_liveness_answers_without_login(client: Client) -> None:
    response = client.get("/health/live/")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readiness_reports_each_check_when_all_answer(client: Client) -> None:
    response = client.get("/health/ready/")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "cache", "broker", "static"}
    assert all(check["ok"] for check in body["checks"].values())


@pytest.mark.django_db
def test_readiness_is_503_and_names_the_cache_when_the_cache_is_unreachable(
    client: Client, settings: Any
) -> None:
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            # Port 1 on loopback: nothing listens there, the connection is refused at once.
            "LOCATION": "redis://127.0.0.1:1/0",
        }
    }
    response = client.get("/health/ready/")
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["cache"]["ok"] is False
    assert checks["database"]["ok"] is True
    assert "127.0.0.1" not in response.content.decode()  # no connection details leak


@pytest.mark.django_db
def test_readiness_is_503_when_the_configured_broker_is_unreachable(
    client: Client, settings: Any
) -> None:
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    response = client.get("/health/ready/")
    assert response.status_code == 503
    assert response.json()["checks"]["broker"]["ok"] is False


@pytest.mark.django_db
def test_readiness_is_503_when_production_static_files_were_never_collected(
    client: Client, settings: Any, tmp_path: Any
) -> None:
    # Production's manifest storage over an empty STATIC_ROOT: a process started without
    # ``collectstatic``, whose pages would all answer 500.
    settings.STATIC_ROOT = tmp_path
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
    response = client.get("/health/ready/")
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["static"]["ok"] is False
    assert checks["database"]["ok"] is True


@pytest.mark.django_db
def test_probes_answer_a_load_balancer_that_sends_the_instance_address_as_host(
    client: Client, settings: Any
) -> None:
    # Kubernetes and cloud load balancers probe http://<pod or instance IP>:<port>/ — a Host
    # no ALLOWED_HOSTS lists, which every page rightly refuses with 400.
    settings.ALLOWED_HOSTS = ["app.example.com"]
    for path in ("/health/live/", "/health/ready/", "/health/live"):
        response = client.get(path, HTTP_HOST="10.0.3.7:8000")
        assert response.status_code == 200, (path, response.status_code)
        assert response["X-Content-Type-Options"] == "nosniff"  # still behind the headers
    assert client.get("/accounts/login/", HTTP_HOST="10.0.3.7:8000").status_code == 400


@pytest.mark.django_db
def test_liveness_touches_no_database_even_with_a_session(
    world: Any, django_assert_num_queries: Any
) -> None:
    client = world.client_for(world.admin)  # a session cookie, as a browser would send
    with django_assert_num_queries(0):
        response = client.get("/health/live/")
    assert response.status_code == 200


@pytest.mark.django_db
def test_readiness_fails_in_seconds_and_says_why_when_the_broker_hangs(
    client: Client, settings: Any
) -> None:
    # A Redis that accepts connections and never answers (overloaded, paused): without
    # socket timeouts the probe held its web thread for a minute and a half.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{silent.getsockname()[1]}/0"
    box: dict[str, Any] = {}
    started = time.monotonic()
    probe = threading.Thread(target=lambda: box.setdefault("r", client.get("/health/ready/")))
    probe.daemon = True
    probe.start()
    probe.join(20)
    silent.close()
    assert not probe.is_alive(), "readiness still waiting on the broker after 20 s"
    assert time.monotonic() - started < 10
    response = box["r"]
    assert response.status_code == 503
    broker = response.json()["checks"]["broker"]
    assert broker["ok"] is False
    assert "broker" in broker["message"]
    assert "127.0.0.1" not in response.content.decode()  # no connection details leak
