"""Who sets the tenant context: requests from the membership, tasks from their own row,
superusers in the admin lift the walls, management commands run as documented."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection, transaction

from accounts import rls
from accounts.models import Organization
from conversation import dispatch, selectors, tasks, turns
from conversation.models import Conversation, Message
from tests.security.conftest import client_for

on_postgres = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the walls exist on PostgreSQL"
)


def _settings() -> tuple[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('app.organization_id', true), "
            "current_setting('app.bypass_rls', true)"
        )
        org, bypass = cursor.fetchone()
    return org or "", bypass or ""


def test_a_page_request_runs_in_the_membership_organization(tenants, monkeypatch):
    seen = []
    real = selectors.conversation_list

    def spy(membership: Any, **kwargs: Any) -> Any:
        seen.append(rls.current_organization_id())
        if connection.vendor == "postgresql":
            seen.append(_settings())
        return real(membership, **kwargs)

    monkeypatch.setattr(selectors, "conversation_list", spy)
    response = client_for(tenants.user("A", "viewer")).get("/")
    assert response.status_code == 200
    assert seen[0] == tenants.org("A").pk
    if connection.vendor == "postgresql":
        assert seen[1] == (str(tenants.org("A").pk), "off")


def test_the_inbound_turn_task_runs_in_its_messages_organization(tenants, monkeypatch):
    message = tenants.row("B", "conversation.Message")
    seen = []
    monkeypatch.setattr(
        turns, "run_inbound_turn", lambda pk: seen.append((pk, rls.current_organization_id()))
    )
    tasks.run_inbound_turn.apply(args=[str(message.pk)], throw=True)
    assert seen == [(str(message.pk), tenants.org("B").pk)]


def test_a_task_whose_row_vanished_ends_quietly(db, monkeypatch):
    called = []
    monkeypatch.setattr(turns, "run_inbound_turn", lambda pk: called.append(pk))
    result = tasks.run_inbound_turn.apply(args=[str(uuid.uuid4())], throw=True)
    assert (result.result, called) == (None, [])


def test_the_task_decorator_refuses_an_argument_the_task_does_not_take():
    with pytest.raises(TypeError):
        rls.runs_in_tenant_of(Message, "message_id")(lambda other_id: None)


def test_the_narrow_door_answers_none_for_missing_or_malformed_ids(tenants):
    channel = tenants.row("A", "conversation.ChannelSession")
    from conversation.models import ChannelSession

    assert rls.organization_of(ChannelSession, channel.pk) == tenants.org("A").pk
    assert rls.organization_of(ChannelSession, str(uuid.uuid4())) is None
    assert rls.organization_of(ChannelSession, "not-a-uuid") is None
    assert rls.organization_of(ChannelSession, "") is None


def test_the_superuser_sees_every_organization_in_the_admin_and_only_theirs_in_the_product(
    tenants,
):
    from django.contrib.auth import get_user_model

    staff = tenants.user("A", "admin")
    get_user_model().objects.filter(pk=staff.pk).update(is_staff=True, is_superuser=True)
    client = client_for(staff)
    admin_page = client.get("/admin/conversation/conversation/").content.decode()
    product_page = client.get("/").content.decode()
    b_conversation = str(tenants.row("B", "conversation.Conversation").pk)
    assert b_conversation in admin_page
    assert b_conversation not in product_page


def test_staff_without_superuser_get_no_lifted_walls(tenants):
    from django.contrib.auth import get_user_model

    staff = tenants.user("A", "manager")
    get_user_model().objects.filter(pk=staff.pk).update(is_staff=True)
    response = client_for(staff).get("/admin/conversation/conversation/")
    assert response.status_code == 403  # no model permission, and no bypass either


@on_postgres
@pytest.mark.postgres
def test_an_in_process_task_without_its_own_context_finds_nothing(
    tenants, django_capture_on_commit_callbacks
):
    from celery import shared_task

    found: list[int] = []

    @shared_task(name="tests.security.count_conversations")
    def count_conversations() -> None:
        found.append(Conversation.objects.count())

    assert Conversation.objects.count() >= 2  # the fixtures' session lifts the walls
    with django_capture_on_commit_callbacks(execute=True):
        dispatch.enqueue("tests.security.count_conversations")
    assert found == [0]
    assert _settings()[1] == "on"  # restored for the fixtures after the task


@on_postgres
@pytest.mark.postgres
def test_contexts_nest_and_restore_what_was_there(tenants):
    a, b = tenants.org("A").pk, tenants.org("B").pk
    with rls.tenant_context(a):
        outer = _settings()
        with rls.tenant_context(b):
            inner = _settings()
        with rls.bypass_rls("test"):
            lifted = _settings()
        after = _settings()
    assert (outer, inner, after) == ((str(a), "off"), (str(b), "off"), (str(a), "off"))
    assert lifted == (str(a), "on")
    with transaction.atomic():
        assert _settings() == ("", "on")  # back to the test session's own values


@on_postgres
@pytest.mark.postgres
def test_a_request_leaves_no_context_behind(tenants):
    client_for(tenants.user("A", "admin")).get("/")
    assert _settings() == ("", "on")


@on_postgres
@pytest.mark.postgres
def test_owner_mode_runs_as_the_login_role_and_then_returns_to_the_application_role(db):
    from accounts.db import owner_mode

    def who() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_user")
            return str(cursor.fetchone()[0])

    before = who()
    with owner_mode():
        during = who()
    assert before == connection.settings_dict["OPTIONS"]["assume_role"]
    assert during == connection.settings_dict["USER"]
    assert who() == before


def test_seed_demo_works_with_the_walls_up(db):
    with rls.unprivileged():
        call_command("seed_demo")
        call_command("seed_demo")  # idempotent
    assert Organization.objects.filter(slug="demo").count() == 1
