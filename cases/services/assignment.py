"""Who answers a case (issue 16 item 1): a member of the case's organization, or nobody
(the team). Assigning changes nothing about who may answer: every agent still can."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from accounts.models import Membership, display_name
from accounts.services import audit_log_write
from cases.models import ActorKind, Case, CaseEventKind

from ._records import _event
from .state_machine import InvalidCaseInput

log = logging.getLogger(__name__)

# The least role that can be made responsible for a case: the one that can answer it.
ASSIGNABLE_ROLE = "agent"


def case_assign(*, case: Case, actor: Any, assignee: Any | None) -> Case:
    """Make ``assignee`` (a user) responsible for the case, or nobody with None. The
    assignee must be a member of the case's organization with a role that answers cases;
    anything else is ``InvalidCaseInput`` (the same error for "not a member" and "not
    yours": no probing of other organizations' users). A no-op when nothing changes.
    Locks the case row."""
    with transaction.atomic():
        locked = Case.objects.select_for_update(of=("self",)).get(pk=case.pk)
        if assignee is not None:
            membership = Membership.objects.filter(
                organization_id=locked.organization_id, user_id=assignee.pk
            ).first()
            # A deactivated account answers nothing (its cases went back to the team).
            if (
                membership is None
                or not membership.has_role(ASSIGNABLE_ROLE)
                or not assignee.is_active
            ):
                raise InvalidCaseInput("Escolha um atendente desta organização.")
        new_id = assignee.pk if assignee is not None else None
        if locked.assigned_to_id == new_id:
            return locked
        previous = locked.assigned_to_id
        locked.assigned_to_id = new_id
        locked.save(update_fields=["assigned_to", "updated_at"])
        user = actor if getattr(actor, "is_authenticated", False) else None
        _event(
            locked,
            CaseEventKind.ASSIGNED,
            actor_kind=ActorKind.HUMAN if user else ActorKind.SYSTEM,
            actor_user=user,
            body=display_name(assignee),
            metadata={"assigned_to": new_id, "previous": previous},
        )
        audit_log_write(
            actor=actor,
            action="case.assign",
            resource=locked,
            diff={"assigned_to": new_id, "previous": previous},
        )
    log.info("case assigned", extra={"case_id": str(case.pk), "assigned_to": new_id})
    case.assigned_to_id = new_id
    return locked
