"""Deterministic dialogue layer in front of the LLM orchestrator (no Django, no project imports).

Entry point: ``ConversationRuntime.try_handle`` (wire one with ``build_runtime``).
"""

from __future__ import annotations

from .action_executor import ToolAdapter, ToolBackend
from .demo_backend import DemoBackend, ExecutedAction
from .intent_extractor import (
    INTENT_CLASSIFICATION_SCHEMA,
    HistoryTurn,
    IntentClassifierContext,
    IntentClassifierError,
    IntentClassifierLLM,
)
from .item_matcher import FuzzyItemMatcher, ItemMatcherError, ItemMatcherLLM
from .result import RuntimeResult
from .runtime import ConversationRuntime, build_runtime
from .serialization import deserialize_state, serialize_state
from .state import SCHEMA_VERSION, Channel, ConversationState
from .store import ConversationStateStore, InMemoryStateStore

__all__ = [
    "INTENT_CLASSIFICATION_SCHEMA",
    "SCHEMA_VERSION",
    "Channel",
    "ConversationRuntime",
    "ConversationState",
    "ConversationStateStore",
    "DemoBackend",
    "ExecutedAction",
    "FuzzyItemMatcher",
    "HistoryTurn",
    "InMemoryStateStore",
    "IntentClassifierContext",
    "IntentClassifierError",
    "IntentClassifierLLM",
    "ItemMatcherError",
    "ItemMatcherLLM",
    "RuntimeResult",
    "ToolAdapter",
    "ToolBackend",
    "build_runtime",
    "deserialize_state",
    "serialize_state",
]
