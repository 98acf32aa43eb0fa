"""The model seam: one small interface for every model call.

Nothing here knows Django or any app above it. The turn pipeline builds a
``ModelRequest``; an implementation (Anthropic or offline) answers with a
``ModelResponse`` or raises one ``LlmError`` subclass. Every call is reported
to an injected ``CallRecorder`` so the caller can keep its cost ledger.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Role = Literal["user", "assistant"]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True)
class TextBlock:
    text: str


@dataclass(frozen=True)
class ToolUseBlock:
    id: str
    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True)
class ToolResultBlock:
    tool_use_id: str
    content: str
    is_error: bool = False


ContentBlock = TextBlock | ToolUseBlock | ToolResultBlock


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str | Sequence[ContentBlock]

    def text(self) -> str:
        """The plain text of this message (text blocks joined)."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))


@dataclass(frozen=True)
class ToolChoice:
    """``auto`` (model decides), ``any`` (must call some tool) or ``tool`` (must call ``name``)."""

    type: Literal["auto", "any", "tool"] = "auto"
    name: str | None = None


@dataclass(frozen=True)
class ModelRequest:
    purpose: str  # e.g. "orchestrator", "intent_router", "conversation_intent_classifier"
    model: str
    system: Sequence[str]  # system blocks; the whole list + tools is the cached prefix
    messages: Sequence[ChatMessage]
    tools: Sequence[ToolSpec] = ()
    tool_choice: ToolChoice | None = None
    max_tokens: int = 1024
    temperature: float | None = None
    timeout_s: float = 30.0
    # Ids only (organization_id, conversation_id, turn_id, ...): handed to the recorder.
    context: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


@dataclass(frozen=True)
class ModelResponse:
    content: Sequence[TextBlock | ToolUseBlock]
    stop_reason: str
    model: str
    usage: Usage = Usage()

    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    def text(self) -> str:
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    def tool_input(self, name: str) -> Mapping[str, Any] | None:
        """The input of the forced tool ``name``; failing that (a model that answered in
        prose), the JSON object embedded in its text — the tolerant second defence."""
        for block in self.tool_uses():
            if block.name == name and isinstance(block.input, Mapping):
                return block.input
        return extract_json_object(self.text())


def extract_json_object(text: str) -> Mapping[str, Any] | None:
    """The object between the first ``{`` and the last ``}`` of ``text``, if it parses."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(text[start : end + 1])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class LlmError(Exception):
    """A model call failed. ``code`` is a stable, loggable identifier."""

    code = "llm_error"
    retryable = False


class LlmTimeout(LlmError):
    code = "llm_timeout"
    retryable = True


class LlmUnavailable(LlmError):
    """Provider down, overloaded (529), 5xx or unreachable."""

    code = "llm_unavailable"
    retryable = True


class LlmRateLimited(LlmError):
    code = "llm_rate_limited"
    retryable = True


class LlmInvalidRequest(LlmError):
    """4xx other than 429: our request is wrong (or the model is not enabled)."""

    code = "llm_invalid_request"


class LlmBadResponse(LlmError):
    """The provider answered 200 with something we cannot use."""

    code = "llm_bad_response"


@dataclass(frozen=True)
class CallRecord:
    purpose: str
    model: str
    usage: Usage
    latency_ms: int
    error_code: str = ""
    context: Mapping[str, Any] = field(default_factory=dict)
    provider: str = ""  # which implementation answered: anthropic | offline | scripted


class CallRecorder(Protocol):
    def __call__(self, record: CallRecord) -> None: ...


class ModelClient(Protocol):
    """Answer one request. Raises ``LlmError`` (never anything else) on failure."""

    name: str  # "anthropic" | "offline" | "scripted"

    def complete(self, request: ModelRequest) -> ModelResponse: ...


def null_recorder(record: CallRecord) -> None:
    """A recorder that keeps nothing (for pure tests and benchmarks)."""


class ReportingClient:
    """What every ``ModelClient`` shares: each call is reported to its ``_recorder`` (read
    at call time: a test may swap it). A failing recorder is logged on the client's own
    module logger and swallowed: the ledger must not turn an answered call into a failed
    turn."""

    name: str
    _recorder: CallRecorder

    def _report(
        self,
        request: ModelRequest,
        started: float,
        *,
        usage: Usage | None = None,
        error_code: str = "",
        model: str | None = None,
        log_extra: Mapping[str, Any] | None = None,
    ) -> None:
        """The call began at ``started`` (``time.monotonic``); ``model``: the one that
        answered, by default the one asked for."""
        record = CallRecord(
            purpose=request.purpose,
            model=request.model if model is None else model,
            usage=Usage() if usage is None else usage,
            latency_ms=int((time.monotonic() - started) * 1000),
            error_code=error_code,
            context=dict(request.context),
            provider=self.name,
        )
        try:
            self._recorder(record)
        except Exception:
            log = logging.getLogger(type(self).__module__)
            log.exception("llm call recorder failed", extra=log_extra)
