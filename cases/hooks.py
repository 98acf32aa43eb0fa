"""The cases side of ``conversation.hooks`` and ``accounts.hooks``: what a conversation-level
action (opt-out, a human taking over and giving it back, the conversation closing) does to
the cases' pending work, and what a member leaving does to the cases assigned to them.

Registered in ``CasesConfig.ready``. The state change itself is ``services.case_cancel``
(audited); the follow-ups cancelled here are counted in the caller's own audit row
(``handoff.perform`` records ``followups_cancelled``).
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from accounts.models import Membership
from cases.models import OPEN_STATUSES, Case, CaseFollowUp, CaseStatus, FollowUpStatus
from cases.services import case_assign, case_cancel
from cases.services.follow_up_schedule import _arm_follow_up
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


def resume_case_work(conversation: Conversation) -> int:
    """The ``conversation.hooks`` resume hook: the conversation is the AI's again, so each
    of its cases still waiting on the customer gets a follow-up if it has none pending (a
    handoff cancelled it; without one the case would never be flagged "cliente sem
    resposta" nor come back to the team)."""
    now = timezone.now()
    waiting = Case.objects.filter(
        organization_id=conversation.organization_id,
        conversation=conversation,
        status=CaseStatus.AWAITING_LEAD,
        lead_unresponsive=False,
    ).exclude(follow_ups__status=FollowUpStatus.PENDING)
    cases = list(waiting)
    for case in cases:
        _arm_follow_up(case, now)
    return len(cases)


def unassign_cases(membership: Membership, actor: Any) -> int:
    """The ``accounts.hooks`` unassign hook: a member who left or no longer answers gives
    their open cases back to the team (``case_assign`` to nobody: an event and an audit row
    each, by the person who removed or demoted them)."""
    cases = list(
        Case.objects.filter(
            organization_id=membership.organization_id,
            assigned_to_id=membership.user_id,
            status__in=OPEN_STATUSES,
        )
    )
    for case in cases:
        case_assign(case=case, actor=actor, assignee=None)
    return len(cases)
