"""Pure intent classification for routers: no Django, no database.

``classify`` runs the cascade (local classifier, then the LLM when unsure);
``classify_with_llm`` is the LLM stage alone. Both never raise.
"""

from __future__ import annotations

from .cascade import classify, local_classifier_for, local_training_set
from .llm import classify_with_llm, parse_intent_verdict
from .prompt import build_classifier_prompt, build_system_prompt, intent_tool
from .types import (
    NONE_INTENT,
    CascadeResult,
    ClassificationResult,
    IntentOption,
    IntentVerdict,
)

__all__ = [
    "NONE_INTENT",
    "CascadeResult",
    "ClassificationResult",
    "IntentOption",
    "IntentVerdict",
    "build_classifier_prompt",
    "build_system_prompt",
    "classify",
    "classify_with_llm",
    "intent_tool",
    "local_classifier_for",
    "local_training_set",
    "parse_intent_verdict",
]
