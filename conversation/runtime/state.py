"""Canonical dialogue state and the value objects every other module speaks.

``ConversationState`` is read by many consumers (policy, intent extractor, the
orchestrator prompt via ``to_prompt_context``, telemetry) and written only by the
hooks in ``mutations.py``. Value objects are frozen; fields holding dicts or the
mutable ``ActionQueue`` are left out of the hash (``hash=False``) so the automatic
``__hash__`` keeps working while equality still compares them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Any, Literal

from .textnorm import last_digits

# v7: invoice snapshot for plural anaphora (+ pending workflow, active msisdn).
# v8: consent bound to the question: a confirmation may ask which line (choices) and
# counts how often it was asked again; a paused workflow records the turn that asked.
SCHEMA_VERSION: int = 8

InvoiceAnswer = Literal["SIM", "NAO"]
ToolCategory = Literal["cancelar_vas_avulso", "vas_estrategico", "pro_rata"]
ItemType = Literal["avulso", "estrategico", "bundle", "plano"]
WorkflowNormalize = Literal["yes_no", "choice", "free_text"]
FinalizationStatus = Literal["resolvido", "nao_resolvido", "outros_assuntos"]

TOOL_CATEGORIES: tuple[ToolCategory, ...] = ("cancelar_vas_avulso", "vas_estrategico", "pro_rata")
ITEM_TYPES: tuple[ItemType, ...] = ("avulso", "estrategico", "bundle", "plano")
WORKFLOW_NORMALIZERS: tuple[WorkflowNormalize, ...] = ("yes_no", "choice", "free_text")
FINALIZATION_STATUSES: tuple[FinalizationStatus, ...] = (
    "resolvido",
    "nao_resolvido",
    "outros_assuntos",
)


class ConversationStatus(StrEnum):
    OPEN = "open"
    AWAITING_CONFIRMATION = "awaiting_confirmation"
    EXECUTING_ACTION = "executing_action"
    AWAITING_WORKFLOW_INPUT = "awaiting_workflow_input"
    FINALIZING = "finalizing"
    CLOSED = "closed"


class Channel(StrEnum):
    VOICE = "voice"
    TEXT = "text"


class ToolKind(StrEnum):
    INFO = "info"
    EXPLANATION = "explanation"
    ACTION = "action"
    META = "meta"


class ToolOutcome(StrEnum):
    SUCCESS = "success"
    NO_MATCH = "no_match"
    FAILURE = "failure"
    PARTIAL = "partial"


# Telemetry kept in the state is bounded so the persisted JSON stays small.
DECISION_TRACE_LIMIT = 12


@dataclass(frozen=True)
class ResolvedInvoiceItem:
    canonical_name: str
    tool_category: ToolCategory
    item_type: ItemType
    msisdn: str
    value: Decimal | None
    section: str
    raw_entry: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class ActionStep:
    tool: ToolCategory
    subject: str
    # JSON-safe item dicts (see ``action_queue.item_to_dict``).
    items: tuple[Mapping[str, Any], ...] = field(default=(), hash=False)
    # The consented action's identity: the confirmation that authorised the step and its
    # place in that queue ("<confirmation id>/<n>"), stamped when the confirmation is asked
    # (``ConfirmationManager``). A retry carries the same step, so the same id: backends
    # derive their idempotency keys from it. Empty until a confirmation covers the step.
    action_id: str = ""


@dataclass
class ActionQueue:
    steps: list[ActionStep] = field(default_factory=list)
    cursor: int = 0

    def current(self) -> ActionStep | None:
        if self.cursor >= len(self.steps):
            return None
        return self.steps[self.cursor]

    def remaining_after_current(self) -> list[ActionStep]:
        return self.steps[self.cursor + 1 :]

    def advance(self) -> None:
        # Capped: a workflow resumed after the last step must not push the cursor past the end.
        if self.cursor < len(self.steps):
            self.cursor += 1

    def is_empty(self) -> bool:
        return len(self.steps) == 0

    def is_exhausted(self) -> bool:
        return self.cursor >= len(self.steps)

    def copy(self) -> ActionQueue:
        return ActionQueue(steps=list(self.steps), cursor=self.cursor)


@dataclass(frozen=True)
class PendingConfirmation:
    """The runtime's open question and what a yes to it would authorize.

    ``prompt_text`` is what was asked, ``asked_turn_index`` when (guard 2: only the next
    turn answers it). With ``choices`` the question is "which line?": the candidates are
    item dicts (``action_queue.item_to_dict``) on several lines, ``authorized_queue`` holds
    what the request already covers, and no yes ever consumes it — a line answer turns it
    into a confirmation that names exactly the chosen items. ``reasked`` counts how many
    times the same question was asked again (a goodbye checks once, then closes).
    """

    id: str
    authorized_queue: ActionQueue = field(hash=False)
    asked_turn_index: int
    prompt_text: str
    choices: tuple[Mapping[str, Any], ...] = field(default=(), hash=False)
    reasked: int = 0

    @property
    def asks_which_line(self) -> bool:
        return bool(self.choices)


@dataclass(frozen=True)
class PendingWorkflowResume:
    """A backend workflow paused on a question; the runtime resumes it next turn."""

    tool: str
    subject: str
    execution_id: str
    expected_input_key: str
    allowed_values: tuple[str, ...]
    question: str
    normalize: WorkflowNormalize = "free_text"
    # The turn that asked ``question``: only the next turn answers it (DESIGN §10.1).
    asked_turn_index: int = 0


@dataclass(frozen=True)
class ResolvedAction:
    tool: str
    subject: str
    tool_kind: ToolKind
    outcome: ToolOutcome
    result_summary: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass
class ConversationState:
    schema_version: int = SCHEMA_VERSION
    session_id: str = ""
    turn_index: int = 0
    channel: Channel = Channel.VOICE
    status: ConversationStatus = ConversationStatus.OPEN
    # Active customer line; filters the snapshot shown to the classifier.
    msisdn: str = ""
    pending_confirmation: PendingConfirmation | None = None
    pending_workflow: PendingWorkflowResume | None = None
    action_queue: ActionQueue = field(default_factory=ActionQueue)
    last_completed_action: ResolvedAction | None = None
    last_invoice_answer: InvoiceAnswer | None = None
    client_requested_end: bool = False
    off_context_count: int = 0
    informative_answer_delivered: bool = False
    last_finalization_reason: str | None = None
    # Items listed by the last invoice explanation (plural anaphora, CY0004).
    invoice_snapshot: tuple[ResolvedInvoiceItem, ...] = ()
    invoice_snapshot_source_turn: int = 0
    invoice_snapshot_source_msisdn: str = ""
    decision_trace: list[dict[str, Any]] = field(default_factory=list)

    def to_prompt_context(self) -> str:
        """Filtered text of the state for the orchestrator prompt.

        Includes what steers the LLM (status, queue, confirmation, last action, invoice
        answer, turn signals). Excludes telemetry (decision_trace,
        last_finalization_reason) and the raw snapshot.
        """
        lines = [
            f"Turno atual: {self.turn_index}",
            f"Canal: {self.channel.value}",
            f"Status: {self.status.value}",
        ]
        if self.msisdn:
            lines.append(f"Linha ativa: final {last_digits(self.msisdn)}")
        if self.pending_confirmation is not None:
            lines.append(
                f"Aguardando confirmação do cliente sobre: {self.pending_confirmation.prompt_text}"
            )
        if self.pending_workflow is not None:
            lines.append(f"Aguardando resposta do cliente para: {self.pending_workflow.question}")
        if not self.action_queue.is_empty():
            current = self.action_queue.current()
            remaining = self.action_queue.remaining_after_current()
            if current is not None:
                lines.append(f"Próxima ação na fila: {current.tool} para {current.subject}")
            if remaining:
                pending_subjects = ", ".join(s.subject for s in remaining)
                lines.append(f"Pendentes depois: {pending_subjects}")
        if self.last_completed_action is not None:
            la = self.last_completed_action
            lines.append(
                f"Última ação executada: {la.tool} para {la.subject}, resultado: {la.outcome.value}"
            )
        if self.last_invoice_answer is not None:
            lines.append(f"Resposta do cliente sobre a fatura: {self.last_invoice_answer}")
        if self.client_requested_end:
            lines.append("Cliente pediu encerramento.")
        if self.off_context_count > 0:
            lines.append(f"Cliente está há {self.off_context_count} turno(s) fora de contexto.")
        return "\n".join(lines)
