"""``ToolBackend`` implementations around the runtime, and the wrappers every turn uses.

- ``DemoInvoiceBackend``: the demo billing system over a contact's ``DemoInvoice`` (the
  runtime's in-memory ``DemoBackend``), remembering earlier cancellations from the
  RuntimeAction log so a cancelled service stays cancelled in later turns.
- ``billing_http.HttpBillingBackend``: a real billing system over HTTP.
- ``RecordingBackend``: wraps either and keeps one ``RuntimeAction`` row per action call
  (written in one INSERT by ``flush``).
- ``DryRunBackend``: shadow mode; actions are simulated, never executed.

The knowledge search (RAG) of every backend is the organization's knowledge base
(``conversation.knowledge.search_knowledge``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conversation import knowledge
from conversation.models import (
    Conversation,
    RuntimeAction,
    RuntimeActionOutcome,
    RuntimeActionTool,
    Turn,
)
from conversation.runtime import DemoBackend, ToolBackend
from conversation.runtime.action_executor import classify_outcome
from conversation.runtime.textnorm import fold, join_pt

# Passages per refined query: the best one; several concepts give several passages.
HITS_PER_QUERY = 1


class KnowledgeSearch:
    """``buscar_informacao`` over the organization's knowledge base; keeps the hit ids."""

    def __init__(self, organization_id: uuid.UUID) -> None:
        self._organization_id = organization_id
        self.hit_ids: list[str] = []

    def buscar_informacao(self, *, queries: Sequence[str]) -> dict[str, Any]:
        passages: list[str] = []
        for query in queries:
            for hit in knowledge.search_knowledge(
                self._organization_id, query, limit=HITS_PER_QUERY
            ):
                if str(hit.document_id) not in self.hit_ids:
                    self.hit_ids.append(str(hit.document_id))
                    passages.append(hit.passage.strip())
        return {"answer": "\n\n".join(p for p in passages if p) or None}


CancelledLookup = Callable[[], set[tuple[str, str]]]


