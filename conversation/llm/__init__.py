"""The model seam. See ``base`` for the interface; pick an implementation per workspace."""

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
from .offline import RELAY_MARKER, OfflineModel
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
    "null_recorder",
]
