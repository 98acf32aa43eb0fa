"""Promise guardrail of human cases (specs/human-cases.md §6): pure Python, no Django.

``detect_human_promise`` finds, deterministically, a pt-BR promise that someone other than the
AI will act for the customer; ``run_guard_chain`` runs the stages of ``GUARD_CHAIN`` that turn
it into allow / veto (teaching error) / allow after auto-opening a case. The turn's before-send
gate that feeds it from the database is ``cases.promise_gate``.
"""

from __future__ import annotations

from .chain import (
    AUTOFALLBACK_SOURCE,
    CASE_PROMISE_TEACHING_EN,
    CASE_PROMISE_TEACHING_PT,
    CASE_PROMISE_WITHOUT_CASE,
    GUARD_CHAIN,
    GUARD_CHAIN_VERSION,
    GuardContext,
    GuardStage,
    GuardVerdict,
    VerdictKind,
    case_promise_stage,
    run_guard_chain,
)
from .promise import PROMISE_DETECTOR_VERSION, RULE_IDS, PromiseMatch, detect_human_promise

__all__ = [
    "AUTOFALLBACK_SOURCE",
    "CASE_PROMISE_TEACHING_EN",
    "CASE_PROMISE_TEACHING_PT",
    "CASE_PROMISE_WITHOUT_CASE",
    "GUARD_CHAIN",
    "GUARD_CHAIN_VERSION",
    "PROMISE_DETECTOR_VERSION",
    "RULE_IDS",
    "GuardContext",
    "GuardStage",
    "GuardVerdict",
    "PromiseMatch",
    "VerdictKind",
    "case_promise_stage",
    "detect_human_promise",
    "run_guard_chain",
]
