"""Change of subject: when a conversation that has an agent moves to another.

The resolver today (rule 2 of spec Task 4) moves on any other intent at or above
``min_confidence`` ("alone" below). Reading the follow-up joined to the message that set
the subject ("in context") keeps nearly every follow-up but also holds back real
switches. Measured with the semantic stage alone, at min_confidence 0.6 (bench/router.py):

    routing_dev.json   alone: switches moved 0.78, follow-ups kept 0.73
                       in context: moved 0.40, kept 0.95
    own held-out       alone: moved 0.88, kept 0.94;  in context: moved 0.63, kept 0.94

Neither reaches both targets (moved >= 0.90, kept >= 0.95) without the LLM: the local
stage cannot tell "pago no cartão quando chegar" after an order (a follow-up) from "ah,
vcs aceitam vale refeição?" after an order (a switch). ``should_switch`` is the rule as a
pure function so the resolver can take either reading; ``in_context`` is the verdict on
``context_text(previous, message)``, None for today's rule.
"""

from __future__ import annotations

from conversation.llm.local_classifier import LocalPrediction

from .types import NONE_INTENT

# A verdict this sure switches even when the context still points at the old subject
# ("socorro ele comeu veneno" in a grooming conversation).
SURE_SWITCH = 0.97


def context_text(previous: str | None, message: str) -> str:
    """The text whose verdict says what the conversation is about after ``message``."""
    return f"{previous.strip()} {message.strip()}" if previous and previous.strip() else message


def should_switch(
    sticky_intent: str | None,
    alone: LocalPrediction,
    in_context: LocalPrediction | None,
    *,
    min_confidence: float,
    sure: float = SURE_SWITCH,
) -> bool:
    """True when the message moves the conversation to ``alone.label``."""
    if sticky_intent is None:
        return alone.label not in (None, NONE_INTENT) and alone.confidence >= min_confidence
    if alone.label in (None, NONE_INTENT, sticky_intent) or alone.confidence < min_confidence:
        return False
    if in_context is None or alone.confidence >= sure:
        return True
    return in_context.label != sticky_intent
