"""Liveness and readiness: what a load balancer sees."""

from __future__ import annotations

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
