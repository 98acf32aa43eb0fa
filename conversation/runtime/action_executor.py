"""Execute the queue's next step (and resume paused workflows) through the backends.

``ToolBackend`` is the seam to the business backends (cancellation, strategic
partners, pro rata, invoice explanation, knowledge search). ``ToolAdapter`` maps
queue steps onto it; ``ActionQueueExecutor`` runs a step and records its outcome
through the hooks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from .consent import call_off, without_courtesy
from .intent_extractor import IntentExtractor, is_goodbye
from .mutations import on_action_completed, on_action_started, on_workflow_resumed
from .state import (
    ActionStep,
    ConversationState,
    PendingWorkflowResume,
    ResolvedAction,
    ToolKind,
    ToolOutcome,
)
from .textnorm import canonical, fold, normalize_utterance, words

# Scalar result keys copied into ResolvedAction.result_summary (kept JSON-safe and small).
_SUMMARY_KEYS = (
    "success",
    "not_found",
    "error",
    "message",
    "aguardando_resposta",
    "recomenda_finalizacao",
    "execution_id",
)


class ToolBackend(Protocol):
    """The backends the runtime drives. Results are plain JSON-like dicts.

    Action results may carry ``success``, ``not_found``, ``error``, ``errors`` (items
    that failed in a partial success), ``message`` (text for the customer),
    ``aguardando_resposta`` with ``execution_id``/``expected_input_key``/
    ``allowed_values``/``question``/``normalize`` (a paused workflow), and
    ``recomenda_finalizacao``.

    ``action_id`` names the consented action a call performs (``ActionStep.action_id``):
    the same on every retry of that action, different between actions. A backend that can
    act twice (a real billing system) derives its idempotency key from it.
    """

    def cancelar_vas_single(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> Mapping[str, Any]: ...

    def vas_strategic(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> Mapping[str, Any]: ...

    def pro_rata(
        self, *, items: list[dict[str, Any]], remaining: list[dict[str, Any]], action_id: str = ""
    ) -> Mapping[str, Any]: ...

    def resume_workflow(
        self, *, tool: str, execution_id: str, input_key: str, value: str
    ) -> Mapping[str, Any]: ...

    def invoice_explanation(self, *, msisdn: str) -> Mapping[str, Any]:
        """``{"success": True, "text": ...}`` or ``{"error": ...}``."""
        ...

    def buscar_informacao(self, *, queries: Sequence[str]) -> Mapping[str, Any]:
        """Search each query (in parallel where possible): ``{"answer": str | None}``."""
        ...


class ToolAdapter:
    def __init__(self, backend: ToolBackend) -> None:
        self._backend = backend

    def invoke(self, step: ActionStep, *, remaining: list[dict[str, Any]]) -> dict[str, Any]:
        if step.tool == "cancelar_vas_avulso":
            return dict(
                self._backend.cancelar_vas_single(
                    items=self._to_cancel_items(step.items),
                    workflow_input={"remaining": remaining},
                    action_id=step.action_id,
                )
            )
        if step.tool == "vas_estrategico":
            return dict(
                self._backend.vas_strategic(
                    items=self._to_strategic_items(step.items),
                    workflow_input={"remaining": remaining},
                    action_id=step.action_id,
                )
            )
        if step.tool == "pro_rata":
            args = self._to_pro_rata_args(step.items, remaining)
            return dict(self._backend.pro_rata(**args, action_id=step.action_id))
        raise ValueError(f"Unsupported action tool: {step.tool}")

    def resume(self, pending: PendingWorkflowResume, value: str) -> dict[str, Any]:
        return dict(
            self._backend.resume_workflow(
                tool=pending.tool,
                execution_id=pending.execution_id,
                input_key=pending.expected_input_key,
                value=value,
            )
        )

    def explain_invoice(self, *, msisdn: str) -> dict[str, Any]:
        return dict(self._backend.invoice_explanation(msisdn=msisdn))

    def search_knowledge(self, queries: Sequence[str]) -> dict[str, Any]:
        if not queries:
            raise ValueError("the knowledge search is never called without a query")
        return dict(self._backend.buscar_informacao(queries=list(queries)))

    @staticmethod
    def _to_cancel_items(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return [
            {"service": i["canonical_name"], "msisdn": i["msisdn"], "value": i.get("value")}
            for i in items
        ]

    @staticmethod
    def _to_strategic_items(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return [
            {"name": i["canonical_name"], "msisdn": i["msisdn"], "item_type": i.get("item_type")}
            for i in items
        ]

    @staticmethod
    def _to_pro_rata_args(
        items: Sequence[Mapping[str, Any]], remaining: list[dict[str, Any]]
    ) -> dict[str, Any]:
        return {
            "items": [{"service": i["canonical_name"], "msisdn": i["msisdn"]} for i in items],
            "remaining": remaining,
        }


def classify_outcome(result: Mapping[str, Any]) -> ToolOutcome:
    if result.get("aguardando_resposta") is True:
        return ToolOutcome.PARTIAL  # started; the workflow waits for the customer
    if result.get("not_found") is True:
        return ToolOutcome.NO_MATCH
    if result.get("error") is not None:
        return ToolOutcome.FAILURE
    if result.get("success") is True:
        return ToolOutcome.PARTIAL if result.get("errors") else ToolOutcome.SUCCESS
    return ToolOutcome.FAILURE  # an unknown shape is never reported as done


def summarize(result: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: result[k]
        for k in _SUMMARY_KEYS
        if k in result and isinstance(result[k], str | int | float | bool | type(None))
    }


class ActionQueueExecutor:
    def __init__(self, tool_adapter: ToolAdapter) -> None:
        self._tool_adapter = tool_adapter

    @property
    def tool_adapter(self) -> ToolAdapter:
        """The informative tools (invoice explanation, RAG) share the action adapter."""
        return self._tool_adapter

    def execute_next(self, state: ConversationState) -> dict[str, Any]:
        step = state.action_queue.current()
        if step is None:
            return {"success": True, "queue_empty": True}
        on_action_started(state, step)
        # Remaining comes from the queue itself, never from the conversation history.
        remaining = [
            {"tool": s.tool, "subject": s.subject}
            for s in state.action_queue.remaining_after_current()
        ]
        result = self._tool_adapter.invoke(step, remaining=remaining)
        self._complete(state, step.tool, step.subject, result)
        return result

    def resume_current(self, state: ConversationState, value: str) -> dict[str, Any]:
        """Resume the paused workflow with the customer's interpreted answer."""
        pending = state.pending_workflow
        if pending is None:
            raise ValueError("no paused workflow to resume")
        on_workflow_resumed(state)
        result = self._tool_adapter.resume(pending, value)
        self._complete(state, pending.tool, pending.subject, result, resumed=True)
        return result

    def _complete(
        self,
        state: ConversationState,
        tool: str,
        subject: str,
        result: Mapping[str, Any],
        *,
        resumed: bool = False,
    ) -> None:
        summary = summarize(result)
        if resumed:
            summary["resumed"] = True
        action = ResolvedAction(
            tool=tool,
            subject=subject,
            tool_kind=ToolKind.ACTION,
            outcome=classify_outcome(result),
            result_summary=summary,
        )
        on_action_completed(state, action)


