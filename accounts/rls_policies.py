"""The tenant walls as data: which tables are tenant tables, the SQL of their policies,
and the migration operation ``EnableTenantRLS`` that puts one table under them.

Split from ``accounts.rls`` (which re-exports every name here) so that migrations and the
security suite read the policies without the code that sets a transaction's context.
Migrations keep importing ``from accounts.rls import EnableTenantRLS``.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.db import models
from django.db.migrations.operations.base import Operation

ORG_SETTING = "app.organization_id"
USER_SETTING = "app.user_id"
BYPASS_SETTING = "app.bypass_rls"
# Set (transaction-locally) only by an LGPD erasure (``rls.erasure``): it lets that one
# transaction rewrite rows of append-only tables — to blank the holder's text — and nothing
# else: deletes of those rows still need the owner's bypass.
ERASURE_SETTING = "app.erasing"

ORGANIZATION_TABLE = "accounts_organization"
MEMBERSHIP_TABLE = "accounts_membership"

_CURRENT_ORG = f"NULLIF(current_setting('{ORG_SETTING}', true), '')::uuid"
_CURRENT_USER = f"NULLIF(current_setting('{USER_SETTING}', true), '')::bigint"
# Any role may set any ``app.*`` variable, so the bypass setting alone proves nothing: it
# counts only in a session that LOGGED IN as (a member of) the role owning the tables — the
# migration role, whose sessions SET ROLE down to the application role in development, in
# tests and in operator commands. ``session_user`` is the login role; neither ``SET ROLE``
# nor ``RESET ROLE`` changes it, and only a superuser can. In production the application
# logs in as the application role itself (DATABASE_URL; migrations use the owner's
# MIGRATE_DATABASE_URL), so ``set_config('app.bypass_rls', 'on')``, ``RESET ROLE`` and
# ``SET ROLE`` lift nothing there. A scalar subquery: evaluated once per query, not per row.
OWNER_SESSION = (
    "(SELECT pg_catalog.pg_has_role(session_user, c.relowner, 'MEMBER') "  # noqa: S608
    f"FROM pg_catalog.pg_class c WHERE c.oid = '{ORGANIZATION_TABLE}'::regclass)"
)
_BYPASS = f"(current_setting('{BYPASS_SETTING}', true) = 'on' AND {OWNER_SESSION})"
_ERASING = f"(current_setting('{ERASURE_SETTING}', true) = 'on')"
# The one shape of a tenant policy (intent-router Task 1: ``tenant_isolation_<t>_all``).
TENANT_PREDICATE = f"(organization_id = {_CURRENT_ORG} OR {_BYPASS})"


def policy_name(table: str) -> str:
    return f"tenant_isolation_{table}_all"


# --- which tables are tenant tables ------------------------------------------------------


def is_tenant_model(model: type[models.Model]) -> bool:
    """A concrete, managed model with a foreign key to Organization named ``organization``."""
    meta = model._meta
    if meta.abstract or meta.proxy or not meta.managed or meta.swapped:
        return False
    try:
        field = meta.get_field("organization")
    except Exception:
        return False
    remote = getattr(field, "related_model", None)
    return bool(
        remote is not None
        and remote._meta.label == "accounts.Organization"
        and not field.many_to_many
    )


def tenant_models() -> list[type[models.Model]]:
    """Every installed tenant model; each must be under a policy (tests/security checks)."""
    return [m for m in apps.get_models() if is_tenant_model(m)]


def models_with_organization_link() -> list[type[models.Model]]:
    """Every model pointing at Organization under any field name: all must be tenant models."""
    found = []
    for model in apps.get_models():
        for field in model._meta.concrete_fields:
            remote = getattr(field, "related_model", None)
            if remote is not None and remote._meta.label == "accounts.Organization":
                found.append(model)
                break
    return found


# --- the SQL of the walls ----------------------------------------------------------------


def tenant_policy_sql(table: str, *, append_only: bool = False) -> list[str]:
    """Idempotent DDL putting ``table`` under the tenant wall.

    ``append_only``: the application may read and insert, never update or delete, unless
    the walls are lifted (a staff deletion cascading through the rows) — or, for updates,
    inside an LGPD erasure (``ERASURE_SETTING``), which blanks the holder's text.
    """
    name = policy_name(table)
    statements = [
        f'ALTER TABLE "{table}" ENABLE ROW LEVEL SECURITY',
        f'DROP POLICY IF EXISTS "{name}" ON "{table}"',
        f'CREATE POLICY "{name}" ON "{table}" FOR ALL '
        f"USING {TENANT_PREDICATE} WITH CHECK {TENANT_PREDICATE}",
    ]
    for command in ("update", "delete"):
        restrictive = f"append_only_{table}_{command}"
        statements.append(f'DROP POLICY IF EXISTS "{restrictive}" ON "{table}"')
        if append_only:
            allowed = f"{_BYPASS} OR {_ERASING}" if command == "update" else _BYPASS
            statements.append(
                f'CREATE POLICY "{restrictive}" ON "{table}" AS RESTRICTIVE '
                f"FOR {command.upper()} USING ({allowed})"
            )
    return statements


def drop_tenant_policy_sql(table: str) -> list[str]:
    return [
        f'DROP POLICY IF EXISTS "{policy_name(table)}" ON "{table}"',
        f'DROP POLICY IF EXISTS "append_only_{table}_update" ON "{table}"',
        f'DROP POLICY IF EXISTS "append_only_{table}_delete" ON "{table}"',
        f'ALTER TABLE "{table}" DISABLE ROW LEVEL SECURITY',
    ]


def membership_policy_sql() -> list[str]:
    """Memberships: the user's own (login, org switcher) and those of the current org."""
    name, table = policy_name(MEMBERSHIP_TABLE), MEMBERSHIP_TABLE
    visible = f"(organization_id = {_CURRENT_ORG} OR user_id = {_CURRENT_USER} OR {_BYPASS})"
    return [
        f'ALTER TABLE "{table}" ENABLE ROW LEVEL SECURITY',
        f'DROP POLICY IF EXISTS "{name}" ON "{table}"',
        f'CREATE POLICY "{name}" ON "{table}" FOR ALL USING {visible} '
        f"WITH CHECK {TENANT_PREDICATE}",
    ]


