"""Promise guardrail of human cases (specs/human-cases.md §6): pure Python, no Django.

``detect_human_promise`` finds, deterministically, a pt-BR promise that someone other than the
AI will act for the customer; ``run_gates`` is the before-send chain that turns it into
allow / veto (teaching error) / allow after auto-opening a case.
"""

from __future__ import annotations

from .gates import (
    AUTOFALLBACK_SOURCE,
    BEFORE_SEND_GATES,
    CASE_PROMISE_TEACHING_EN,
    CASE_PROMISE_TEACHING_PT,
    CASE_PROMISE_WITHOUT_CASE,
    GATE_CHAIN_VERSION,
    Gate,
    GateContext,
    GateVerdict,
    VerdictKind,
    case_promise_gate,
    run_gates,
)
from .promise import PROMISE_DETECTOR_VERSION, RULE_IDS, PromiseMatch, detect_human_promise

__all__ = [
    "AUTOFALLBACK_SOURCE",
    "BEFORE_SEND_GATES",
    "CASE_PROMISE_TEACHING_EN",
    "CASE_PROMISE_TEACHING_PT",
    "CASE_PROMISE_WITHOUT_CASE",
    "GATE_CHAIN_VERSION",
    "PROMISE_DETECTOR_VERSION",
    "RULE_IDS",
    "Gate",
    "GateContext",
    "GateVerdict",
    "PromiseMatch",
    "VerdictKind",
    "case_promise_gate",
    "detect_human_promise",
    "run_gates",
]
