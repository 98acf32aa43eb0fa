"""Row-level security: the database's own tenant wall, behind the ORM's ``scoped``/``access``.

On PostgreSQL every tenant table (every model with a foreign key to ``Organization``) has
one policy, ``tenant_isolation_<table>_all``, keyed on per-transaction settings::

    app.organization_id   the organization this transaction works for
    app.user_id           the logged-in user (only memberships/organizations read it)
    app.bypass_rls        'on' lifts the walls: staff in the admin, seeding, sweeps

The application connects as (or ``SET ROLE``s to) a role that owns no table, so the
policies bind it; migrations run as the owner (``accounts.db``). Who sets the context:

- pages and API: ``MembershipMiddleware`` (user, then the chosen membership's org);
- webhooks: ``organization_of(ChannelSession, channel_id)`` then ``tenant_context``;
- tasks: ``runs_in_tenant_of(Model, "arg")`` — the task's own row names the org;
- the Django admin (superusers), ``seed_demo``: ``bypass_rls(reason)``.

A new tenant table joins the walls with one migration operation,
``EnableTenantRLS("modelname")``; ``tests/security`` fails for a tenant model without it.
On SQLite (the embedded default) there are no policies: the ORM scoping stands alone,
and every helper here only keeps track of the organization in a context variable.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import logging
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from django.apps import apps
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connections, models, transaction
from django.db.migrations.operations.base import Operation

log = logging.getLogger(__name__)

ORG_SETTING = "app.organization_id"
USER_SETTING = "app.user_id"
BYPASS_SETTING = "app.bypass_rls"

ORGANIZATION_TABLE = "accounts_organization"
MEMBERSHIP_TABLE = "accounts_membership"

_CURRENT_ORG = f"NULLIF(current_setting('{ORG_SETTING}', true), '')::uuid"
_CURRENT_USER = f"NULLIF(current_setting('{USER_SETTING}', true), '')::bigint"
_BYPASS = f"current_setting('{BYPASS_SETTING}', true) = 'on'"
# The one shape of a tenant policy (intent-router Task 1: ``tenant_isolation_<t>_all``).
TENANT_PREDICATE = f"(organization_id = {_CURRENT_ORG} OR {_BYPASS})"

# Python-side view of the walls: which organization this code runs for (both databases).
_organization: contextvars.ContextVar[uuid.UUID | None] = contextvars.ContextVar(
    "rls_organization", default=None
)

F = TypeVar("F", bound=Callable[..., Any])


def policy_name(table: str) -> str:
    return f"tenant_isolation_{table}_all"


def enforced(using: str = "default") -> bool:
    """True where the database enforces the walls (PostgreSQL); SQLite has ORM scoping only."""
    return connections[using].vendor == "postgresql"


def current_organization_id() -> uuid.UUID | None:
    return _organization.get()


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
    the walls are lifted (a staff deletion cascading through the rows).
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
            statements.append(
                f'CREATE POLICY "{restrictive}" ON "{table}" AS RESTRICTIVE '
                f"FOR {command.upper()} USING ({_BYPASS})"
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


# --- setting the context -------------------------------------------------------------------


_SETTINGS = (ORG_SETTING, USER_SETTING, BYPASS_SETTING)


def _swap(using: str, values: dict[str, str], *, local: bool = True) -> dict[str, str]:
    """Set ``values`` and return what the three settings were, in one round trip.

    Run on the raw connection, like Django's own ``SET ROLE``/``SET TIME ZONE``: this is
    connection state, not a query of the request — query-count pins read the same on
    SQLite and PostgreSQL. The CTE is materialized first, so it reads the old values.
    """
    wrapper = connections[using]
    wrapper.ensure_connection()
    reads = ", ".join(f"current_setting(%s, true) AS s{i}" for i in range(len(_SETTINGS)))
    writes = ", ".join("set_config(%s, %s, %s)" for _ in values) or "NULL"
    params: list[Any] = list(_SETTINGS)
    for key, value in values.items():
        params += [key, value, local]
    sql = f"WITH old AS MATERIALIZED (SELECT {reads}) SELECT old.*, {writes} FROM old"  # noqa: S608
    with wrapper.connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return {key: row[i] or "" for i, key in enumerate(_SETTINGS)}


@contextmanager
def _walls(values: dict[str, str], using: str) -> Iterator[None]:
    """``values`` as transaction-local settings for the block.

    Outside a transaction the block becomes one (its end drops the settings). Inside one,
    the block joins it and puts the previous values back when it ends — on an exception
    too, unless the transaction is already aborted (its rollback drops them anyway).
    """
    wrapper = connections[using]
    if not wrapper.in_atomic_block:
        with transaction.atomic(using=using):
            _swap(using, values)
            yield
        return
    previous = _swap(using, values)
    try:
        yield
    finally:
        try:
            _swap(using, {k: previous[k] for k in values})
        except Exception:  # an aborted transaction: its rollback restores everything
            if not (wrapper.needs_rollback or _aborted(wrapper)):
                raise


def _aborted(wrapper: Any) -> bool:
    from psycopg import pq

    status = wrapper.connection.info.transaction_status if wrapper.connection else None
    return bool(status == pq.TransactionStatus.INERROR)


@contextmanager
def tenant_context(organization_id: uuid.UUID | str, *, using: str = "default") -> Iterator[None]:
    """Work for one organization: on PostgreSQL one transaction in which the walls admit
    exactly its rows (and the bypass is off, whatever an outer block did)."""
    if not organization_id:
        raise ValueError("tenant_context needs an organization id")
    org = organization_id if isinstance(organization_id, uuid.UUID) else uuid.UUID(organization_id)
    token = _organization.set(org)
    try:
        if enforced(using):
            with _walls({ORG_SETTING: str(org), BYPASS_SETTING: "off"}, using):
                yield
        else:
            yield
    finally:
        _organization.reset(token)


@contextmanager
def user_context(user_id: int | None, *, using: str = "default") -> Iterator[None]:
    """The logged-in user, so their own memberships and organizations are readable
    before an organization is chosen (login, the org switcher)."""
    if enforced(using):
        value = "" if user_id is None else str(int(user_id))
        with _walls({USER_SETTING: value, ORG_SETTING: "", BYPASS_SETTING: "off"}, using):
            yield
    else:
        yield


@contextmanager
def bypass_rls(reason: str, *, using: str = "default") -> Iterator[None]:
    """Lift the walls for one transaction. Privileged paths only — superusers in the admin,
    ``seed_demo``, cross-organization sweeps that only collect ids — each naming ``reason``.
    ``tests/security`` keeps the list of modules allowed to call this."""
    log.info("rls bypass", extra={"reason": reason})
    token = _organization.set(None)
    try:
        if enforced(using):
            with _walls({BYPASS_SETTING: "on"}, using):
                yield
        else:
            yield
    finally:
        _organization.reset(token)


def with_bypass(reason: str) -> Callable[[F], F]:
    """Decorator form of ``bypass_rls`` (management commands)."""

    def decorator(fn: F) -> F:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with bypass_rls(reason):
                return fn(*args, **kwargs)

        return wrapped  # type: ignore[return-value]

    return decorator


# --- the narrow door: which organization owns a row ----------------------------------------


def organization_of(
    model: type[models.Model], pk: Any, *, using: str = "default"
) -> uuid.UUID | None:
    """The organization owning row ``pk`` of tenant ``model`` (None when there is no such
    row), read without any context — through ``app_organization_of`` on PostgreSQL."""
    if pk is None or pk == "":
        return None
    if not enforced(using):
        manager = model._default_manager.using(using)
        try:
            found = manager.filter(pk=pk).values_list("organization_id", flat=True).first()
        except (ValueError, TypeError, ValidationError, DatabaseError):  # a malformed id
            return None
        return None if found is None else uuid.UUID(str(found))
    with connections[using].cursor() as cursor:
        cursor.execute(
            "SELECT app_organization_of(%s::regclass, %s)", [model._meta.db_table, str(pk)]
        )
        row = cursor.fetchone()
    value = row[0] if row else None
    if value is None:
        return None
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def runs_in_tenant_of(model: type[models.Model], arg: str) -> Callable[[F], F]:
    """Task decorator: the task's argument ``arg`` is the id of a ``model`` row; the task
    body runs in that row's organization. A vanished row ends the task quietly (None).

        @shared_task(name="cases.case_reply_turn")
        @rls.runs_in_tenant_of(CaseEvent, "event_id")
        def case_reply_turn(event_id: str) -> None: ...
    """

    def decorator(fn: F) -> F:
        signature = inspect.signature(fn)
        if arg not in signature.parameters:
            raise TypeError(f"{fn.__name__} has no argument {arg!r}")

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            pk = signature.bind(*args, **kwargs).arguments[arg]
            organization_id = organization_of(model, pk)
            if organization_id is None:
                log.info(
                    "task row vanished",
                    extra={"task": fn.__name__, "model": model._meta.label, "id": str(pk)},
                )
                return None
            with tenant_context(organization_id):
                return fn(*args, **kwargs)

        return wrapped  # type: ignore[return-value]

    return decorator


def organization_ids() -> list[uuid.UUID]:
    """Every organization's id, for periodic work that then enters each one with
    ``tenant_context`` (beat sweeps: due follow-ups, stale-case reminders)."""
    from accounts.models import Organization

    with bypass_rls("list organizations for a sweep"):
        return list(Organization.objects.order_by("pk").values_list("pk", flat=True))


@contextmanager
def unprivileged(using: str = "default") -> Iterator[None]:
    """Run with the walls up even where the session lifts them (the test process lifts
    them for fixtures): in-process tasks must set their own context like a real worker."""
    if not enforced(using):
        yield
        return
    previous = _swap(using, {}, local=False)
    lifted = previous[BYPASS_SETTING] == "on"
    if lifted:
        _swap(using, {BYPASS_SETTING: "off", ORG_SETTING: ""}, local=False)
    try:
        yield
    finally:
        if lifted:
            try:
                _swap(using, {BYPASS_SETTING: "on", ORG_SETTING: ""}, local=False)
            except Exception:  # an aborted transaction: its rollback restores the session
                log.warning("could not restore the session's rls settings")
