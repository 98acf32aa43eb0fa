"""The last guard before a log line is written: no query string, credential or request
object reaches the JSON logs (``settings.LOGGING``, the console handler's first filter).

- ``request`` in a record's extra (Django's ``django.request`` and ``django.security``
  loggers put the ``HttpRequest`` there) becomes ``"GET /path"``: its ``repr`` carried the
  full query string — Meta's ``hub.verify_token`` on a refused subscription handshake, an
  invitation code (``?c=``), a password-reset token (``?t=``).
- Those same lines are written after ``RequestIdMiddleware`` has left (Django logs a 4xx or
  5xx response once the middleware chain has returned it), so they had no request id: it is
  taken from the request.
- In the message and in every text extra: ``name=value`` pairs whose name says token,
  secret, password, API key or signature (``access_token=…``, ``hub.verify_token=…``),
  ``Authorization``/``X-Api-Key`` values, ``Bearer`` tokens and the password of a URL
  (``redis://:password@host``) become ``[redacted]``.

Logs are for ids; this is the net under a call site that forgets it, not a licence to log
text. It rewrites the record in place (the console is the only handler).
"""

from __future__ import annotations

import logging
import re
from typing import Any

REDACTED = "[redacted]"

_NAMED_SECRET = re.compile(
    r"(?i)\b([\w.-]*(?:token|secret|password|passwd|api[_-]?key|apikey|signature))"
    r"(=|%3D)([^&\s'\"<>;,]+)"
)
_HEADER_SECRET = re.compile(
    r"(?i)\b((?:proxy-)?authorization|x-api-key)(['\"]?\s*[:=]\s*['\"]?)"
    r"((?:bearer|basic|token)\s+)?([^\s'\",;}]+)"
)
_BEARER = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}")
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@]*):[^@\s/]+@")

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


def redact(text: str) -> str:
    text = _NAMED_SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _HEADER_SECRET.sub(
        lambda m: f"{m.group(1)}{m.group(2)}{m.group(3) or ''}{REDACTED}", text
    )
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    return _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{REDACTED}@", text)


def describe_request(request: object) -> str:
    """``"POST /webhooks/meta/<id>"``: method and path, never the query string."""
    method = str(getattr(request, "method", "") or "")
    path = str(getattr(request, "path", "") or "")
    return f"{method} {path}".strip()


class RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        request = record.__dict__.get("request")
        if request is not None and not isinstance(request, str):
            if not getattr(record, "request_id", ""):
                request_id = str(getattr(request, "request_id", "") or "")
                if request_id:
                    record.request_id = request_id
            record.request = describe_request(request)
        try:
            message = record.getMessage()
        except Exception:  # a malformed call is the handler's to report, not this filter's
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        for key, value in list(record.__dict__.items()):
            if key not in _STANDARD and isinstance(value, str) and not key.startswith("_"):
                cleaned = redact(value)
                if cleaned != value:
                    setattr(record, key, cleaned)
        return True


def _without_query(url: object) -> object:
    return url.split("?", 1)[0] if isinstance(url, str) else url


def scrub_sentry_event(event: Any, hint: Any) -> Any:
    """Sentry's ``before_send``: its Django integration sends the request's query string
    as it came (``send_default_pii=False`` does not touch it) — an invitation code, a reset
    token, Meta's ``hub.verify_token`` — and HTTP breadcrumbs the URLs the process called.
    Both leave without their query; breadcrumb messages are redacted like a log line."""
    request = event.get("request")
    if isinstance(request, dict):
        request.pop("query_string", None)
        request["url"] = _without_query(request.get("url"))
    breadcrumbs = event.get("breadcrumbs")
    values = breadcrumbs.get("values") if isinstance(breadcrumbs, dict) else breadcrumbs
    for crumb in values if isinstance(values, list) else []:
        if not isinstance(crumb, dict):
            continue
        data = crumb.get("data")
        if isinstance(data, dict):
            data.pop("http.query", None)
            data.pop("http.fragment", None)
            if "url" in data:
                data["url"] = _without_query(data["url"])
        if isinstance(crumb.get("message"), str):
            crumb["message"] = redact(crumb["message"])
    return event
