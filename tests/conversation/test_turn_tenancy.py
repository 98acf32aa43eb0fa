"""A turn works for its organization across its own short transactions (``tenant_session``),
outside any test transaction — the path a real worker takes. On PostgreSQL the walls are
checked too; on SQLite the organization is the context variable only."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test import Client

from accounts import rls
from conversation.models import Conversation, Message, Turn
from conversation.turns.tenancy import tenant_session
from tests import factories
from tests.conftest import simulator_post

pytestmark = pytest.mark.django_db(transaction=True)


def walls() -> tuple[str, str] | None:
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('app.organization_id', true), "
            "current_setting('app.bypass_rls', true)"
        )
        org, bypass = cursor.fetchone()
    return org or "", bypass or ""


def test_tenant_session_holds_across_transactions_and_puts_back_what_was_there(world):
    factories.make_conversation(world.channel_a)
    factories.make_conversation(world.channel_b)
    before = walls()
    with rls.unprivileged(), tenant_session(world.org_a.pk):
        assert rls.current_organization_id() == world.org_a.pk
        with transaction.atomic():
            inside = walls()
        seen = set(Conversation.objects.values_list("organization_id", flat=True))
        outside = walls()
    assert rls.current_organization_id() is None
    assert walls() == before
    if connection.vendor == "postgresql":
        assert inside == outside == (str(world.org_a.pk), "off")
        assert seen == {world.org_a.pk}  # the walls admit only its rows, with no transaction


def test_a_webhook_turn_runs_its_steps_outside_any_transaction(world):
    before = walls()
    response = simulator_post(Client(), world.channel_a, "oi", msg_id="tn-1")
    assert response.status_code == 200
    turn = Turn.objects.get()
    assert (turn.status, turn.outcome, turn.attempts) == ("done", "replied", 1)
    assert turn.lease_expires_at is None
    (reply,) = Message.objects.filter(direction="outbound")
    assert reply.turn_id == turn.pk and reply.status == "delivered"
    assert walls() == before  # the task left nothing on the connection
