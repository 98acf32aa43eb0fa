"""The model seam. See ``base`` for the interface, ``protocol`` for the tool names and note
markers every model shares; ``build_client`` picks an implementation by provider name."""

from __future__ import annotations

from .anthropic import AnthropicClient
from .base import (
    CallRecord,
    CallRecorder,
    ChatMessage,
    ContentBlock,
    LlmBadResponse,
    LlmError,
    LlmInvalidRequest,
    LlmRateLimited,
    LlmTimeout,
    LlmUnavailable,
    ModelClient,
    ModelRequest,
    ModelResponse,
    TextBlock,
    ToolChoice,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
    null_recorder,
)
from .offline import OfflineModel
from .protocol import RELAY_MARKER
from .scripted import ScriptedModel

__all__ = [
    "RELAY_MARKER",
    "AnthropicClient",
    "CallRecord",
    "CallRecorder",
    "ChatMessage",
    "ContentBlock",
    "LlmBadResponse",
    "LlmError",
    "LlmInvalidRequest",
    "LlmRateLimited",
    "LlmTimeout",
    "LlmUnavailable",
    "ModelClient",
    "ModelRequest",
    "ModelResponse",
    "OfflineModel",
    "ScriptedModel",
    "TextBlock",
    "ToolChoice",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "Usage",
    "build_client",
    "null_recorder",
]


def build_client(
    provider: str,
    recorder: CallRecorder,
    *,
    api_key: str = "",
    base_url: str | None = None,
    max_retries: int = 2,
    timeout_s: float = 30,
) -> ModelClient:
    """The client for ``provider``: ``"offline"`` (the embedded model) or ``"anthropic"``.

    Callers pick the provider (``conversation.model_calls`` from settings); this is the one
    place that knows which class implements it, so production code never imports the
    offline model itself.
    """
    if provider == "offline":
        return OfflineModel(recorder=recorder)
    return AnthropicClient(
        api_key,
        base_url=base_url,
        recorder=recorder,
        max_retries=max_retries,
        timeout_s=timeout_s,
    )
