"""JSON-safe (de)serialization of ``ConversationState`` with schema versioning.

Enums become their values, ``Decimal`` a string, tuples lists; ``None`` optionals are
left out. Known older versions migrate in a chain (v6 -> v7 adds the empty invoice
snapshot, v7 -> v8 the consent fields); an unknown or missing version yields a fresh
state that keeps the session id (sessions are short, so a reset is cheaper than
guessing). Malformed data at a known version raises ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from enum import Enum
from typing import Any

from .state import (
    ITEM_TYPES,
    SCHEMA_VERSION,
    TOOL_CATEGORIES,
    WORKFLOW_NORMALIZERS,
    ActionQueue,
    ActionStep,
    Channel,
    ConversationState,
    ConversationStatus,
    PendingConfirmation,
    PendingWorkflowResume,
    ResolvedAction,
    ResolvedInvoiceItem,
    ToolKind,
    ToolOutcome,
)


def serialize_state(state: ConversationState) -> dict[str, Any]:
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "session_id": state.session_id,
        "turn_index": state.turn_index,
        "channel": state.channel.value,
        "status": state.status.value,
        "msisdn": state.msisdn,
        "action_queue": _ser_queue(state.action_queue),
        "client_requested_end": state.client_requested_end,
        "off_context_count": state.off_context_count,
        "informative_answer_delivered": state.informative_answer_delivered,
        "invoice_snapshot": _ser_snapshot(state.invoice_snapshot),
        "invoice_snapshot_source_turn": state.invoice_snapshot_source_turn,
        "invoice_snapshot_source_msisdn": state.invoice_snapshot_source_msisdn,
        "decision_trace": [_jsonable(e) for e in state.decision_trace],
    }
    if state.pending_confirmation is not None:
        pc = state.pending_confirmation
        out["pending_confirmation"] = {
            "id": pc.id,
            "authorized_queue": _ser_queue(pc.authorized_queue),
            "asked_turn_index": pc.asked_turn_index,
            "prompt_text": pc.prompt_text,
            "choices": [_jsonable(c) for c in pc.choices],
            "reasked": pc.reasked,
        }
    if state.pending_workflow is not None:
        pw = state.pending_workflow
        out["pending_workflow"] = {
            "tool": pw.tool,
            "subject": pw.subject,
            "execution_id": pw.execution_id,
            "expected_input_key": pw.expected_input_key,
            "allowed_values": list(pw.allowed_values),
            "question": pw.question,
            "normalize": pw.normalize,
            "asked_turn_index": pw.asked_turn_index,
        }
    if state.last_completed_action is not None:
        la = state.last_completed_action
        out["last_completed_action"] = {
            "tool": la.tool,
            "subject": la.subject,
            "tool_kind": la.tool_kind.value,
            "outcome": la.outcome.value,
            "result_summary": _jsonable(la.result_summary),
        }
    if state.last_invoice_answer is not None:
        out["last_invoice_answer"] = state.last_invoice_answer
    if state.last_finalization_reason is not None:
        out["last_finalization_reason"] = state.last_finalization_reason
    return out


def deserialize_state(data: Mapping[str, Any]) -> ConversationState:
    """Restore a persisted state, migrating or resetting when its version differs."""
    if data.get("schema_version") != SCHEMA_VERSION:
        return migrate_state(data)
    try:
        return _from_current(data)
    except (KeyError, TypeError, ValueError, InvalidOperation) as exc:
        raise ValueError(f"malformed conversation state: {exc!r}") from exc


def migrate_state(persisted: Mapping[str, Any]) -> ConversationState:
    version = persisted.get("schema_version")
    data = dict(persisted)
    while isinstance(version, int) and version != SCHEMA_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            return _fresh(persisted)
        data = step(data)
        version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        return _fresh(persisted)
    return deserialize_state(data)


def _v6_to_v7(data: dict[str, Any]) -> dict[str, Any]:
    # v7 added the invoice snapshot (plural anaphora), the active line and the paused
    # workflow; v6 sessions restore with an empty snapshot and nothing pending.
    out = dict(data)
    out["schema_version"] = 7
    out.setdefault("invoice_snapshot", [])
    out.setdefault("invoice_snapshot_source_turn", 0)
    out.setdefault("invoice_snapshot_source_msisdn", "")
    out.setdefault("msisdn", "")
    return out


def _v7_to_v8(data: dict[str, Any]) -> dict[str, Any]:
    # v8 bound consent to its question: a stored confirmation was a plain one asked once;
    # a stored paused workflow counts as asked on the state's last turn, so the answer
    # the customer is about to give still resumes it (as it did before the upgrade).
    out = dict(data)
    out["schema_version"] = 8
    if isinstance(out.get("pending_confirmation"), Mapping):
        pc = dict(out["pending_confirmation"])
        pc.setdefault("choices", [])
        pc.setdefault("reasked", 0)
        out["pending_confirmation"] = pc
    if isinstance(out.get("pending_workflow"), Mapping):
        pw = dict(out["pending_workflow"])
        pw.setdefault("asked_turn_index", int(out.get("turn_index", 0)))
        out["pending_workflow"] = pw
    return out


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    6: _v6_to_v7,
    7: _v7_to_v8,
}


def _fresh(persisted: Mapping[str, Any]) -> ConversationState:
    channel = persisted.get("channel")
    return ConversationState(
        session_id=str(persisted.get("session_id") or ""),
        channel=Channel(channel) if channel in {c.value for c in Channel} else Channel.VOICE,
    )


def _from_current(data: Mapping[str, Any]) -> ConversationState:
    pending_confirmation = None
    if "pending_confirmation" in data:
        pc = data["pending_confirmation"]
        pending_confirmation = PendingConfirmation(
            id=str(pc["id"]),
            authorized_queue=_deser_queue(pc["authorized_queue"]),
            asked_turn_index=int(pc["asked_turn_index"]),
            prompt_text=str(pc["prompt_text"]),
            choices=tuple(dict(c) for c in pc["choices"]),
            reasked=int(pc["reasked"]),
        )
    pending_workflow = None
    if "pending_workflow" in data:
        pw = data["pending_workflow"]
        pending_workflow = PendingWorkflowResume(
            tool=str(pw["tool"]),
            subject=str(pw["subject"]),
            execution_id=str(pw["execution_id"]),
            expected_input_key=str(pw["expected_input_key"]),
            allowed_values=tuple(str(v) for v in pw["allowed_values"]),
            question=str(pw["question"]),
            normalize=_member(pw["normalize"], WORKFLOW_NORMALIZERS, "normalize"),
            asked_turn_index=int(pw["asked_turn_index"]),
        )
    last_action = None
    if "last_completed_action" in data:
        la = data["last_completed_action"]
        last_action = ResolvedAction(
            tool=str(la["tool"]),
            subject=str(la["subject"]),
            tool_kind=ToolKind(la["tool_kind"]),
            outcome=ToolOutcome(la["outcome"]),
            result_summary=dict(la.get("result_summary") or {}),
        )
    answer = data.get("last_invoice_answer")
    return ConversationState(
        schema_version=SCHEMA_VERSION,
        session_id=str(data.get("session_id", "")),
        turn_index=int(data.get("turn_index", 0)),
        channel=Channel(data.get("channel", Channel.VOICE.value)),
        status=ConversationStatus(data.get("status", ConversationStatus.OPEN.value)),
        msisdn=str(data.get("msisdn", "")),
        pending_confirmation=pending_confirmation,
        pending_workflow=pending_workflow,
        action_queue=_deser_queue(data.get("action_queue") or {}),
        last_completed_action=last_action,
        last_invoice_answer=_member(answer, ("SIM", "NAO"), "answer") if answer else None,
        client_requested_end=bool(data.get("client_requested_end", False)),
        off_context_count=int(data.get("off_context_count", 0)),
        informative_answer_delivered=bool(data.get("informative_answer_delivered", False)),
        last_finalization_reason=data.get("last_finalization_reason"),
        invoice_snapshot=_deser_snapshot(data.get("invoice_snapshot") or []),
        invoice_snapshot_source_turn=int(data.get("invoice_snapshot_source_turn", 0)),
        invoice_snapshot_source_msisdn=str(data.get("invoice_snapshot_source_msisdn", "")),
        decision_trace=[dict(e) for e in data.get("decision_trace") or []],
    )


def _ser_queue(queue: ActionQueue) -> dict[str, Any]:
    return {
        "steps": [
            {
                "tool": s.tool,
                "subject": s.subject,
                "items": [_jsonable(i) for i in s.items],
                "action_id": s.action_id,
            }
            for s in queue.steps
        ],
        "cursor": queue.cursor,
    }


def _deser_queue(data: Mapping[str, Any]) -> ActionQueue:
    steps = [
        ActionStep(
            tool=_member(s["tool"], TOOL_CATEGORIES, "tool"),
            subject=str(s["subject"]),
            items=tuple(dict(i) for i in s.get("items") or []),
            # Optional: steps stored before action ids were stamped restore without one.
            action_id=str(s.get("action_id") or ""),
        )
        for s in data.get("steps") or []
    ]
    cursor = int(data.get("cursor", 0))
    if not 0 <= cursor <= len(steps):
        raise ValueError(f"queue cursor out of range: {cursor}")
    return ActionQueue(steps=steps, cursor=cursor)


def _ser_snapshot(items: tuple[ResolvedInvoiceItem, ...]) -> list[dict[str, Any]]:
    out = []
    for item in items:
        entry: dict[str, Any] = {
            "canonical_name": item.canonical_name,
            "tool_category": item.tool_category,
            "item_type": item.item_type,
            "msisdn": item.msisdn,
            "section": item.section,
            "raw_entry": _jsonable(item.raw_entry),
        }
        if item.value is not None:
            entry["value"] = str(item.value)
        out.append(entry)
    return out


def _deser_snapshot(data: list[Mapping[str, Any]]) -> tuple[ResolvedInvoiceItem, ...]:
    return tuple(
        ResolvedInvoiceItem(
            canonical_name=str(d["canonical_name"]),
            tool_category=_member(d["tool_category"], TOOL_CATEGORIES, "tool_category"),
            item_type=_member(d["item_type"], ITEM_TYPES, "item_type"),
            msisdn=str(d["msisdn"]),
            value=Decimal(d["value"]) if d.get("value") is not None else None,
            section=str(d["section"]),
            raw_entry=dict(d.get("raw_entry") or {}),
        )
        for d in data
    )


def _member(value: Any, allowed: tuple[Any, ...], name: str) -> Any:
    if value not in allowed:
        raise ValueError(f"invalid {name}: {value!r}")
    return value


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    raise ValueError(f"not JSON-serializable: {type(value).__name__}")
