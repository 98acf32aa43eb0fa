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
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

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
    status, page = _get(f"{production_server}/accounts/login/", {"X-Forwarded-Proto": "https"})
    assert status == 200, page[:500]
    assert "Entrar" in page or "entrar" in page

    # collectstatic ran: assets are served by whitenoise under their hashed names.
    assets = re.findall(r'(?:href|src)="(/static/[^"]+)"', page)
    assert assets, "the login page links no static asset"
    hashed = [a for a in assets if re.search(r"\.[0-9a-f]{12}\.(css|js)$", a)]
    assert hashed, assets
    status, _ = _get(f"{production_server}{hashed[0]}", {"X-Forwarded-Proto": "https"})
    assert status == 200


def test_production_server_redirects_plain_http_pages_to_https(production_server: str) -> None:
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        opener.open(f"{production_server}/accounts/login/", timeout=10)
    except urllib.error.HTTPError as exc:
        assert exc.code == 301
        assert exc.headers["Location"].startswith("https://")
    else:
        pytest.fail("a plain-HTTP page was served instead of redirected")
