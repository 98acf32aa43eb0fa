"""The walls hold against the application role itself (issue 15, item 8).

A session that LOGS IN as the application role — how production connects — in
organization A's context sees no row of organization B in any tenant table, whatever it
tries: ``set_config('app.bypass_rls', 'on')``, ``RESET ROLE``, ``SET ROLE`` to the owner,
``SET SESSION AUTHORIZATION``. The two narrow doors answer ids only. A control session of
the owner proves the rows are there (a vacuous pass would prove nothing).

PostgreSQL only, committed rows (a second connection cannot see the test's transaction):
``DATABASE_URL=postgres://retaguarda_owner@127.0.0.1:5432/<name>``
``DATABASE_APP_ROLE=retaguarda_app`` (scripts/test.sh).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from django.db import connection

from accounts import rls
from tests.security.tenant_data import build_world

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row-level security is PG's"),
    pytest.mark.django_db(transaction=True),
]


def _tables() -> list[str]:
    return sorted({m._meta.db_table for m in rls.tenant_models()} | {rls.ORGANIZATION_TABLE})


def _connect(user: str) -> psycopg.Connection[Any]:
    s = connection.settings_dict
    return psycopg.connect(
        host=s.get("HOST") or "127.0.0.1",
        port=int(s.get("PORT") or 5432),
        dbname=s["NAME"],
        user=user,
        password=s.get("PASSWORD") if user == s.get("USER") else None,
        autocommit=True,
    )


@pytest.fixture
def app_session() -> Iterator[psycopg.Connection[Any]]:
    role = connection.settings_dict["OPTIONS"]["assume_role"]
    with _connect(role) as conn:
        yield conn


def _foreign_rows(conn: psycopg.Connection[Any], table: str, b: uuid.UUID) -> int:
    column = "id" if table == rls.ORGANIZATION_TABLE else "organization_id"
    with conn.cursor() as cursor:
        cursor.execute(f'SELECT count(*) FROM "{table}" WHERE {column} = %s', [b])
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def _in_context_of(conn: psycopg.Connection[Any], org: uuid.UUID) -> None:
    with conn.cursor() as cursor:
        cursor.execute("SELECT set_config('app.organization_id', %s, false)", [str(org)])


def _refused(conn: psycopg.Connection[Any], sql: str) -> str:
    try:
        with conn.cursor() as cursor:
            cursor.execute(sql)
    except psycopg.Error as exc:
        return str(exc)
    return ""


def test_the_owner_sees_both_organizations_so_the_checks_below_mean_something(db):
    world = build_world(("A", "B"))
    b = world.org("B").pk
    with _connect(connection.settings_dict["USER"]) as owner:
        assert all(_foreign_rows(owner, t, b) for t in _tables())


def test_set_config_bypass_reveals_nothing_to_the_application_role(app_session):
    world = build_world(("A", "B"))
    a, b = world.org("A").pk, world.org("B").pk
    _in_context_of(app_session, a)
    with app_session.cursor() as cursor:
        cursor.execute("SELECT set_config('app.bypass_rls', 'on', false)")
        cursor.execute("SELECT current_setting('app.bypass_rls')")
        assert cursor.fetchone() == ("on",)  # it could set the variable...
    leaks = {t: n for t in _tables() if (n := _foreign_rows(app_session, t, b))}
    assert leaks == {}  # ...and it lifted nothing
    # Its own organization is still there: the context works, only the bypass is refused.
    assert _foreign_rows(app_session, "conversation_message", a) > 0


def test_reset_role_and_set_role_reveal_nothing_either(app_session):
    world = build_world(("A", "B"))
    b = world.org("B").pk
    owner = connection.settings_dict["USER"]
    with app_session.cursor() as cursor:
        cursor.execute("SELECT set_config('app.bypass_rls', 'on', false)")
        cursor.execute("RESET ROLE")
        cursor.execute("SELECT current_user, session_user")
        assert cursor.fetchone() == (app_session.info.user, app_session.info.user)
    assert {t: n for t in _tables() if (n := _foreign_rows(app_session, t, b))} == {}
    for attempt in (
        f'SET ROLE "{owner}"',
        f"SELECT set_config('role', '{owner}', false)",
        f'SET SESSION AUTHORIZATION "{owner}"',
        "SET row_security = off",
    ):
        refused = _refused(app_session, attempt)
        if refused:
            continue
        # ``row_security = off`` is accepted by PostgreSQL but then refuses every query
        # that a policy would filter, rather than showing it unfiltered.
        assert attempt == "SET row_security = off"
        assert "row-level security" in _refused(
            app_session, "SELECT count(*) FROM conversation_message"
        )
        _refused(app_session, "SET row_security = on")
    assert {t: n for t in _tables() if (n := _foreign_rows(app_session, t, b))} == {}


def test_the_narrow_doors_answer_ids_and_nothing_else(app_session):
    world = build_world(("A", "B"))
    channel = world.row("B", "conversation.ChannelSession")
    with app_session.cursor() as cursor:
        cursor.execute("SELECT app_organization_ids()")
        ids = {r[0] for r in cursor.fetchall()}
        cursor.execute(
            "SELECT app_organization_of('conversation_channelsession'::regclass, %s)",
            [str(channel.pk)],
        )
        owner_of = cursor.fetchone()
    assert {world.org("A").pk, world.org("B").pk} <= ids
    assert owner_of == (world.org("B").pk,)
    # Through the doors, still no row of B.
    assert _foreign_rows(app_session, "conversation_channelsession", world.org("B").pk) == 0


def test_organization_ids_for_sweeps_needs_no_bypass(db):
    world = build_world(("A", "B"))
    with rls.unprivileged():
        ids = rls.organization_ids()
    assert {world.org("A").pk, world.org("B").pk} <= set(ids)
