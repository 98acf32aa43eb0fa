"""The documented production command (``scripts/serve.sh``) boots gunicorn with
``DJANGO_ENV=production``: it migrates, collects static files, and then a page, its
hashed static assets and the readiness probe answer."""

from __future__ import annotations

import os
import re
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]
BOOT_TIMEOUT_S = 240  # migrate + compilemessages + collectstatic on a loaded 2-core machine


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # loopback only
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")


def _send(
    url: str, headers: dict[str, str], data: bytes | None = None
) -> tuple[int, dict[str, str], list[str], str]:
    """Status, headers, every Set-Cookie and body, without following a redirect."""
    opener = urllib.request.build_opener(_NoRedirect)
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        response = opener.open(request, timeout=10)  # loopback only
    except urllib.error.HTTPError as exc:
        response = exc
    with response:
        body = response.read().decode("utf-8", "replace")
        return (
            response.status,
            dict(response.headers.items()),
            response.headers.get_all("Set-Cookie") or [],
            body,
        )


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


@pytest.fixture(scope="module")
def production_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp_path = tmp_path_factory.mktemp("production")
    port = _free_port()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DATABASE_", "CELERY_", "DJANGO_", "ANTHROPIC_"))
    }
    env.update(
        DJANGO_ENV="production",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
        FIELD_ENCRYPTION_KEYS=Fernet.generate_key().decode(),
        DATABASE_URL=f"sqlite:///{tmp_path / 'prod.sqlite3'}",
        DJANGO_STATIC_ROOT=str(tmp_path / "static"),
        BIND=f"127.0.0.1:{port}",
        WEB_CONCURRENCY="1",
        WEB_THREADS="2",
        SKIP_SETUP="1",
    )
    log = (tmp_path / "serve.log").open("w")
    process = subprocess.Popen(
        ["bash", str(ROOT / "scripts" / "serve.sh")],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + BOOT_TIMEOUT_S
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(
                    f"serve.sh exited {process.returncode}:\n{(tmp_path / 'serve.log').read_text()}"
                )
            try:
                if _get(f"{base}/health/live/")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        else:
            pytest.fail(f"no answer in {BOOT_TIMEOUT_S}s:\n{(tmp_path / 'serve.log').read_text()}")
        yield base
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        log.close()


def test_production_server_serves_a_page_its_static_files_and_readiness(
    production_server: str,
) -> None:
    status, ready = _get(f"{production_server}/health/ready/")
    assert status == 200, ready  # plain HTTP: the probe is exempt from the HTTPS redirect
    assert '"status": "ok"' in ready

    # The reverse proxy ends TLS and says so; the page renders with production settings.
    status, headers, _, page = _send(
        f"{production_server}/accounts/login/", {"X-Forwarded-Proto": "https"}
    )
    assert status == 200, page[:500]
    assert "max-age=31536000" in headers.get("Strict-Transport-Security", ""), headers
    assert "Entrar" in page or "entrar" in page

    # collectstatic ran: assets are served by whitenoise under their hashed names.
    assets = re.findall(r'(?:href|src)="(/static/[^"]+)"', page)
    assert assets, "the login page links no static asset"
    hashed = [a for a in assets if re.search(r"\.[0-9a-f]{12}\.(css|js)$", a)]
    assert hashed, assets
    status, headers, _, _ = _send(f"{production_server}{hashed[0]}", {"X-Forwarded-Proto": "https"})
    assert status == 200
    # Hashed names never change content: browsers and CDNs keep them for a year or more.
    cache_control = headers.get("Cache-Control", "")
    assert "immutable" in cache_control, cache_control
    max_age = re.search(r"max-age=(\d+)", cache_control)
    assert max_age is not None and int(max_age.group(1)) >= 365 * 24 * 3600, cache_control


def test_production_server_redirects_plain_http_pages_to_https(production_server: str) -> None:
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        opener.open(f"{production_server}/accounts/login/", timeout=10)
    except urllib.error.HTTPError as exc:
        assert exc.code == 301
        assert exc.headers["Location"].startswith("https://")
    else:
        pytest.fail("a plain-HTTP page was served instead of redirected")


def test_login_works_behind_a_proxy_that_passes_its_own_upstream_name_as_host(
    production_server: str,
) -> None:
    # nginx's default: Host is the upstream ("127.0.0.1:<port>"), the browser's Origin is
    # the public name ("https://localhost" here), TLS ended at the proxy.
    public = "https://localhost"
    proxied = {"X-Forwarded-Proto": "https"}
    status, _, cookies, page = _send(f"{production_server}/accounts/login/", proxied)
    assert status == 200, page[:500]
    cookie = next(c.split(";", 1)[0] for c in cookies if c.startswith("__Host-csrftoken="))
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    form = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": token.group(1), "username": "ninguem", "password": "errada"}
    ).encode()
    status, _, _, answer = _send(
        f"{production_server}/accounts/login/",
        {
            **proxied,
            "Cookie": cookie,
            "Origin": public,
            "Referer": f"{public}/accounts/login/",
            "Content-Type": "application/x-www-form-urlencoded",
        },
        data=form,
    )
    # The form was read and the credentials refused (200, the form again) — not a CSRF 403.
    assert status == 200, (status, answer[:800])
    assert "csrfmiddlewaretoken" in answer


def test_production_probes_answer_an_instance_address_as_host(production_server: str) -> None:
    status, body = _get(f"{production_server}/health/ready/", {"Host": "10.0.3.7:8000"})
    assert status == 200, body
