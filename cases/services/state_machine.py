"""The case state machine's table (specs/human-cases.md §3): which trigger moves a case from
which status to which. Pure: the transitions with their effects are in ``lifecycle`` and
``follow_ups``."""

from __future__ import annotations

from cases.models import CaseStatus, HumanAction


class CaseError(Exception):
    """A case action that cannot happen; ``message`` is pt-BR and safe to show."""

    code = "case_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class IllegalTransition(CaseError):
    code = "illegal_transition"


class InvalidCaseInput(CaseError):
    code = "invalid_input"


# (from status, trigger) → to status. Triggers: human actions, "lead_provided",
# "lead_unresponsive" and "cancel".
TRANSITIONS: dict[tuple[str, str], str] = {
    (CaseStatus.AWAITING_HUMAN, HumanAction.RESOLVED): CaseStatus.RESOLVED,
    (CaseStatus.AWAITING_HUMAN, HumanAction.NEED_LEAD_INFO): CaseStatus.AWAITING_LEAD,
    (CaseStatus.AWAITING_HUMAN, HumanAction.ESCALATE): CaseStatus.ESCALATED,
    (CaseStatus.AWAITING_LEAD, "lead_provided"): CaseStatus.AWAITING_HUMAN,
    # The customer stopped answering (the follow-ups are spent) or answered with no
    # ``provide_case_update`` following, or never got the team's question: the case goes
    # back to the team's queue (issue 12: no case waits unseen on the customer's side).
    (CaseStatus.AWAITING_LEAD, "lead_unresponsive"): CaseStatus.AWAITING_HUMAN,
    (CaseStatus.AWAITING_LEAD, "stalled"): CaseStatus.AWAITING_HUMAN,
    (CaseStatus.AWAITING_HUMAN, "cancel"): CaseStatus.CANCELLED,
    (CaseStatus.AWAITING_LEAD, "cancel"): CaseStatus.CANCELLED,
}
# The team decides what happens to a case whose customer stopped answering.
FLAGGED_TRANSITIONS: dict[tuple[str, str], str] = {
    (CaseStatus.AWAITING_LEAD, HumanAction.RESOLVED): CaseStatus.RESOLVED,
    (CaseStatus.AWAITING_LEAD, HumanAction.NEED_LEAD_INFO): CaseStatus.AWAITING_LEAD,
    (CaseStatus.AWAITING_LEAD, HumanAction.ESCALATE): CaseStatus.ESCALATED,
}
TRIGGER_LABELS = {
    "lead_provided": "devolver a informação do cliente",
    "lead_unresponsive": "marcar o cliente como sem resposta",
    "stalled": "devolver o caso à equipe",
    "cancel": "cancelar",
}


def next_status(current: str, trigger: str, *, lead_unresponsive: bool = False) -> str:
    """The status ``trigger`` leads to from ``current``, or ``IllegalTransition``."""
    target = TRANSITIONS.get((current, trigger))
    if target is None and lead_unresponsive:
        target = FLAGGED_TRANSITIONS.get((current, trigger))
    if target is None:
        label = (
            str(HumanAction(trigger).label)
            if trigger in HumanAction.values
            else TRIGGER_LABELS.get(trigger, trigger)
        )
        state = str(CaseStatus(current).label)
        raise IllegalTransition(f"Não é possível “{label}” num caso que está {state}.")
    return target
