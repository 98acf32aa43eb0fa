"""``ToolBackend`` over a real billing system's HTTP API (httpx).

Enabled by ``BILLING_API_URL`` (with ``BILLING_API_TOKEN``, sent as a Bearer token).
The contract this module speaks, all JSON::

    GET  /customers/<phone>/invoice            -> the invoice_detail object
    GET  /invoices/<msisdn>/explanation        -> {"text": "..."}
    POST /vas/cancel          {"items", "workflow_input"}     -> action result
    POST /vas/strategic       {"items", "workflow_input"}     -> action result
    POST /pro-rata            {"items", "remaining"}          -> action result
    POST /workflows/<execution_id>/resume  {"tool", "input_key", "value"} -> action result

An action result has the runtime's keys (``success``, ``not_found``, ``error``,
``errors``, ``message``, ``aguardando_resposta`` + the paused workflow's fields,
``recomenda_finalizacao``); unknown keys are dropped. Every POST carries an
``Idempotency-Key`` naming the consented action, not the turn (``_idempotency_key``): the
conversation, the action's id (the confirmation that authorised it and its place in that
queue: ``ActionStep.action_id``) and its arguments. A retry of the same action, in this
turn or a later one, sends the same key, so a billing system that acted on a call whose
reply was lost does not act twice; two actions never share a key, even in one turn.

Failures never raise into the runtime: they become the executor's outcomes —
404 -> ``{"not_found": True}`` (NO_MATCH); anything else -> ``{"error": <code>}`` (FAILURE)
with a stable code: ``billing_timeout``, ``billing_unreachable``, ``billing_unauthorized``,
``billing_rejected`` (409/422), ``billing_rate_limited``, ``billing_unavailable`` (5xx),
``billing_bad_request`` (other 4xx), ``billing_bad_response`` (200 without a JSON object).
The knowledge search (RAG) stays in the organization's own knowledge base.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .backends import KnowledgeSearch

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 10.0
RESULT_KEYS = frozenset(
    {
        "success",
        "not_found",
        "error",
        "errors",
        "message",
        "aguardando_resposta",
        "execution_id",
        "expected_input_key",
        "allowed_values",
        "question",
        "normalize",
        "recomenda_finalizacao",
    }
)


class BillingError(Exception):
    """A billing call failed; ``code`` is the stable, loggable identifier."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass(frozen=True)
class BillingConfig:
    base_url: str
    token: str
    timeout_s: float = DEFAULT_TIMEOUT_S


def _setting(name: str) -> str:
    # Settings first (config/settings/work.py), the environment as the fallback.
    value = getattr(settings, name, None)
    return str(value if value not in (None, "") else os.environ.get(name, "")).strip()


def billing_config() -> BillingConfig | None:
    """The billing API configuration, or None when the demo backend should be used."""
    base_url = _setting("BILLING_API_URL")
    if not base_url:
        return None
    token = _setting("BILLING_API_TOKEN")
    if not token:
        raise ImproperlyConfigured("BILLING_API_URL is set but BILLING_API_TOKEN is empty.")
    timeout = _setting("BILLING_API_TIMEOUT_S")
    return BillingConfig(
        base_url=base_url.rstrip("/"),
        token=token,
        timeout_s=float(timeout) if timeout else DEFAULT_TIMEOUT_S,
    )


@functools.lru_cache(maxsize=4)
def _http_client(base_url: str, token: str, timeout_s: float) -> httpx.Client:
    # One pooled client per configuration for the process, like the model client.
    return httpx.Client(
        base_url=base_url,
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
        timeout=timeout_s,
    )


