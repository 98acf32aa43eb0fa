"""The Anthropic implementation of the model seam (official ``anthropic`` SDK, 2.x).

Wire notes that shaped this module:

* Prompt caching: the stable prefix is tools + system (the API orders the cache prefix
  tools -> system -> messages). The last tool and the last system block each carry
  ``cache_control: {"type": "ephemeral"}`` so both the tool catalogue and the prompt are
  cached; the per-turn messages are not.
* SDK 2.x speaks API version 2026-10-21, which rejects ``temperature`` (HTTP 400, even at
  the default value) and whose SDK no longer has the parameter. ``ModelRequest.temperature``
  is therefore not sent; it stays in the request type for other providers.
* SDK 2.x authenticates with ``Authorization: Bearer <key>`` (not ``x-api-key``).
* Retries are the SDK's own (``max_retries``; it honours ``retry-after`` and
  ``x-should-retry`` and retries 408/409/429/5xx and connection errors). ``request.timeout_s``
  bounds each HTTP attempt, so the worst-case wall time of ``complete`` is roughly
  ``(max_retries + 1) * timeout_s`` plus the back-off sleeps.
* The 200 body is read raw and validated here rather than through the SDK's model parsing:
  the SDK builds its response models without validation and returns a plain ``str`` for a
  non-JSON body, so a malformed answer would surface far from the call as an
  ``AttributeError``. Here it becomes ``LlmBadResponse`` at the seam.
* ``stop_reason``: ``refusal``, and ``max_tokens`` inside a tool call (its input is
  truncated), are ``LlmBadResponse`` too (``unusable_answer``), recorded with their usage.

Every ``complete`` call reports exactly one ``CallRecord`` (success or failure) and raises
nothing but ``LlmError`` subclasses.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

import anthropic

from .base import (
    CallRecorder,
    ChatMessage,
    LlmBadResponse,
    LlmError,
    LlmInvalidRequest,
    LlmRateLimited,
    LlmTimeout,
    LlmUnavailable,
    ModelRequest,
    ModelResponse,
    ReportingClient,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

logger = logging.getLogger(__name__)

CACHE_CONTROL: Mapping[str, str] = {"type": "ephemeral"}
# What a history message with no text (a media message without caption) reads as on the wire.
NO_TEXT_MARKER = "[mensagem sem texto]"

# Content block types we may receive but do not surface: we never enable thinking, but a
# model that thinks anyway must not turn a usable answer into an error.
_IGNORED_BLOCK_TYPES = frozenset({"thinking", "redacted_thinking"})


_SdkKey = tuple[str, str | None, int, float]
_sdk_clients: dict[_SdkKey, anthropic.Anthropic] = {}
_sdk_lock = threading.Lock()


def _sdk_client(
    api_key: str, base_url: str | None, max_retries: int, timeout_s: float
) -> anthropic.Anthropic:
    key = (api_key, base_url, max_retries, timeout_s)
    with _sdk_lock:
        client = _sdk_clients.get(key)
        if client is None:
            client = _sdk_clients[key] = anthropic.Anthropic(
                api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout_s
            )
        return client


class AnthropicClient(ReportingClient):
    """``ModelClient`` over the Anthropic Messages API."""

    name = "anthropic"

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str | None = None,
        recorder: CallRecorder,
        max_retries: int = 2,
        timeout_s: float = 30,
    ) -> None:
        self._recorder = recorder
        # Building an SDK client costs 70-300 ms; one per configuration lives for the
        # process (it owns the HTTP connection pool) and every turn's wrapper shares it.
        self._sdk_key: _SdkKey = (api_key, base_url, max_retries, float(timeout_s))
        self._sdk = _sdk_client(*self._sdk_key)

    def close(self) -> None:
        """Close the shared connection pool of this configuration (tests, shutdown)."""
        with _sdk_lock:
            if _sdk_clients.get(self._sdk_key) is self._sdk:
                del _sdk_clients[self._sdk_key]
        self._sdk.close()

    def complete(self, request: ModelRequest) -> ModelResponse:
        started = time.monotonic()
        try:
            response = self._complete(request)
        except LlmError as exc:
            self._record(request, Usage(), started, exc.code)
            raise
        except Exception as exc:
            # A bug or an SDK behaviour we did not foresee: the seam's promise is
            # "LlmError only", so wrap it, but keep the traceback in the log.
            logger.exception(
                "anthropic call failed unexpectedly",
                extra={"purpose": request.purpose, **_log_ids(request)},
            )
            err = LlmError(f"unexpected {type(exc).__name__}")
            self._record(request, Usage(), started, err.code)
            raise err from exc
        problem = unusable_answer(response)
        if problem is not None:
            # Its tokens were billed all the same: the ledger keeps them under the error.
            self._record(request, response.usage, started, problem.code)
            raise problem
        self._record(request, response.usage, started, "")
        return response

    def _complete(self, request: ModelRequest) -> ModelResponse:
        kwargs = build_create_kwargs(request)
        try:
            raw = self._sdk.messages.with_raw_response.create(**kwargs, timeout=request.timeout_s)
            body = raw.read()
        except anthropic.AnthropicError as exc:
            raise map_sdk_error(exc) from exc
        return parse_response_body(body, fallback_model=request.model)

    def _record(self, request: ModelRequest, usage: Usage, started: float, error_code: str) -> None:
        self._report(
            request, started, usage=usage, error_code=error_code, log_extra=_log_ids(request)
        )


def _log_ids(request: ModelRequest) -> dict[str, Any]:
    return {k: v for k, v in request.context.items() if k.endswith("_id")}


# --- request -------------------------------------------------------------------------


def build_create_kwargs(request: ModelRequest) -> dict[str, Any]:
    """The keyword arguments of ``messages.create`` for ``request`` (the JSON wire body)."""
    kwargs: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": [_message_param(m) for m in request.messages],
    }
    # The API rejects empty text blocks; an empty system block carries nothing anyway.
    system: list[dict[str, Any]] = [
        {"type": "text", "text": s} for s in request.system if s.strip()
    ]
    if system:
        system[-1]["cache_control"] = dict(CACHE_CONTROL)
        kwargs["system"] = system
    if request.tools:
        tools: list[dict[str, Any]] = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
            for t in request.tools
        ]
        tools[-1]["cache_control"] = dict(CACHE_CONTROL)
        kwargs["tools"] = tools
    if request.tool_choice is not None:
        choice = request.tool_choice
        if choice.type == "tool":
            if not choice.name:
                raise LlmInvalidRequest("tool_choice 'tool' needs a tool name")
            kwargs["tool_choice"] = {"type": "tool", "name": choice.name}
        else:
            kwargs["tool_choice"] = {"type": choice.type}
    return kwargs


def _message_param(message: ChatMessage) -> dict[str, Any]:
    if isinstance(message.content, str):
        # The API refuses a message with no text (HTTP 400), e.g. an image the team sent
        # with no caption in the history: a marker keeps the turn, and the roles alternating.
        text = message.content if message.content.strip() else NO_TEXT_MARKER
        return {"role": message.role, "content": text}
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            # The API answers with blank text blocks beside tool calls but refuses them in a
            # request (400 "text content blocks must be non-empty"): a replayed assistant
            # turn would fail the next step of the tool loop. They carry nothing.
            if block.text.strip():
                blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ToolUseBlock):
            blocks.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input)}
            )
        elif isinstance(block, ToolResultBlock):
            blocks.append(
                {
                    "type": "tool_result",
                    "tool_use_id": block.tool_use_id,
                    "content": block.content,
                    "is_error": block.is_error,
                }
            )
        else:
            raise LlmInvalidRequest(f"unsupported content block {type(block).__name__}")
    return {"role": message.role, "content": blocks or [{"type": "text", "text": NO_TEXT_MARKER}]}


# --- errors ----------------------------------------------------------------------------


def map_sdk_error(exc: anthropic.AnthropicError) -> LlmError:
    """Translate an SDK exception (raised after the SDK's own retries) into our hierarchy."""
    # Order matters: APITimeoutError is an APIConnectionError, OverloadedError an
    # InternalServerError.
    if isinstance(exc, anthropic.APITimeoutError):
        return LlmTimeout("anthropic request timed out")
    if isinstance(exc, anthropic.APIConnectionError):
        return LlmUnavailable("anthropic unreachable")
    if isinstance(exc, anthropic.APIResponseValidationError):
        return LlmBadResponse(f"anthropic response failed validation ({exc.status_code})")
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        detail = f"anthropic {status} {exc.type or 'error'}: {exc.api_message or ''}".rstrip(": ")
        if isinstance(exc, anthropic.RateLimitError):
            return LlmRateLimited(detail)
        if status == 408:
            # The API's own request timeout: same meaning for the caller as ours.
            return LlmTimeout(detail)
        if status >= 500:
            return LlmUnavailable(detail)
        return LlmInvalidRequest(detail)
    # CredentialsError and friends: our configuration is wrong.
    return LlmInvalidRequest(f"anthropic client error: {type(exc).__name__}")


# --- response --------------------------------------------------------------------------


def parse_response_body(body: bytes, *, fallback_model: str) -> ModelResponse:
    """Parse a 200 Messages API body into a ``ModelResponse`` or raise ``LlmBadResponse``."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise LlmBadResponse("anthropic body is not JSON") from exc
    if not isinstance(data, dict):
        raise LlmBadResponse("anthropic body is not an object")
    content = data.get("content")
    if not isinstance(content, list):
        raise LlmBadResponse("anthropic body has no content list")
    blocks = tuple(b for b in (_parse_block(raw) for raw in content) if b is not None)
    stop_reason = data.get("stop_reason")
    if not isinstance(stop_reason, str):
        raise LlmBadResponse("anthropic body has no stop_reason")
    model = data.get("model")
    return ModelResponse(
        content=blocks,
        stop_reason=stop_reason,
        model=model if isinstance(model, str) and model else fallback_model,
        usage=_parse_usage(data.get("usage")),
    )


# Stop reasons of an answer cut short: a tool call that ends it holds only what was generated
# before the cut (a half-written send_message), so it must not run.
_CUT_SHORT = frozenset({"max_tokens", "model_context_window_exceeded"})


def unusable_answer(response: ModelResponse) -> LlmBadResponse | None:
    """Why a well-formed answer still cannot be acted on, or None. A refusal has no usable
    content (often none at all: a tool loop would end in silence); an answer cut short
    inside a tool call would run that call with truncated input. As errors, both take the
    caller's failure path (the turn's model-down answer; a check that fails closed)."""
    if response.stop_reason == "refusal":
        return LlmBadResponse("anthropic declined to answer (refusal)")
    content = response.content
    if response.stop_reason in _CUT_SHORT and content and isinstance(content[-1], ToolUseBlock):
        return LlmBadResponse(f"anthropic answer cut short in a tool call ({response.stop_reason})")
    return None


def _parse_block(raw: object) -> TextBlock | ToolUseBlock | None:
    if not isinstance(raw, dict):
        raise LlmBadResponse("content block is not an object")
    kind = raw.get("type")
    if kind == "text":
        text = raw.get("text")
        if not isinstance(text, str):
            raise LlmBadResponse("text block without text")
        return TextBlock(text=text)
    if kind == "tool_use":
        block_id, name, tool_input = raw.get("id"), raw.get("name"), raw.get("input")
        if not isinstance(block_id, str) or not block_id:
            raise LlmBadResponse("tool_use block without id")
        if not isinstance(name, str) or not name:
            raise LlmBadResponse("tool_use block without name")
        if not isinstance(tool_input, dict):
            raise LlmBadResponse("tool_use input is not an object")
        return ToolUseBlock(id=block_id, name=name, input=tool_input)
    if kind in _IGNORED_BLOCK_TYPES:
        return None
    raise LlmBadResponse(f"unexpected content block type {str(kind)[:40]!r}")


def _parse_usage(raw: object) -> Usage:
    if not isinstance(raw, dict):
        raise LlmBadResponse("anthropic body has no usage")

    def count(key: str, *, required: bool) -> int:
        value = raw.get(key)
        if value is None and not required:
            return 0
        # bool is an int subclass; a boolean token count is a malformed body.
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise LlmBadResponse(f"usage.{key} is not a token count")
        return value

    return Usage(
        input_tokens=count("input_tokens", required=True),
        output_tokens=count("output_tokens", required=True),
        cache_read_input_tokens=count("cache_read_input_tokens", required=False),
        cache_creation_input_tokens=count("cache_creation_input_tokens", required=False),
    )
