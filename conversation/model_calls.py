"""Choosing the model client for a call, and the LlmCall ledger that records every call.

No API key configured → the offline model. Tests install a client with
``use_model_client`` (a scripted model, or the Anthropic client pointed at a local
HTTP server) instead of patching SDK classes.
"""

from __future__ import annotations

import contextlib
import contextvars
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from django.conf import settings

from conversation.llm import build_client
from conversation.llm.base import CallRecord, CallRecorder, ModelClient
from conversation.models import LlmCall

ClientFactory = Callable[[CallRecorder], ModelClient]
_override: ClientFactory | None = None
# The spend gate (analytics budgets): while a turn of an organization past its budget runs,
# every model call it makes goes to the offline model instead (``spend_stopped``).
_spend_stop: contextvars.ContextVar[str] = contextvars.ContextVar("spend_stop", default="")


class Ledger:
    """Buffers the calls of one turn and writes them in one INSERT (``flush``)."""

    def __init__(
        self,
        *,
        organization_id: uuid.UUID,
        conversation_id: uuid.UUID | None = None,
        turn_id: uuid.UUID | None = None,
        provider: str = "",
    ) -> None:
        self.organization_id = organization_id
        self.conversation_id = conversation_id
        self.turn_id = turn_id
        self.provider = provider
        self.records: list[CallRecord] = []

    def __call__(self, record: CallRecord) -> None:
        self.records.append(record)

    def flush(self) -> int:
        if not self.records:
            return 0
        LlmCall.objects.bulk_create(
            [
                LlmCall(
                    organization_id=self.organization_id,
                    conversation_id=self.conversation_id,
                    turn_id=self.turn_id,
                    purpose=r.purpose[:60],
                    provider=(r.provider or self.provider)[:16],
                    model=r.model[:80],
                    input_tokens=r.usage.input_tokens,
                    output_tokens=r.usage.output_tokens,
                    cache_read_tokens=r.usage.cache_read_input_tokens,
                    cache_creation_tokens=r.usage.cache_creation_input_tokens,
                    latency_ms=r.latency_ms,
                    error_code=r.error_code[:64],
                )
                for r in self.records
            ]
        )
        written = len(self.records)
        self.records = []
        return written


def model_client(
    recorder: CallRecorder, *, provider: str = "anthropic", max_retries: int | None = None
) -> ModelClient:
    if _spend_stop.get():
        return build_client("offline", recorder)
    if _override is not None:
        return _override(recorder)
    return build_client(
        provider_name(provider),
        recorder,
        api_key=settings.ANTHROPIC_API_KEY,
        base_url=settings.ANTHROPIC_BASE_URL,
        max_retries=settings.ANTHROPIC_MAX_RETRIES if max_retries is None else max_retries,
        timeout_s=settings.ANTHROPIC_TIMEOUT_S,
    )


def provider_name(provider: str = "anthropic") -> str:
    if _spend_stop.get():
        return "offline"
    return _unstopped_provider(provider)


def _unstopped_provider(provider: str) -> str:
    if _override is not None:
        return "override"
    return "offline" if provider == "offline" or not settings.ANTHROPIC_API_KEY else "anthropic"


def stopped_by_spend(provider: str = "anthropic") -> bool:
    """Whether ``provider`` runs offline only because the organization is past its AI budget
    (``spend_stopped``): the workspace has a model this turn may not call."""
    return bool(_spend_stop.get()) and _unstopped_provider(provider) != "offline"


@contextlib.contextmanager
def use_model_client(factory: ClientFactory) -> Iterator[None]:
    """Route every model call to ``factory(recorder)`` while the block runs."""
    global _override
    previous, _override = _override, factory
    try:
        yield
    finally:
        _override = previous


@contextlib.contextmanager
def spend_stopped(reason: str) -> Iterator[None]:
    """While the block runs (in this thread/context), model calls go to the offline model:
    the turn's organization is past its budget (``reason``, e.g. ``monthly_spend``)."""
    token = _spend_stop.set(reason)
    try:
        yield
    finally:
        _spend_stop.reset(token)


def record_context(**ids: Any) -> dict[str, str]:
    return {k: str(v) for k, v in ids.items() if v is not None}
