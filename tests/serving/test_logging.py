"""What the production log stream holds: JSON lines with request ids, never a query string,
a credential or a provider URL — through the handler ``settings.LOGGING`` configures, and
gunicorn's own lines too."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from accounts.logging import JsonFormatter

ROOT = Path(__file__).resolve().parents[2]
VERIFY_TOKEN = "vtk-SEGREDO-6f5e4d3c2b1a"


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    """The configured console handler (settings.LOGGING), writing to a buffer."""
    handler = next(
        h
        for h in logging.getLogger().handlers
        if isinstance(h, logging.StreamHandler) and isinstance(h.formatter, JsonFormatter)
    )
    buffer = io.StringIO()
    previous = handler.setStream(buffer)
    try:
        yield buffer
    finally:
        handler.setStream(previous)  # type: ignore[arg-type]


def _lines(buffer: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buffer.getvalue().splitlines() if line.strip()]


@pytest.mark.django_db
def test_a_refused_meta_handshake_logs_no_verify_token_and_carries_its_request_id(
    world: Any, log_stream: io.StringIO
) -> None:
    response = Client().get(
        f"/webhooks/meta/{world.channel_a.pk}",
        {"hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "1"},
    )
    assert response.status_code >= 400
    text = log_stream.getvalue()
    assert VERIFY_TOKEN not in text
    lines = [line for line in _lines(log_stream) if line["logger"] == "django.request"]
    assert lines, text
    for line in lines:
        assert line["request"] == f"GET /webhooks/meta/{world.channel_a.pk}"
        # Django logs a 4xx after the middleware chain returned: the id comes from the request.
        assert line["request_id"] == response["X-Request-Id"]


@pytest.mark.django_db
def test_an_invitation_code_in_the_query_string_never_reaches_the_log(
    log_stream: io.StringIO,
) -> None:
    Client().get("/nao-existe/", {"c": "convite-SEGREDO-123", "t": "reset-SEGREDO-456"})
    text = log_stream.getvalue()
    assert "Not Found" in text
    assert "SEGREDO" not in text


def test_provider_urls_logged_by_http_clients_are_not_written(log_stream: io.StringIO) -> None:
    url = "https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=1&hash=SEGREDO"
    logging.getLogger("httpx").info('HTTP Request: GET %s "HTTP/1.1 200 OK"', url)
    logging.getLogger("httpcore.http11").info("send_request_headers.started %s", url)
    assert "SEGREDO" not in log_stream.getvalue()


@pytest.mark.parametrize(
    "leak",
    [
        "GET https://graph.facebook.com/v20.0/123/media?access_token=EAAG-SEGREDO",
        "headers {'Authorization': 'Bearer EAAG-SEGREDO-0011'}",
        "headers {'X-Api-Key': 'waha-SEGREDO'}",
        "broker redis://:SEGREDO@redis:6379/0 unreachable",
        "hub.verify_token=SEGREDO&hub.challenge=1",
    ],
)
def test_credentials_in_a_message_or_an_extra_are_redacted(
    log_stream: io.StringIO, leak: str
) -> None:
    log = logging.getLogger("conversation.channels")
    log.warning("provider call failed: %s", leak)
    log.warning("provider call failed", extra={"detail": leak})
    text = log_stream.getvalue()
    assert "SEGREDO" not in text
    assert text.count("[redacted]") >= 2


GUNICORN_SCRIPT = """
import datetime, json, runpy, sys
from gunicorn.config import Config
conf = runpy.run_path("config/gunicorn.conf.py")
cfg = Config()
for name, value in conf.items():
    if name in cfg.settings:
        cfg.set(name, value)
cfg.set("accesslog", "-")
logger = cfg.logger_class(cfg)
logger.info("Booting worker with pid: %s", 123)

class Resp:
    status = "200 OK"
    sent = 42
    headers = [("Content-Type", "text/html"), ("X-Request-Id", "abc123def456")]

environ = {
    "REQUEST_METHOD": "GET", "PATH_INFO": "/accounts/senha/redefinir/",
    "QUERY_STRING": "u=MQ&t=reset-SEGREDO",
    "RAW_URI": "/accounts/senha/redefinir/?u=MQ&t=reset-SEGREDO",
    "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1",
    "HTTP_REFERER": "https://app.example.com/accounts/convite/?c=convite-SEGREDO",
}
logger.access(Resp(), environ, environ, datetime.timedelta(milliseconds=12))
"""


def test_gunicorn_writes_json_lines_without_query_strings() -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("WEB_")}
    result = subprocess.run(
        [sys.executable, "-c", GUNICORN_SCRIPT],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert len(lines) == 2, lines
    parsed = [json.loads(line) for line in lines]  # every line is JSON
    boot = next(p for p in parsed if p["logger"] == "gunicorn.error")
    assert boot["event"] == "Booting worker with pid: 123"
    access = next(p for p in parsed if p["logger"] == "gunicorn.access")
    assert access["path"] == "/accounts/senha/redefinir/"
    assert (access["method"], access["status"], access["request_id"]) == (
        "GET",
        200,
        "abc123def456",
    )
    assert "SEGREDO" not in result.stdout + result.stderr


SENTRY_SCRIPT = """
import json, django
django.setup()
import sentry_sdk
before_send = sentry_sdk.get_client().options["before_send"]
event = {
    "request": {
        "url": "https://app.example.com/accounts/convite/?c=convite-SEGREDO",
        "query_string": "c=convite-SEGREDO",
        "method": "GET",
    },
    "breadcrumbs": {"values": [
        {"type": "http", "data": {"url": "https://graph.facebook.com/v20.0/1?access_token=SEGREDO",
                                  "http.query": "access_token=SEGREDO"}},
        {"type": "log", "message": "calling https://h/?access_token=SEGREDO"},
    ]},
}
print(json.dumps(before_send(event, {})))
"""


def test_sentry_events_leave_without_query_strings() -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SENTRY_")}
    result = subprocess.run(
        [sys.executable, "-c", SENTRY_SCRIPT],
        cwd=ROOT,
        # Nothing listens there and nothing is sent: the test reads the configured hook.
        env={**clean, "SENTRY_DSN": "https://public@127.0.0.1:9/1", "LOG_LEVEL": "WARNING"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    event = json.loads(result.stdout.strip().splitlines()[-1])
    assert "SEGREDO" not in json.dumps(event)
    assert event["request"]["url"] == "https://app.example.com/accounts/convite/"
