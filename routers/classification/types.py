"""Values shared by the classification stages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# The answer meaning "no listed intent fits". Reserved: a router intent may not use it.
NONE_INTENT = "none"

Status = Literal["ok", "failed"]
Stage = Literal["local", "llm", "none"]


@dataclass(frozen=True)
class IntentOption:
    """One routable intent as the classifier sees it (a router member, without its agent)."""

    name: str
    description: str
    examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class IntentVerdict:
    """What a classifier answered. ``intent`` None: "none", unknown or unreadable."""

    intent: str | None
    confidence: float


@dataclass(frozen=True)
class ClassificationResult:
    """One LLM classification. ``status`` "failed": the caller falls back (spec Task 4)."""

    intent: str | None
    confidence: float
    status: Status
    latency_ms: float
    error_code: str = ""  # LlmError.code, "no_verdict" or "unexpected_error"; ids only


@dataclass(frozen=True)
class CascadeResult:
    """The router's classification of one message.

    ``stage`` says who decided: the local classifier, the LLM, or nobody (nothing to
    classify). ``local_intent``/``local_confidence`` keep the local guess for telemetry
    even when the LLM decided.
    """

    intent: str | None
    confidence: float
    stage: Stage
    status: Status
    latency_ms: float
    local_intent: str | None = None
    local_confidence: float = 0.0
    error_code: str = ""