def organization_policy_sql() -> list[str]:
    """Organizations: the current one and those the user belongs to; new ones need bypass."""
    name, table = policy_name(ORGANIZATION_TABLE), ORGANIZATION_TABLE
    mine = (
        f"id IN (SELECT m.organization_id FROM {MEMBERSHIP_TABLE} m "  # noqa: S608 — constants
        f"WHERE m.user_id = {_CURRENT_USER})"
    )
    return [
        f'ALTER TABLE "{table}" ENABLE ROW LEVEL SECURITY',
        f'DROP POLICY IF EXISTS "{name}" ON "{table}"',
        f'CREATE POLICY "{name}" ON "{table}" FOR ALL '
        f"USING (id = {_CURRENT_ORG} OR {_BYPASS} OR {mine}) "
        f"WITH CHECK (id = {_CURRENT_ORG} OR {_BYPASS})",
    ]


# The one narrow door through the walls: which organization owns row ``row_id`` of a
# tenant table. It reads nothing else, and only tables under a policy. Webhooks (the
# channel in the URL) and tasks (their own row) use it to learn which context to set.
ORGANIZATION_OF_FUNCTION_SQL = """
CREATE OR REPLACE FUNCTION app_organization_of(tbl regclass, row_id text) RETURNS uuid
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $fn$
DECLARE
  pk_column name;
  pk_type text;
  org uuid;
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
    WHERE c.oid = tbl AND c.relrowsecurity AND a.attname = 'organization_id'
      AND NOT a.attisdropped
  ) THEN
    RAISE EXCEPTION 'app_organization_of: % is not a tenant table', tbl;
  END IF;
  SELECT a.attname, format_type(a.atttypid, a.atttypmod) INTO pk_column, pk_type
  FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
  WHERE i.indrelid = tbl AND i.indisprimary;
  BEGIN
    EXECUTE format('SELECT organization_id FROM %s WHERE %I = $1::%s', tbl, pk_column, pk_type)
      INTO org USING row_id;
  EXCEPTION WHEN invalid_text_representation OR numeric_value_out_of_range THEN
    RETURN NULL;  -- a malformed id names no row
  END;
  RETURN org;
END
$fn$
"""
DROP_ORGANIZATION_OF_FUNCTION_SQL = "DROP FUNCTION IF EXISTS app_organization_of(regclass, text)"

# The second narrow door: every organization's id and nothing else, for the beat sweeps
# that then enter each organization with ``tenant_context`` — without lifting the walls.
ORGANIZATION_IDS_FUNCTION_SQL = f"""
CREATE OR REPLACE FUNCTION app_organization_ids() RETURNS SETOF uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $fn$
  SELECT id FROM {ORGANIZATION_TABLE} ORDER BY id
$fn$
"""  # noqa: S608 — constants
DROP_ORGANIZATION_IDS_FUNCTION_SQL = "DROP FUNCTION IF EXISTS app_organization_ids()"


def reapply_policies_sql(existing: list[tuple[str, bool]]) -> list[str]:
    """The current policy SQL for every table already under a wall (``(table,
    append_only)`` pairs read from the catalog): a migration that changes the predicate
    brings every table to it, whichever app created the table."""
    statements: list[str] = []
    for table, append_only in existing:
        if table == ORGANIZATION_TABLE:
            statements += organization_policy_sql()
        elif table == MEMBERSHIP_TABLE:
            statements += membership_policy_sql()
        else:
            statements += tenant_policy_sql(table, append_only=append_only)
    return statements


# (table, append-only?) of every table with a tenant policy, from the catalog.
EXISTING_POLICIES_SQL = """
SELECT c.relname,
       EXISTS (SELECT 1 FROM pg_policy r WHERE r.polrelid = c.oid
               AND r.polname = 'append_only_' || c.relname || '_update')
FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
WHERE p.polname = 'tenant_isolation_' || c.relname || '_all'
ORDER BY c.relname
"""


class EnableTenantRLS(Operation):
    """Migration operation: put one model's table under the tenant wall (PostgreSQL only).

    Use in the migration that creates the model (or a later one)::

        from accounts.rls import EnableTenantRLS
        operations = [..., EnableTenantRLS("router")]
    """

    reversible = True
    reduces_to_sql = True

    def __init__(self, model_name: str, append_only: bool = False) -> None:
        self.model_name = model_name.lower()
        self.append_only = append_only

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        kwargs: dict[str, Any] = {"append_only": True} if self.append_only else {}
        return (self.__class__.__qualname__, [self.model_name], kwargs)

    def state_forwards(self, app_label: str, state: Any) -> None:
        """Policies are not part of Django's model state."""

    def _table(self, app_label: str, state: Any) -> str:
        return str(state.apps.get_model(app_label, self.model_name)._meta.db_table)

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        table = self._table(app_label, to_state)
        for statement in tenant_policy_sql(table, append_only=self.append_only):
            schema_editor.execute(statement, params=None)

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        for statement in drop_tenant_policy_sql(self._table(app_label, from_state)):
            schema_editor.execute(statement, params=None)

    def describe(self) -> str:
        return f"Enable tenant row-level security on {self.model_name}"

    @property
    def migration_name_fragment(self) -> str:
        return f"rls_{self.model_name}"
