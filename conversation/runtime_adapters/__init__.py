"""The Django shell around the pure conversation runtime (``conversation/runtime``).

The turn pipeline (``conversation/turns.py``) calls ``runtime_step`` for agent versions
with a runtime profile, sends ``RuntimeStep.reply`` through its guarded send path, then
``RuntimeStep.commit``; when the runtime does not answer, ``with_orchestrator_note`` hands
the orchestrator the state summary and directive for that call only.

Modules: ``step`` (the turn step), ``store`` (state on ``Conversation.runtime_state``),
``classifiers`` (model classifiers: forced tool calls), ``offline`` + ``examples`` (the
offline classifier), ``backends`` (demo backend, action log, dry run), ``billing_http``
(a real billing system), ``invoices`` (demo invoices), ``demo`` (the seeded demo).
"""

from __future__ import annotations

from .step import (
    RuntimeReply,
    RuntimeStep,
    orchestrator_note,
    runtime_applies,
    runtime_step,
    with_orchestrator_note,
)

__all__ = [
    "RuntimeReply",
    "RuntimeStep",
    "orchestrator_note",
    "runtime_applies",
    "runtime_step",
    "with_orchestrator_note",
]
