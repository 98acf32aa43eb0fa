"""The case state machine (specs/human-cases.md §3): every transition and its effects.

=================  ===================================  ===============  ==========================
from               trigger                              to               effects
=================  ===================================  ===============  ==========================
—                  ``open_human_case`` / fail-safe      awaiting_human   event ``opened``; team
                                                                         reminders armed; notice
awaiting_human     human ``resolved`` + text            resolved         ``human_replied`` +
                                                                         ``resolved``; relay turn
awaiting_human     human ``need_lead_info`` + text      awaiting_lead    ``human_replied``; relay
                                                                         turn; follow-up armed
awaiting_lead      ``provide_case_update`` (AI)         awaiting_human   ``lead_provided``; follow-
                                                                         up cancelled; new wait;
                                                                         team told
awaiting_lead      follow-up: N unanswered attempts     awaiting_human   ``lead_unresponsive``
                                                                         flag + event; new wait;
                                                                         reminders; team told
awaiting_lead      watcher: the customer answered but   awaiting_human   ``stalled`` (reason);
                   no ``provide_case_update`` came,                      new wait; reminders;
                   or the question never reached them                    team told
awaiting_human     human ``escalate`` + text            escalated        ``human_replied`` +
                                                                         ``escalated``; canonical
                                                                         handoff (§7)
any open           opt-out / conversation closed        cancelled        ``cancelled``; follow-ups
                                                                         cancelled
=================  ===================================  ===============  ==========================

"O humano decide" (§3): a case the customer stopped answering is back in the team's queue
(``awaiting_human``, ``attention`` says why). Older rows flagged while still
``awaiting_lead`` accept the three human actions too. Anything else raises
``IllegalTransition`` and changes nothing.

Every function here is one transaction; it locks the case row it changes (so two people
answering at once get one success and one clear error), writes the events and the
AuditLog row, and schedules side effects (relay turn, notices) by task name after commit.

The package by topic: ``state_machine`` (the table, pure), ``lifecycle`` (open, answer,
the lead's update, cancel, back to the team), ``assignment`` (who answers), ``stalled``
(the watcher's sweep of cases stuck on the customer's side), ``follow_up_schedule`` and
``follow_ups`` (asking the customer again), ``reminders`` (the team's reminders),
``texts`` (pt-BR texts, pure). Reads live in ``cases.selectors``. Callers import this
package: ``services.case_open(...)``.
"""

from __future__ import annotations

# Reads that callers scheduled from here before ``cases.selectors`` held them.
from cases.selectors import due_follow_up_ids, follow_up_conversation_id

from .assignment import case_assign
from .follow_up_schedule import follow_up_delay, follow_up_max_attempts
from .follow_ups import FollowUpResult, follow_up_fire
from .lifecycle import (
    case_answer,
    case_cancel,
    case_open,
    case_provide_update,
    case_record_relay,
)
from .reminders import reminders_fire_due, reminders_reschedule
from .staff_numbers import staff_number_set
from .stalled import stalled_cases_sweep
from .state_machine import (
    FLAGGED_TRANSITIONS,
    TRANSITIONS,
    TRIGGER_LABELS,
    CaseError,
    IllegalTransition,
    InvalidCaseInput,
    next_status,
)
from .texts import escalated_customer_notice, escalation_briefing, follow_up_text

__all__ = [
    "FLAGGED_TRANSITIONS",
    "TRANSITIONS",
    "TRIGGER_LABELS",
    "CaseError",
    "FollowUpResult",
    "IllegalTransition",
    "InvalidCaseInput",
    "case_answer",
    "case_assign",
    "case_cancel",
    "case_open",
    "case_provide_update",
    "case_record_relay",
    "due_follow_up_ids",
    "escalated_customer_notice",
    "escalation_briefing",
    "follow_up_conversation_id",
    "follow_up_delay",
    "follow_up_fire",
    "follow_up_max_attempts",
    "follow_up_text",
    "next_status",
    "reminders_fire_due",
    "reminders_reschedule",
    "staff_number_set",
    "stalled_cases_sweep",
]
