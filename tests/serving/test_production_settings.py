"""``DJANGO_ENV=production`` refuses to start with a missing or insecure setting, saying which
and how to fix it; trusts the forms posted from its public names behind any proxy; and
bounds the wait for a database that does not answer."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from tests.serving.settings_probe import settings_lines

ROOT = Path(__file__).resolve().parents[2]
DROP = ("DJANGO_", "DATABASE_", "CELERY_", "REDIS_", "FIELD_ENCRYPTION")
DEV_KEY = "dev-insecure-retaguarda-key-change-me-0123456789abcdef"


def _production_env(**extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(DROP)}
    return {
        **clean,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_ENV": "production",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "app.example.com",
        "LOG_LEVEL": "WARNING",
        **extra,
    }


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _import_settings(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); print('started')"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("change", "names"),
    [
        ({"DJANGO_DEBUG": "true"}, "DJANGO_DEBUG"),
        ({"DJANGO_SECRET_KEY": "change-me-to-a-long-random-string"}, "DJANGO_SECRET_KEY"),
        ({"DJANGO_SECRET_KEY": DEV_KEY}, "DJANGO_SECRET_KEY"),
        ({"DJANGO_SECRET_KEY": "short-but-set"}, "DJANGO_SECRET_KEY"),
        ({"DJANGO_ALLOWED_HOSTS": ""}, "DJANGO_ALLOWED_HOSTS"),
        ({"DJANGO_ALLOWED_HOSTS": "*"}, "DJANGO_ALLOWED_HOSTS"),
        ({"DJANGO_ENV": "prod"}, "DJANGO_ENV"),
    ],
)
def test_production_refuses_to_start_with_an_insecure_setting_and_names_it(
    change: dict[str, str], names: str
) -> None:
    result = _import_settings(_production_env(**change))
    assert result.returncode != 0, result.stdout
    assert "started" not in result.stdout
    assert "ImproperlyConfigured" in result.stderr, result.stderr[-2000:]
    message = result.stderr[result.stderr.rindex("ImproperlyConfigured") :]
    assert names in message, message


def test_production_lists_every_problem_at_once() -> None:
    from config.settings import guard

    problems = guard.production_problems(
        debug=True, secret_key="", development_key=DEV_KEY, allowed_hosts=[]
    )
    message = guard.refusal(problems)
    for name in ("DJANGO_SECRET_KEY", "DJANGO_DEBUG", "DJANGO_ALLOWED_HOSTS"):
        assert name in message
    assert "token_urlsafe" in message  # says how to make a key


def test_production_starts_with_sound_settings() -> None:
    result = _import_settings(_production_env())
    assert result.returncode == 0, result.stderr
    assert "started" in result.stdout


def _production_trusted_origins(**extra: str) -> str:
    """``CSRF_TRUSTED_ORIGINS`` of a production process with ``extra`` settings, as JSON."""
    (origins,) = settings_lines(
        ["json.dumps(settings.CSRF_TRUSTED_ORIGINS)"],
        drop_prefixes=DROP,
        DJANGO_ENV="production",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        **{"DJANGO_ALLOWED_HOSTS": "app.example.com", **extra},
    )
    return str(origins)


def test_forms_posted_from_the_public_names_are_trusted_behind_any_proxy() -> None:
    origins = _production_trusted_origins(DJANGO_ALLOWED_HOSTS="app.example.com,.lojas.example.com")
    assert origins == '["https://app.example.com", "https://*.lojas.example.com"]'


def test_explicit_csrf_trusted_origins_win() -> None:
    origins = _production_trusted_origins(DJANGO_CSRF_TRUSTED_ORIGINS="https://painel.example.com")
    assert origins == '["https://painel.example.com"]'


def test_a_database_that_never_answers_fails_a_connection_in_seconds() -> None:
    # A server that accepts the TCP connection and never speaks (overloaded, paused, a
    # half-open network path): libpq's default was to wait for ever.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    port = silent.getsockname()[1]
    code = (
        "import time, django; django.setup(); from django.db import connection; "
        "t = time.monotonic()\n"
        "try:\n    connection.ensure_connection()\n"
        "except Exception as exc:\n    print(type(exc).__name__, round(time.monotonic() - t, 1))"
    )
    env = {
        **_production_env(),
        "DATABASE_URL": f"postgres://nobody@127.0.0.1:{port}/retaguarda",
        "DB_CONNECT_TIMEOUT_S": "2",
    }
    started = time.monotonic()
    try:
        result = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=40,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the connection to a silent database was still waiting after 40 s")
    finally:
        silent.close()
    assert result.stdout.startswith("OperationalError"), result.stdout + result.stderr[-1500:]
    assert time.monotonic() - started < 40


def test_serve_refuses_to_start_without_its_own_encryption_keys(tmp_path: Path) -> None:
    env = _production_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'prod.sqlite3'}",
        DJANGO_STATIC_ROOT=str(tmp_path / "static"),
        SKIP_SETUP="1",
        BIND=f"127.0.0.1:{_free_port()}",
        WEB_CONCURRENCY="1",
    )
    try:
        result = subprocess.run(
            ["bash", str(ROOT / "scripts" / "serve.sh")],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
            start_new_session=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("serve.sh went on to serve without FIELD_ENCRYPTION_KEYS")
    assert result.returncode != 0
    assert "accounts.E010" in result.stdout + result.stderr
    assert not (tmp_path / "prod.sqlite3").exists()  # stopped before migrating


def test_serve_checks_pass_with_every_production_setting(tmp_path: Path) -> None:
    env = _production_env(FIELD_ENCRYPTION_KEYS=Fernet.generate_key().decode())
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "ERROR"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_counts_logins_by_the_client_address_the_proxy_saw() -> None:
    # Behind the TLS-ending proxy production requires, REMOTE_ADDR is the proxy's for every
    # client: counting by it lets one stranger lock a user out from everywhere.
    code = (
        "import django; django.setup(); from django.test import RequestFactory; "
        "from accounts.throttle import client_ip; "
        "r = RequestFactory().get('/', REMOTE_ADDR='10.0.0.2', "
        "HTTP_X_FORWARDED_FOR='198.51.100.7, 203.0.113.9'); print(client_ip(r))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=_production_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "203.0.113.9"
