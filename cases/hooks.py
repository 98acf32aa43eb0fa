"""The cases side of ``conversation.hooks``: what a conversation-level action (opt-out, a
human taking over, the conversation closing) does to the cases' pending work.

Registered in ``CasesConfig.ready``. The state change itself is ``services.case_cancel``
(audited); the follow-ups cancelled here are counted in the caller's own audit row
(``handoff.perform`` records ``followups_cancelled``).
"""

from __future__ import annotations

from cases.models import OPEN_STATUSES, Case, CaseFollowUp, FollowUpStatus
from cases.services import case_cancel
from conversation.models import Conversation

CANCELLING_REASONS = ("opt_out", "closed")


def cancel_case_work(conversation: Conversation, reason: str) -> int:
    """The ``conversation.hooks`` cancel-pending hook. Always cancels the pending
    follow-ups of the conversation's cases (opt-out, handoff, closed); on opt-out the
    lead's open cases are cancelled, on a closed conversation that conversation's."""
    cancelled = CaseFollowUp.objects.filter(
        conversation=conversation, status=FollowUpStatus.PENDING
    ).update(status=FollowUpStatus.CANCELLED, cancel_reason=reason[:40])
    if reason in CANCELLING_REASONS:
        cases = Case.objects.filter(
            organization_id=conversation.organization_id, status__in=OPEN_STATUSES
        )
        if reason == "opt_out":
            cases = cases.filter(lead_id=conversation.contact_id)
        else:
            cases = cases.filter(conversation=conversation)
        for case in list(cases):
            case_cancel(case=case, reason=reason)
    return cancelled