# A negation, a question or a condition around the words of an answer.
_HEDGED = re.compile(r"\b(?:nao|nem|se)\b|\?")
# The customer stops the workflow instead of answering it.
_STOP = re.compile(
    r"\b(?:nao|nem)\s+(?:\w+\s+)?(?:cancel|tir|remov|faz|quero)\w*|\b(?:espera|desist\w*|"
    r"deixa\s+pra\s+la|deixa\s+quieto|esquece|para\s+tudo|mudei\s+de\s+ideia)\b"
    # A bare "cancela (isso)": calling it off (or on), no answer to pass on.
    r"|^(?:pode\s+)?cancel\w*(?:\s+(?:isso|tudo|entao|ai|logo|o\s+pedido|a\s+solicitacao))?$"
    # "pera", "calma", "um momento": the customer asks to wait (review r31), like "espera".
    r"|^(?:pera|perai|calma|aguarda|(?:so\s+)?um\s+(?:momento|minuto|segundo|instante))\b"
)


class ValueInterpreter:
    """Read the customer's answer to a paused workflow's question; ``None`` if unclear."""

    YES = frozenset({"sim", "s", "isso", "pode", "pode sim", "quero", "claro", "ok", "confirmo"})
    NO = frozenset({"nao", "não", "n", "negativo", "não quero", "nao quero"})
    # Compared without courtesy (consent: "sim, obrigado" is a yes, "não, obrigada" a no);
    # "sim pode" and "pode ser" are yeses as plain as "pode sim" (review r31).
    _YES_FORMS = frozenset(canonical(v) for v in (*YES, "sim pode", "pode ser"))
    _NO_FORMS = frozenset(canonical(v) for v in NO)

    def interpret(self, user_text: str, pending: PendingWorkflowResume) -> str | None:
        normalized = normalize_utterance(user_text)
        if not normalized:
            return None
        if pending.normalize == "yes_no":
            said = without_courtesy(user_text)
            value = "sim" if said in self._YES_FORMS else "nao" if said in self._NO_FORMS else None
            allowed = {fold(v) for v in pending.allowed_values}
            return value if value is not None and (not allowed or value in allowed) else None
        if pending.normalize == "choice":
            if "?" in user_text:
                return None  # "cancelar?": asking back is not choosing
            wanted = fold(normalized)
            exact = [v for v in pending.allowed_values if fold(v) == wanted]
            if exact:
                return exact[0]
            if _HEDGED.search(fold(user_text)):
                # "não quero cancelar", "cancelar não", "se eu cancelar perco?": naming an
                # option is not choosing it; unclear, so the message is read as a message.
                return None
            contained = [v for v in pending.allowed_values if fold(v) in wanted.split()]
            return contained[0] if len(contained) == 1 else None
        if "?" in user_text or is_goodbye(user_text, IntentExtractor.END_PHRASES):
            return None  # "o que é o Tamboro?", "tchau": the customer says something else
        if _STOP.search(" ".join(words(user_text))) or call_off(user_text) is not None:
            return None  # "espera, não cancela", "desisto", "pode parar": no answer to pass on
        return user_text.strip()
