"""Per-hook telemetry spans (spec, mutations.py contract): every hook emits a child span
named ``conversation.hook.<name>`` with the diff of the state's fields before and after.

The spec makes the emission "responsabilidade de decorator externo": hooks themselves never
log nor emit. ``hook_span`` is that decorator; it records only while a caller has opened a
``recording_spans()`` block (the turn adapter does, around ``try_handle``), so the pure
runtime pays one context-variable read per hook otherwise.

A span carries ids and codes, never text (DESIGN §6): scalar fields (status, counters,
flags, the finalization reason) with their values, structured fields by a short digest
(the pending confirmation's id, the queue's cursor and length, the last action's tool and
outcome, the snapshot's and trace's lengths), and the active line by its final digits.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from .state import ConversationState

SPAN_PREFIX = "conversation.hook."

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class HookSpan:
    name: str  # conversation.hook.<hook>
    # field -> (before, after) for the fields the hook changed (digests, see the module doc)
    diff: dict[str, tuple[Any, Any]] = field(default_factory=dict, hash=False)

    @property
    def hook(self) -> str:
        return self.name.removeprefix(SPAN_PREFIX)

    def as_trace(self) -> dict[str, Any]:
        """JSON-safe, for the turn's decision trace."""
        return {"hook": self.hook, "changed": {k: list(v) for k, v in self.diff.items()}}


_RECORDER: ContextVar[list[HookSpan] | None] = ContextVar("runtime_hook_spans", default=None)


@contextmanager
def recording_spans() -> Iterator[list[HookSpan]]:
    """Collect the spans of every hook called inside the block, in call order."""
    spans: list[HookSpan] = []
    token = _RECORDER.set(spans)
    try:
        yield spans
    finally:
        _RECORDER.reset(token)


def hook_span(hook: Callable[P, R]) -> Callable[P, R]:
    """Emit ``conversation.hook.<name>`` with the state diff around ``hook``."""
    name = f"{SPAN_PREFIX}{hook.__name__}"

    @functools.wraps(hook)
    def traced(*args: P.args, **kwargs: P.kwargs) -> R:
        spans = _RECORDER.get()
        if spans is None:
            return hook(*args, **kwargs)
        state = args[0]
        assert isinstance(state, ConversationState)
        before = digest(state)
        result = hook(*args, **kwargs)
        after = digest(state)
        diff = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
        spans.append(HookSpan(name, diff))
        return result

    return traced


def digest(state: ConversationState) -> dict[str, Any]:
    """A comparable, JSON-safe, text-free summary of each field of ``state``."""
    pending = state.pending_confirmation
    workflow = state.pending_workflow
    last = state.last_completed_action
    queue = state.action_queue
    return {
        "status": state.status.value,
        "turn_index": state.turn_index,
        "pending_confirmation": pending.id if pending is not None else None,
        "pending_workflow": workflow.tool if workflow is not None else None,
        "action_queue": f"{queue.cursor}/{len(queue.steps)}",
        "last_completed_action": (
            f"{last.tool}:{last.outcome.value}" if last is not None else None
        ),
        "last_invoice_answer": state.last_invoice_answer,
        "client_requested_end": state.client_requested_end,
        "off_context_count": state.off_context_count,
        "informative_answer_delivered": state.informative_answer_delivered,
        "last_finalization_reason": state.last_finalization_reason,
        "invoice_snapshot_source_turn": state.invoice_snapshot_source_turn,
        # Lengths, and a line by its final digits (as the runtime's own replies name it).
        "invoice_snapshot": len(state.invoice_snapshot),
        "decision_trace": len(state.decision_trace),
        "msisdn": _final(state.msisdn),
        "invoice_snapshot_source_msisdn": _final(state.invoice_snapshot_source_msisdn),
    }


def _final(msisdn: str) -> str:
    return f"final {msisdn[-4:]}" if msisdn else ""
