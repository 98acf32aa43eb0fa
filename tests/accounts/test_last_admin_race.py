"""The organization keeps an admin even when its last two demote or remove each other at
the same instant: each change locks the organization's admin memberships before asking
whether another admin is left. Only meaningful where transactions really overlap:
PostgreSQL (SQLite serializes writers)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
from django.db import connection

from accounts import services
from accounts.models import Membership, Role
from tests import factories

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs overlapping transactions"),
    pytest.mark.django_db(transaction=True),
]


def _slow(check: Callable[..., str]) -> Callable[..., str]:
    """The refusal check, then a pause: the other change reads the team in that window."""

    def wrapped(*args: Any, **kwargs: Any) -> str:
        answer = check(*args, **kwargs)
        time.sleep(0.4)
        return answer

    return wrapped


def _together(*calls: Callable[[], Any]) -> list[str]:
    barrier = threading.Barrier(len(calls))
    outcomes: list[str] = []

    def run(call: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout=10)
            call()
            outcomes.append("done")
        except services.TeamError:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return sorted(outcomes)


@pytest.fixture
def two_admins() -> tuple[Membership, Membership]:
    org = factories.make_org("Dois admins")
    first, second = factories.make_user(org, "admin"), factories.make_user(org, "admin")
    return (
        Membership.objects.select_related("user").get(user=first),
        Membership.objects.select_related("user").get(user=second),
    )


def test_two_admins_demoting_each_other_at_once_leave_one_admin(two_admins):
    first, second = two_admins
    with mock.patch.object(services, "role_change_refusal", _slow(services.role_change_refusal)):
        outcomes = _together(
            lambda: services.membership_role_change(
                membership=second, actor=first.user, role=Role.VIEWER
            ),
            lambda: services.membership_role_change(
                membership=first, actor=second.user, role=Role.VIEWER
            ),
        )
    assert outcomes == ["done", "refused"]
    assert Membership.objects.filter(organization=first.organization, role=Role.ADMIN).count() == 1


def test_two_admins_removing_each_other_at_once_leave_one_admin(two_admins):
    first, second = two_admins
    with mock.patch.object(services, "removal_refusal", _slow(services.removal_refusal)):
        outcomes = _together(
            lambda: services.membership_remove(membership=second, actor=first.user),
            lambda: services.membership_remove(membership=first, actor=second.user),
        )
    assert outcomes == ["done", "refused"]
    assert Membership.objects.filter(organization=first.organization, role=Role.ADMIN).count() == 1
