"""Raw SQL under the application role: organization A's context sees, changes and creates
nothing of organization B, in every tenant table. PostgreSQL only (CI: scripts/test.sh)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction

from accounts import rls
from accounts.models import Membership

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row-level security is PG's"),
]


def _context(cursor: Any, *, org: Any = "", user: Any = "", bypass: str = "off") -> None:
    cursor.execute(
        "SELECT set_config('app.organization_id', %s, true), "
        "set_config('app.user_id', %s, true), set_config('app.bypass_rls', %s, true)",
        [str(org), str(user), bypass],
    )


def _tenant_tables() -> list[str]:
    return sorted(m._meta.db_table for m in rls.tenant_models())


def _one_row(cursor: Any, table: str, org: Any) -> dict[str, Any]:
    _context(cursor, bypass="on")
    cursor.execute(f'SELECT * FROM "{table}" WHERE organization_id = %s LIMIT 1', [org])
    names = [c.name for c in cursor.description]
    row = cursor.fetchone()
    assert row is not None, f"{table}: the fixture has no row of this organization"
    cursor.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attgenerated <> ''",
        [table],
    )
    generated = {r[0] for r in cursor.fetchall()}  # the database computes those
    return {k: v for k, v in zip(names, row, strict=True) if k not in generated}


def _refused(sql: str, params: list[Any]) -> str:
    """The database's refusal of ``sql`` ("" when it ran), the statement rolled back."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, params)
            changed = cursor.rowcount
    except DatabaseError as exc:
        return str(exc)
    return "" if changed else "row-level security: no row could be changed"


@pytest.mark.parametrize("table", _tenant_tables())
def test_context_of_a_sees_and_changes_no_row_of_b(tenants, table):
    a, b = tenants.org("A").pk, tenants.org("B").pk
    with transaction.atomic(), connection.cursor() as cursor:
        row_of_b = _one_row(cursor, table, b)
        _context(cursor, org=a)
        cursor.execute(
            f'SELECT count(*), count(*) FILTER (WHERE organization_id <> %s) FROM "{table}"', [a]
        )
        visible, foreign = cursor.fetchone()
        cursor.execute(f'SELECT count(*) FROM "{table}" WHERE organization_id = %s', [b])
        of_b = cursor.fetchone()[0]
        cursor.execute(
            f'UPDATE "{table}" SET organization_id = organization_id WHERE organization_id = %s',
            [b],
        )
        updated = cursor.rowcount
        cursor.execute(f'DELETE FROM "{table}" WHERE organization_id = %s', [b])
        deleted = cursor.rowcount
    assert (visible >= 1, foreign, of_b, updated, deleted) == (True, 0, 0, 0, 0)

    # Moving A's rows to B, or inserting a row carrying B's id, is refused by WITH CHECK.
    with transaction.atomic(), connection.cursor() as cursor:
        _context(cursor, org=a)
        moved = _refused(f'UPDATE "{table}" SET organization_id = %s', [b])
        pk = next(c for c in row_of_b if c == "id")
        copy = {**row_of_b, pk: uuid.uuid4() if isinstance(row_of_b[pk], uuid.UUID) else None}
        if copy[pk] is None:
            del copy[pk]
        columns = ", ".join(f'"{c}"' for c in copy)
        marks = ", ".join("%s" for _ in copy)
        params = [_adapt(v) for v in copy.values()]
        inserted = _refused(f'INSERT INTO "{table}" ({columns}) VALUES ({marks})', params)
    assert "row-level security" in moved
    assert "row-level security" in inserted


def _adapt(value: Any) -> Any:
    from psycopg.types.json import Jsonb

    return Jsonb(value) if isinstance(value, dict | list) else value


@pytest.mark.parametrize("table", _tenant_tables())
def test_no_context_sees_no_row_at_all(tenants, table):
    with transaction.atomic(), connection.cursor() as cursor:
        _context(cursor)
        cursor.execute(f'SELECT count(*) FROM "{table}"')
        assert cursor.fetchone()[0] == 0


def test_a_user_sees_only_their_own_memberships_and_organizations_before_choosing(tenants):
    a_admin = tenants.user("A", "admin")
    with transaction.atomic(), connection.cursor() as cursor:
        _context(cursor, user=a_admin.pk)
        cursor.execute("SELECT organization_id, user_id FROM accounts_membership")
        memberships = cursor.fetchall()
        cursor.execute("SELECT id FROM accounts_organization")
        organizations = [r[0] for r in cursor.fetchall()]
    assert memberships == [(tenants.org("A").pk, a_admin.pk)]
    assert organizations == [tenants.org("A").pk]


def test_memberships_of_the_current_organization_are_visible_and_no_other(tenants):
    with transaction.atomic(), connection.cursor() as cursor:
        _context(cursor, org=tenants.org("A").pk, user=tenants.user("A").pk)
        cursor.execute("SELECT DISTINCT organization_id FROM accounts_membership")
        orgs = [r[0] for r in cursor.fetchall()]
        cursor.execute("SELECT count(*) FROM accounts_membership")
        count = cursor.fetchone()[0]
    assert orgs == [tenants.org("A").pk]
    assert count == Membership.objects.filter(organization=tenants.org("A")).count() == 4