class DemoInvoiceBackend:
    """The demo billing system: one invoice, actions in memory, earlier cancels from the log."""

    name = "demo"

    def __init__(
        self,
        invoice_detail: Mapping[str, Any],
        *,
        knowledge_search: KnowledgeSearch,
        cancelled: CancelledLookup = set,
    ) -> None:
        self._demo = DemoBackend(invoice_detail)
        self._knowledge = knowledge_search
        self._cancelled = cancelled

    def cancelar_vas_single(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> Mapping[str, Any]:
        done = self._cancelled()  # one query, only on the turns that cancel something
        gone = [i["service"] for i in items if (fold(i["service"]), i["msisdn"]) in done]
        if gone:
            return {"not_found": True, "message": f"Não encontrei {join_pt(gone)} ativo."}
        return self._demo.cancelar_vas_single(items=items, workflow_input=workflow_input)

    def vas_strategic(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> Mapping[str, Any]:
        return self._demo.vas_strategic(items=items, workflow_input=workflow_input)

    def pro_rata(
        self, *, items: list[dict[str, Any]], remaining: list[dict[str, Any]], action_id: str = ""
    ) -> Mapping[str, Any]:
        return self._demo.pro_rata(items=items, remaining=remaining)

    def resume_workflow(
        self, *, tool: str, execution_id: str, input_key: str, value: str
    ) -> Mapping[str, Any]:
        return self._demo.resume_workflow(
            tool=tool, execution_id=execution_id, input_key=input_key, value=value
        )

    def invoice_explanation(self, *, msisdn: str) -> Mapping[str, Any]:
        return self._demo.invoice_explanation(msisdn=msisdn)

    def buscar_informacao(self, *, queries: Sequence[str]) -> Mapping[str, Any]:
        return self._knowledge.buscar_informacao(queries=queries)


def cancelled_by_contact(conversation: Conversation) -> CancelledLookup:
    """Services the contact already cancelled through the demo backend (lazy: one query)."""

    def lookup() -> set[tuple[str, str]]:
        rows = RuntimeAction.objects.filter(
            organization_id=conversation.organization_id,
            conversation__contact_id=conversation.contact_id,
            backend=DemoInvoiceBackend.name,
            tool=RuntimeActionTool.CANCEL_SINGLE,
            outcome=RuntimeActionOutcome.SUCCESS,
        ).values_list("items", "msisdns")
        return {
            (fold(str(name)), str(msisdn))
            for names, msisdns in rows
            for name, msisdn in zip(names or [], msisdns or [], strict=False)
        }

    return lookup


@dataclass(frozen=True)
class ActionRecord:
    tool: str
    items: tuple[str, ...]
    msisdns: tuple[str, ...]
    outcome: str
    execution_id: str = ""
    answer: str = ""
    error_code: str = ""


class RecordingBackend:
    """Delegates to ``inner`` and records every action call, in order, with its outcome."""

    def __init__(self, inner: ToolBackend, *, name: str) -> None:
        self._inner = inner
        self.name = name
        self.records: list[ActionRecord] = []

    def cancelar_vas_single(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> Mapping[str, Any]:
        result = self._inner.cancelar_vas_single(
            items=items, workflow_input=workflow_input, action_id=action_id
        )
        self._record(RuntimeActionTool.CANCEL_SINGLE, items, "service", result)
        return result

    def vas_strategic(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> Mapping[str, Any]:
        result = self._inner.vas_strategic(
            items=items, workflow_input=workflow_input, action_id=action_id
        )
        self._record(RuntimeActionTool.STRATEGIC, items, "name", result)
        return result

    def pro_rata(
        self, *, items: list[dict[str, Any]], remaining: list[dict[str, Any]], action_id: str = ""
    ) -> Mapping[str, Any]:
        result = self._inner.pro_rata(items=items, remaining=remaining, action_id=action_id)
        self._record(RuntimeActionTool.PRO_RATA, items, "service", result)
        return result

    def resume_workflow(
        self, *, tool: str, execution_id: str, input_key: str, value: str
    ) -> Mapping[str, Any]:
        result = self._inner.resume_workflow(
            tool=tool, execution_id=execution_id, input_key=input_key, value=value
        )
        self._record(
            RuntimeActionTool.RESUME, [], "name", result, execution_id=execution_id, answer=value
        )
        return result

    def invoice_explanation(self, *, msisdn: str) -> Mapping[str, Any]:
        return self._inner.invoice_explanation(msisdn=msisdn)

    def buscar_informacao(self, *, queries: Sequence[str]) -> Mapping[str, Any]:
        return self._inner.buscar_informacao(queries=queries)

    def flush(self, *, conversation: Conversation, turn: Turn | None) -> int:
        """Write the recorded actions (one INSERT); returns how many."""
        if not self.records:
            return 0
        RuntimeAction.objects.bulk_create(
            [
                RuntimeAction(
                    organization_id=conversation.organization_id,
                    conversation=conversation,
                    turn=turn,
                    backend=self.name[:16],
                    tool=r.tool,
                    items=list(r.items),
                    msisdns=list(r.msisdns),
                    outcome=r.outcome,
                    execution_id=r.execution_id[:120],
                    answer=r.answer[:40],
                    error_code=r.error_code[:64],
                    sequence=index,
                )
                for index, r in enumerate(self.records)
            ]
        )
        written = len(self.records)
        self.records = []
        return written

    def _record(
        self,
        tool: str,
        items: list[dict[str, Any]],
        name_key: str,
        result: Mapping[str, Any],
        *,
        execution_id: str = "",
        answer: str = "",
    ) -> None:
        error = result.get("error")
        self.records.append(
            ActionRecord(
                tool=tool,
                items=tuple(str(i.get(name_key, "")) for i in items),
                msisdns=tuple(str(i.get("msisdn", "")) for i in items),
                outcome=classify_outcome(result).value,
                execution_id=execution_id or str(result.get("execution_id") or ""),
                answer=answer,
                error_code=str(error) if error is not None else "",
            )
        )


class DryRunBackend:
    """Shadow mode: the runtime decides as if actions succeeded; nothing is executed.

    Read-only tools (invoice explanation, knowledge search) still run, so the shadow
    decision sees what the live one would.
    """

    name = "dry_run"
    _SIMULATED: Mapping[str, Any] = {"success": True, "dry_run": True}

    def __init__(self, inner: ToolBackend) -> None:
        self._inner = inner
        self.simulated: list[str] = []

    def cancelar_vas_single(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> Mapping[str, Any]:
        self.simulated.append(RuntimeActionTool.CANCEL_SINGLE)
        return dict(self._SIMULATED)

    def vas_strategic(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> Mapping[str, Any]:
        self.simulated.append(RuntimeActionTool.STRATEGIC)
        return dict(self._SIMULATED)

    def pro_rata(
        self, *, items: list[dict[str, Any]], remaining: list[dict[str, Any]], action_id: str = ""
    ) -> Mapping[str, Any]:
        self.simulated.append(RuntimeActionTool.PRO_RATA)
        return dict(self._SIMULATED)

    def resume_workflow(
        self, *, tool: str, execution_id: str, input_key: str, value: str
    ) -> Mapping[str, Any]:
        self.simulated.append(RuntimeActionTool.RESUME)
        return dict(self._SIMULATED)

    def invoice_explanation(self, *, msisdn: str) -> Mapping[str, Any]:
        return self._inner.invoice_explanation(msisdn=msisdn)

    def buscar_informacao(self, *, queries: Sequence[str]) -> Mapping[str, Any]:
        return self._inner.buscar_informacao(queries=queries)
