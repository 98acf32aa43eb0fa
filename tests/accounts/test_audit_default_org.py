"""``audit_log_write`` files the row under the resource's own organization unless told."""

from __future__ import annotations

from typing import Any

import pytest

from accounts.models import AuditLog, Organization
from accounts.services import audit_log_write
from tests import factories


def test_audit_row_takes_resource_organization_when_none_given(db: Any) -> None:
    org = factories.make_org("A")
    agent = factories.make_agent(org)

    row = audit_log_write(actor=None, action="agent.touch", resource=agent, actor_kind="system")

    assert row.organization_id == org.pk
    assert (row.resource_type, row.resource_id) == ("agent", str(agent.pk))


def test_audit_row_of_organization_resource_files_under_itself(db: Any) -> None:
    org = factories.make_org("A")

    by_instance = audit_log_write(actor=None, action="org.touch", resource=org)
    by_stub = audit_log_write(actor=None, action="org.sweep", resource=Organization(pk=org.pk))

    assert by_instance.organization_id == org.pk
    assert by_stub.organization_id == org.pk


def test_explicit_organization_wins_over_resource_organization(db: Any) -> None:
    org_a, org_b = factories.make_org("A"), factories.make_org("B")
    agent = factories.make_agent(org_a)

    by_id = audit_log_write(organization=org_b.pk, actor=None, action="x", resource=agent)
    by_object = audit_log_write(organization=org_b, actor=None, action="x", resource=agent)

    assert by_id.organization_id == org_b.pk
    assert by_object.organization_id == org_b.pk


def test_audit_without_any_organization_is_refused(db: Any) -> None:
    user = factories.make_user(factories.make_org("A"), "admin")  # a User has no organization

    with pytest.raises(TypeError, match="organization"):
        audit_log_write(actor=None, action="secrets.reencrypt", resource=None)
    with pytest.raises(TypeError, match="User has no organization"):
        audit_log_write(actor=None, action="user.touch", resource=user)

    assert not AuditLog.objects.exists()


def test_resource_without_organization_still_audits_with_explicit_one(db: Any) -> None:
    org = factories.make_org("A")

    row = audit_log_write(
        organization=org.pk, actor=None, action="secrets.reencrypt", resource=None
    )

    assert row.organization_id == org.pk
    assert row.resource_type == ""
