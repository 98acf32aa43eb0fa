"""LLM stage: a forced tool call, parsed tolerantly, that never raises.

The tool's closed schema is the first defence; parsing is the second (spec Task 3): the
model may still answer in text, name an intent the router does not have, or put a
string where the confidence goes.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from conversation.llm.base import (
    ChatMessage,
    LlmError,
    ModelClient,
    ModelRequest,
    ToolChoice,
    extract_json_object,
)

from .prompt import TOOL_NAME, build_system_prompt, build_user_prompt, intent_tool
from .types import NONE_INTENT, ClassificationResult, IntentOption, IntentVerdict

logger = logging.getLogger(__name__)

PURPOSE = "intent_router"
# The spec counts a timeout as a failure but names no figure. A classification is a
# ~30-token answer (Haiku: well under 2 s); past this the turn stops waiting and falls back.
TIMEOUT_S = 8.0
MAX_TOKENS = 128  # the tool input is ~30 tokens; headroom without paying for prose

_NO_VERDICT = IntentVerdict(intent=None, confidence=0.0)


def _confidence(value: object) -> float:
    # bool is an int in Python but never a confidence; NaN compares false everywhere.
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, float(value)))


def verdict_from_object(obj: Mapping[str, Any], intent_names: Sequence[str]) -> IntentVerdict:
    """Closed-world reading: an intent outside the router is refused (hallucination)."""
    raw = obj.get("intent")
    if not isinstance(raw, str):
        return _NO_VERDICT
    name = raw.strip()
    if name.casefold() == NONE_INTENT:
        return IntentVerdict(intent=None, confidence=_confidence(obj.get("confidence")))
    if name not in intent_names:
        # Tolerate case/spacing slips only when they point at exactly one intent.
        folded = [n for n in intent_names if n.casefold() == name.casefold()]
        if len(folded) != 1:
            return _NO_VERDICT
        name = folded[0]
    return IntentVerdict(intent=name, confidence=_confidence(obj.get("confidence")))


def parse_intent_verdict(text: str, intent_names: Sequence[str]) -> IntentVerdict:
    """Spec's ``parseIntentVerdict``: unknown or invalid -> (None, 0), never raises."""
    obj = extract_json_object(text)
    return _NO_VERDICT if obj is None else verdict_from_object(obj, intent_names)


def classify_with_llm(
    client: ModelClient,
    *,
    model: str,
    intents: Sequence[IntentOption],
    message: str,
    context: Mapping[str, Any],
    timeout_s: float = TIMEOUT_S,
) -> ClassificationResult:
    """Ask ``model`` which intent ``message`` is. Any failure -> status "failed".

    ``context`` carries ids only (organization_id, conversation_id, turn_id); it reaches
    the call recorder and the logs, never the prompt.
    """
    started = time.perf_counter()

    def result(verdict: IntentVerdict, error_code: str = "") -> ClassificationResult:
        if error_code:
            logger.warning(
                "intent classifier failed",
                extra={"error_code": error_code, "model": model, "context": dict(context)},
            )
        return ClassificationResult(
            intent=verdict.intent,
            confidence=verdict.confidence,
            status="failed" if error_code else "ok",
            latency_ms=(time.perf_counter() - started) * 1000,
            error_code=error_code,
        )

    try:
        request = ModelRequest(
            purpose=PURPOSE,
            model=model,
            system=[build_system_prompt(intents)],
            messages=[ChatMessage(role="user", content=build_user_prompt(message))],
            tools=[intent_tool(intents)],
            tool_choice=ToolChoice("tool", name=TOOL_NAME),
            max_tokens=MAX_TOKENS,
            temperature=0.0,
            timeout_s=timeout_s,
            context=context,
        )
        response = client.complete(request)
        obj = response.tool_input(TOOL_NAME)
    except LlmError as exc:
        return result(_NO_VERDICT, exc.code)
    except Exception:
        # The seam promises LlmError only; a bug in a client must still not end the turn.
        logger.exception("intent classifier crashed", extra={"context": dict(context)})
        return result(_NO_VERDICT, "unexpected_error")
    if obj is None:
        return result(_NO_VERDICT, "no_verdict")
    return result(verdict_from_object(obj, [o.name for o in intents]))
