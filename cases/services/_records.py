"""The rows every case transition leaves behind: its ``CaseEvent``, the system's AuditLog
row (a sweep's: on the organization), and the team's WhatsApp notice (scheduled by task
name after commit)."""

from __future__ import annotations

import uuid
from typing import Any

from accounts.models import Organization
from accounts.services import audit_log_write
from cases.models import Case, CaseEvent
from conversation.dispatch import enqueue


def _event(
    case: Case,
    kind: str,
    *,
    actor_kind: str,
    actor_user: Any = None,
    human_action: str = "",
    body: str = "",
    metadata: dict[str, Any] | None = None,
) -> CaseEvent:
    return CaseEvent.objects.create(
        organization_id=case.organization_id,
        case=case,
        kind=kind,
        actor_kind=actor_kind,
        actor_user=actor_user,
        human_action=human_action,
        body=body,
        metadata=metadata or {},
    )


def _audit_system(case: Case, action: str, diff: dict[str, Any]) -> None:
    audit_log_write(
        actor=None,
        action=action,
        resource=case,
        diff=diff,
        actor_kind="system",
    )


def _audit_sweep(organization_id: uuid.UUID, action: str, diff: dict[str, Any]) -> None:
    """A sweep's AuditLog row: the system, acting on the whole organization."""
    audit_log_write(
        actor=None,
        action=action,
        resource=Organization(pk=organization_id),
        diff=diff,
        actor_kind="system",
    )


def _notify_team(event: CaseEvent) -> None:
    """The opt-in WhatsApp notice (one per event): decided and logged by the task."""
    enqueue("cases.deliver_case_notice", str(event.pk))
