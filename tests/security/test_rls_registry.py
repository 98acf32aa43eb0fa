"""Every tenant table is under the wall: in the migrations, and (PostgreSQL) in the catalog.

A model with a foreign key to Organization and no ``EnableTenantRLS`` in its app's
migrations fails here, so a new table cannot slip past the policies unnoticed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.operations.special import SeparateDatabaseAndState

from accounts import rls
from accounts.models import Membership

ROOT = Path(__file__).resolve().parents[2]

# Modules allowed to lift the walls, and why. Anything else calling ``bypass_rls`` /
# ``with_bypass`` fails the suite until it is reviewed and listed here.
BYPASS_ALLOWED = {
    "accounts/rls.py": "defines the bypass; organization_ids() lists ids for sweeps",
    "accounts/middleware.py": "superusers in the Django admin (staff across organizations)",
    "conversation/management/commands/seed_demo.py": "seeds a whole demo organization",
    "conversation/management/commands/load_invoices.py": "operator's command, one org by slug",
}


def _operations(ops: list) -> list:
    out = []
    for op in ops:
        out.append(op)
        if isinstance(op, SeparateDatabaseAndState):
            out.extend(_operations(op.database_operations))
    return out


def _covered_in_migrations() -> set[str]:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    covered = set()
    for (app_label, _name), migration in loader.graph.nodes.items():
        for op in _operations(migration.operations):
            if isinstance(op, rls.EnableTenantRLS):
                covered.add(f"{app_label}.{op.model_name}")
    return covered


def test_every_tenant_model_has_an_enable_tenant_rls_migration():
    covered = _covered_in_migrations()
    # Memberships have their own policy (accounts.0002: a user reads their own).
    expected = {m._meta.label_lower for m in rls.tenant_models() if m is not Membership}
    missing = sorted(expected - covered)
    assert not missing, (
        f"tenant tables without a policy: {missing} — add EnableTenantRLS('<model>') "
        "to the app's migration (see .notes/HELPERS.md, RLS)"
    )
    assert len(expected) >= 12  # accounts + conversation at least: the walk found the models


def test_every_model_pointing_at_an_organization_is_a_tenant_model():
    linked = {m._meta.label for m in rls.models_with_organization_link()}
    tenant = {m._meta.label for m in rls.tenant_models()}
    assert linked == tenant, f"name the foreign key 'organization': {sorted(linked - tenant)}"


def test_the_bypass_is_called_only_from_reviewed_modules():
    pattern = re.compile(r"\b(bypass_rls|with_bypass)\(")
    callers = set()
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith((".venv/", "tests/", "bench/")) or "/migrations/" in rel:
            continue
        if pattern.search(path.read_text(encoding="utf-8")):
            callers.add(rel)
    assert callers <= set(BYPASS_ALLOWED), sorted(callers - set(BYPASS_ALLOWED))
    assert "accounts/middleware.py" in callers  # the walk really reads the sources


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="policies exist on PostgreSQL")
@pytest.mark.django_db
def test_every_tenant_table_has_its_policy_in_the_database():
    tables = {m._meta.db_table for m in rls.tenant_models()} | {rls.ORGANIZATION_TABLE}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity, p.polname, p.polcmd, "
            "pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid) "
            "FROM pg_class c LEFT JOIN pg_policy p ON p.polrelid = c.oid "
            "AND p.polname LIKE 'tenant_isolation_%%' "
            "WHERE c.relname = ANY(%s) AND c.relkind = 'r'",
            [sorted(tables)],
        )
        rows = {r[0]: r for r in cursor.fetchall()}
    assert set(rows) == tables
    for table, (_, enabled, _forced, name, cmd, using, check) in rows.items():
        assert enabled, f"{table}: row level security is off"
        assert name == rls.policy_name(table), f"{table}: no tenant policy"
        assert cmd == "*", f"{table}: the tenant policy must cover every command"
        assert "app.organization_id" in using and "app.organization_id" in check, table


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="roles exist on PostgreSQL")
@pytest.mark.django_db
def test_the_application_runs_as_a_role_that_owns_no_table_and_cannot_bypass():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_user, session_user, r.rolsuper, r.rolbypassrls "
            "FROM pg_roles r WHERE r.rolname = current_user"
        )
        current, session, superuser, bypassrls = cursor.fetchone()
        cursor.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() "
            "AND tableowner = current_user"
        )
        owned = cursor.fetchone()[0]
    role = connection.settings_dict["OPTIONS"].get("assume_role")
    assert role, "PostgreSQL tests run as the application role: DATABASE_APP_ROLE (test.sh)"
    assert current == role != session
    assert not superuser and not bypassrls
    assert owned == 0