class HttpBillingBackend:
    name = "http"

    def __init__(
        self,
        config: BillingConfig,
        *,
        knowledge_search: KnowledgeSearch,
        idempotency_scope: str,
    ) -> None:
        self._client = _http_client(config.base_url, config.token, config.timeout_s)
        self._knowledge = knowledge_search
        self._scope = idempotency_scope  # the conversation: keys never meet across them

    # --- invoice --------------------------------------------------------------------

    def fetch_invoice(self, phone: str) -> dict[str, Any]:
        """The customer's invoice_detail; raises ``BillingError`` (404: ``billing_not_found``)."""
        try:
            data = self._request("GET", f"/customers/{quote(phone, safe='')}/invoice")
        except _NotFound:
            raise BillingError("billing_not_found") from None
        return data

    # --- actions --------------------------------------------------------------------

    def cancelar_vas_single(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> Mapping[str, Any]:
        body = {"items": items, "workflow_input": workflow_input}
        return self._action("/vas/cancel", body, action_id=action_id, args=items)

    def vas_strategic(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> Mapping[str, Any]:
        body = {"items": items, "workflow_input": workflow_input}
        return self._action("/vas/strategic", body, action_id=action_id, args=items)

    def pro_rata(
        self, *, items: list[dict[str, Any]], remaining: list[dict[str, Any]], action_id: str = ""
    ) -> Mapping[str, Any]:
        body = {"items": items, "remaining": remaining}
        return self._action("/pro-rata", body, action_id=action_id, args=items)

    def resume_workflow(
        self, *, tool: str, execution_id: str, input_key: str, value: str
    ) -> Mapping[str, Any]:
        # The execution names the paused action; the answer is this call's argument.
        body = {"tool": tool, "input_key": input_key, "value": value}
        path = f"/workflows/{quote(execution_id, safe='')}/resume"
        return self._action(path, body, action_id="", args=body)

    # --- informative ----------------------------------------------------------------

    def invoice_explanation(self, *, msisdn: str) -> Mapping[str, Any]:
        try:
            data = self._request("GET", f"/invoices/{quote(msisdn, safe='')}/explanation")
        except _NotFound:
            return {"error": "billing_not_found"}
        except BillingError as exc:
            return {"error": exc.code}
        text = data.get("text")
        if not isinstance(text, str) or not text.strip():
            return {"error": "billing_bad_response"}
        return {"success": True, "text": text}

    def buscar_informacao(self, *, queries: Sequence[str]) -> Mapping[str, Any]:
        return self._knowledge.buscar_informacao(queries=queries)

    # --- HTTP -----------------------------------------------------------------------

    def _action(
        self, path: str, body: Mapping[str, Any], *, action_id: str, args: Any
    ) -> Mapping[str, Any]:
        key = _idempotency_key(self._scope, action_id, path, args)
        try:
            data = self._request("POST", path, json=body, headers={"Idempotency-Key": key})
        except _NotFound:
            return {"not_found": True}
        except BillingError as exc:
            return {"error": exc.code}
        return {k: v for k, v in data.items() if k in RESULT_KEYS}

    def _request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response = self._client.request(method, path, **kwargs)
        except httpx.TimeoutException:
            raise self._fail("billing_timeout", path) from None
        except httpx.HTTPError:
            raise self._fail("billing_unreachable", path) from None
        status = response.status_code
        if status == 404:
            raise _NotFound("billing_not_found")
        if status >= 400:
            raise self._fail(_status_code(status), path, status)
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise self._fail("billing_bad_response", path, status)
        return data

    def _fail(self, code: str, path: str, status: int | None = None) -> BillingError:
        logger.warning(
            "billing call failed",
            extra={"error_code": code, "path": path.split("/")[1], "status": status},
        )
        return BillingError(code)


class _NotFound(BillingError):
    pass


def _idempotency_key(scope: str, action_id: str, path: str, args: Any) -> str:
    """One key per consented action: the same for every attempt at it, whatever the turn.

    Its arguments are part of it (the items, or a resume's answer), never the context sent
    beside them (the queue's ``remaining``): the same action always has the same key.
    """
    material = json.dumps(
        [scope, action_id, path, args], sort_keys=True, ensure_ascii=False, default=str
    )
    return "rt-" + hashlib.sha256(material.encode()).hexdigest()


def _status_code(status: int) -> str:
    if status in (401, 403):
        return "billing_unauthorized"
    if status in (409, 422):
        return "billing_rejected"
    if status == 429:
        return "billing_rate_limited"
    if status >= 500:
        return "billing_unavailable"
    return "billing_bad_request"
