"""Outbound HTTP for the adapters: one httpx choke point and one error mapping.

Tests (and anything else) patch ``build_client`` here, or intercept with respx; adapters never
build their own client. Transport failures become ``SendError`` so the outbox only ever sees one
exception type and reads ``retryable`` from it.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpx

from conversation.channels.base import SendError, too_large_error

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT_SECONDS = 5.0
READ_TIMEOUT_SECONDS = 15.0

# Parses a non-2xx response into the SendError to raise.
ErrorMapper = Callable[[httpx.Response], SendError]


# Set by the caller around a send (the outbox: OUTBOX_PROVIDER_TIMEOUT_S); adapters know no
# settings, so the timeout travels with the call rather than through every signature.
_timeout_s: ContextVar[float | None] = ContextVar("provider_timeout_s", default=None)


@contextmanager
def provider_timeout(seconds: float) -> Iterator[None]:
    """Clients built inside use ``seconds`` for read/write/pool (connect: at most 5 s)."""
    token = _timeout_s.set(seconds)
    try:
        yield
    finally:
        _timeout_s.reset(token)


def build_client() -> httpx.Client:
    """The one place an outbound HTTP client is made (connect 5 s, read/write/pool 15 s, or
    the ``provider_timeout`` in force)."""
    seconds = _timeout_s.get() or READ_TIMEOUT_SECONDS
    return httpx.Client(
        timeout=httpx.Timeout(seconds, connect=min(CONNECT_TIMEOUT_SECONDS, seconds)),
        follow_redirects=False,
    )


def post_json(
    url: str,
    *,
    headers: Mapping[str, str],
    payload: Mapping[str, Any],
    provider: str,
    error_mapper: ErrorMapper,
) -> dict[str, Any]:
    """POST ``payload`` as JSON; return the decoded 2xx body (``{}`` when it is not an object)."""
    return _exchange(
        lambda client: client.post(url, headers=dict(headers), json=dict(payload)),
        provider,
        error_mapper,
    )


def post_files(
    url: str,
    *,
    headers: Mapping[str, str],
    data: Mapping[str, str],
    files: Mapping[str, tuple[str, bytes, str]],
    provider: str,
    error_mapper: ErrorMapper,
) -> dict[str, Any]:
    """POST a multipart form (an upload); the decoded 2xx body."""
    return _exchange(
        lambda client: client.post(url, headers=dict(headers), data=dict(data), files=dict(files)),
        provider,
        error_mapper,
    )


def get_json(
    url: str,
    *,
    headers: Mapping[str, str],
    provider: str,
    error_mapper: ErrorMapper,
    params: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """GET ``url``; the decoded 2xx body (``{}`` when it is not an object)."""
    # No ``params`` at all when none are given: an empty mapping would drop the URL's own
    # query (a ``paging.next`` cursor).
    extra: dict[str, Any] = {"params": dict(params)} if params else {}
    return _exchange(
        lambda client: client.get(url, headers=dict(headers), **extra), provider, error_mapper
    )


def get_bytes(
    url: str,
    *,
    headers: Mapping[str, str],
    provider: str,
    error_mapper: ErrorMapper,
    max_bytes: int,
) -> tuple[bytes, str]:
    """GET a file, streamed and cut off past ``max_bytes`` (``SendError`` ``too_large``, never
    a partial file); returns the content and its Content-Type."""
    with (
        _transport_errors(provider),
        build_client() as client,
        client.stream("GET", url, headers=dict(headers)) as response,
    ):
        if not response.is_success:
            response.read()
            _decoded(response, provider, error_mapper)  # raises
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise too_large_error(provider, max_bytes)
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise too_large_error(provider, max_bytes)
            chunks.append(chunk)
        return b"".join(chunks), response.headers.get("Content-Type", "")


def _exchange(
    send: Callable[[httpx.Client], httpx.Response], provider: str, error_mapper: ErrorMapper
) -> dict[str, Any]:
    """One request on a fresh client: transport failures as ``SendError``, the 2xx body
    decoded, any other status raised through ``error_mapper``."""
    with _transport_errors(provider), build_client() as client:
        response = send(client)
    return _decoded(response, provider, error_mapper)


@contextmanager
def _transport_errors(provider: str) -> Iterator[None]:
    """httpx's transport failures as ``SendError`` (with their retryability)."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise SendError(f"{provider}: request timed out", retryable=True, code="timeout") from exc
    except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        # A misconfigured API URL will not fix itself by retrying.
        raise SendError(
            f"{provider}: invalid API URL", retryable=False, code="invalid_config"
        ) from exc
    except httpx.TransportError as exc:
        raise SendError(
            f"{provider}: connection failed", retryable=True, code="connection_error"
        ) from exc


def _decoded(response: httpx.Response, provider: str, error_mapper: ErrorMapper) -> dict[str, Any]:
    if response.is_success:
        return json_or_empty(response)
    error = error_mapper(response)
    logger.warning(
        "channel send failed",
        extra={
            "provider": provider,
            "http_status": response.status_code,
            "error_code": error.code,
            "provider_code": error.provider_code,
            "retryable": error.retryable,
        },
    )
    raise error


def json_or_empty(response: httpx.Response) -> dict[str, Any]:
    """The response's JSON object; ``{}`` when the body is not JSON or not an object."""
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def classify_status(status: int) -> tuple[str, bool]:
    """Default category and retryability of an HTTP error status."""
    if status == 429:
        return "rate_limited", True
    if status >= 500:
        return "provider_unavailable", True
    if status in (401, 403):
        return "auth_failed", False
    return "rejected", False


# The local id of a message the provider accepted without telling its id.
UNKNOWN_ID_PREFIX = "unknown-"


def fallback_message_id(provider: str) -> str:
    """Id for a message the provider accepted (2xx) without telling us its id.

    Raising would make the outbox mark a delivered message as failed (or, worse, resend it), so
    the send counts as done under a unique local id; status updates for it will not match.
    """
    message_id = f"{UNKNOWN_ID_PREFIX}{uuid.uuid4().hex}"
    logger.warning(
        "provider accepted a message without returning its id",
        extra={"provider": provider, "provider_message_id": message_id},
    )
    return message_id