def test_an_organization_cannot_be_created_or_joined_from_a_tenant_context(tenants):
    a, b = tenants.org("A"), tenants.org("B")
    with transaction.atomic(), connection.cursor() as cursor:
        _context(cursor, org=a.pk, user=tenants.user("A").pk)
        created = _refused(
            "INSERT INTO accounts_organization (id, name, slug, settings, created_at) "
            "VALUES (%s, 'x', 'x-new', '{}', now())",
            [uuid.uuid4()],
        )
        joined = _refused(
            "INSERT INTO accounts_membership (id, organization_id, user_id, role, created_at) "
            "VALUES (%s, %s, %s, 'admin', now())",
            [uuid.uuid4(), b.pk, tenants.user("A").pk],
        )
    assert "row-level security" in created
    assert "row-level security" in joined


def test_audit_rows_are_append_only_for_the_application(tenants):
    a = tenants.org("A").pk
    with transaction.atomic(), connection.cursor() as cursor:
        _context(cursor, org=a)
        cursor.execute("UPDATE accounts_auditlog SET action = 'rewritten'")
        updated = cursor.rowcount
        cursor.execute("DELETE FROM accounts_auditlog")
        deleted = cursor.rowcount
        cursor.execute("SELECT count(*) FROM accounts_auditlog")
        remaining = cursor.fetchone()[0]
    assert (updated, deleted) == (0, 0)
    assert remaining >= 1


def test_the_narrow_door_names_a_rows_organization_and_nothing_else(tenants):
    channel_b = tenants.row("B", "conversation.ChannelSession")
    with transaction.atomic(), connection.cursor() as cursor:
        _context(cursor, org=tenants.org("A").pk)
        cursor.execute(
            "SELECT app_organization_of('conversation_channelsession', %s), "
            "app_organization_of('conversation_channelsession', %s), "
            "app_organization_of('conversation_channelsession', 'not-a-uuid')",
            [str(channel_b.pk), str(uuid.uuid4())],
        )
        found, unknown, malformed = cursor.fetchone()
    refused = _refused("SELECT app_organization_of('auth_user', '1')", [])
    assert (found, unknown, malformed) == (tenants.org("B").pk, None, None)
    assert "not a tenant table" in refused


def test_the_search_door_answers_only_the_contexts_own_message_ids(tenants):
    # ``app_message_search`` (inbox.0003) runs as the owner, past the policy: it must apply
    # the wall itself — the context's organization only, no context no rows, and the owner
    # session's bypass opens nothing.
    a, b = tenants.org("A").pk, tenants.org("B").pk
    message_of_b = tenants.row("B", "conversation.Message")
    found = {}
    with transaction.atomic(), connection.cursor() as cursor:
        for name, org, bypass in (("A", a, "off"), ("B", b, "off"), ("none", "", "on")):
            _context(cursor, org=org, bypass=bypass)
            cursor.execute("SELECT app_message_search(%s, 100)", [message_of_b.body])
            found[name] = {row[0] for row in cursor.fetchall()}
    assert found == {"A": set(), "B": {message_of_b.pk}, "none": set()}


# The SECURITY DEFINER functions (doors through the walls) and nothing else: a new one is
# reviewed here — it must apply the wall itself and pin its search_path.
DOORS = {"app_message_search", "app_organization_ids", "app_organization_of"}


def test_every_security_definer_function_is_a_known_door_with_a_fixed_search_path(tenants):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT p.proname, p.proconfig FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE p.prosecdef AND n.nspname = current_schema()"
        )
        doors = dict(cursor.fetchall())
    assert set(doors) == DOORS
    assert all("search_path=pg_catalog, public" in (config or []) for config in doors.values())


def test_an_erasure_may_rewrite_append_only_rows_of_its_own_tenant_and_still_not_delete(tenants):
    # LGPD: inside ``rls.erasure`` the application may blank an append-only timeline's
    # text — only its own organization's rows, and deleting them stays refused.
    a, b = tenants.org("A").pk, tenants.org("B").pk
    with transaction.atomic(), connection.cursor() as cursor:
        _context(cursor, org=a)
        cursor.execute("UPDATE accounts_auditlog SET action = 'rewritten'")
        outside = cursor.rowcount
        with rls.erasure():
            cursor.execute("UPDATE accounts_auditlog SET action = action")
            inside = cursor.rowcount
            cursor.execute(
                "UPDATE accounts_auditlog SET action = action WHERE organization_id = %s", [b]
            )
            other_tenant = cursor.rowcount
            cursor.execute("DELETE FROM accounts_auditlog")
            deleted = cursor.rowcount
        cursor.execute("UPDATE accounts_auditlog SET action = 'rewritten'")
        after = cursor.rowcount
        transaction.set_rollback(True)
    assert (outside, other_tenant, deleted, after) == (0, 0, 0, 0)
    assert inside >= 1
