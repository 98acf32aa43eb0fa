"""Row-level security: the database's own tenant wall, behind the ORM's ``scoped``/``access``.

On PostgreSQL every tenant table (every model with a foreign key to ``Organization``) has
one policy, ``tenant_isolation_<table>_all``, keyed on per-transaction settings::

    app.organization_id   the organization this transaction works for
    app.user_id           the logged-in user (only memberships/organizations read it)
    app.bypass_rls        'on' lifts the walls — honoured only in a session that logged in
                          as the tables' owner (``rls_policies.OWNER_SESSION``): staff in
                          the admin and seeding where the app logs in as the owner and
                          SET ROLEs down (development, tests); never for the app role's
                          own login (production)

The application connects as (or ``SET ROLE``s to) a role that owns no table, so the
policies bind it; migrations run as the owner (``accounts.db``). Who sets the context:

- pages and API: ``MembershipMiddleware`` (user, then the chosen membership's org);
- webhooks: ``organization_of(ChannelSession, channel_id)`` then ``tenant_context``;
- tasks: ``runs_in_tenant_of(Model, "arg")`` — the task's own row names the org;
- the Django admin (superusers), ``seed_demo``: ``bypass_rls(reason)``.

A new tenant table joins the walls with one migration operation,
``EnableTenantRLS("modelname")``; ``tests/security`` fails for a tenant model without it.
The policies' SQL, the tenant-table registry and that operation live in
``accounts.rls_policies``; this module sets the context and re-exports them all.
On SQLite (the embedded default) there are no policies: the ORM scoping stands alone,
and every helper here only keeps track of the organization in a context variable.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import logging
import uuid
import zoneinfo
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar

from django.core.exceptions import ValidationError
from django.db import DatabaseError, connections, models, transaction
from django.utils import timezone

from accounts import time_zones

# The policies, the registry of tenant tables and the migration operation live beside this
# module; every name stays importable from ``accounts.rls``.
from accounts.rls_policies import (
    BYPASS_SETTING,
    DROP_ORGANIZATION_OF_FUNCTION_SQL,
    ERASURE_SETTING,
    MEMBERSHIP_TABLE,
    ORG_SETTING,
    ORGANIZATION_OF_FUNCTION_SQL,
    ORGANIZATION_TABLE,
    TENANT_PREDICATE,
    USER_SETTING,
    EnableTenantRLS,
    drop_tenant_policy_sql,
    is_tenant_model,
    membership_policy_sql,
    models_with_organization_link,
    organization_policy_sql,
    policy_name,
    tenant_models,
    tenant_policy_sql,
)

__all__ = [
    "BYPASS_SETTING",
    "DROP_ORGANIZATION_OF_FUNCTION_SQL",
    "MEMBERSHIP_TABLE",
    "ORGANIZATION_OF_FUNCTION_SQL",
    "ORGANIZATION_TABLE",
    "ORG_SETTING",
    "TENANT_PREDICATE",
    "USER_SETTING",
    "EnableTenantRLS",
    "bypass_rls",
    "current_organization_id",
    "drop_tenant_policy_sql",
    "enforced",
    "is_tenant_model",
    "membership_policy_sql",
    "models_with_organization_link",
    "organization_ids",
    "organization_of",
    "organization_policy_sql",
    "policy_name",
    "runs_in_tenant_of",
    "tenant_context",
    "tenant_models",
    "tenant_policy_sql",
    "unprivileged",
    "user_context",
    "with_bypass",
]

log = logging.getLogger(__name__)

# Python-side view of the walls: which organization this code runs for (both databases).
_organization: contextvars.ContextVar[uuid.UUID | None] = contextvars.ContextVar(
    "rls_organization", default=None
)

F = TypeVar("F", bound=Callable[..., Any])


def enforced(using: str = "default") -> bool:
    """True where the database enforces the walls (PostgreSQL); SQLite has ORM scoping only."""
    return connections[using].vendor == "postgresql"


def current_organization_id() -> uuid.UUID | None:
    return _organization.get()


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
    """``values`` as transaction-local settings for the block, where the database enforces
    the walls (elsewhere the block just runs).

    Outside a transaction the block becomes one (its end drops the settings). Inside one,
    the block joins it and puts the previous values back when it ends — on an exception
    too, unless the transaction is already aborted (its rollback drops them anyway).
    """
    if not enforced(using):
        yield
        return
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
def _working_for(
    organization: uuid.UUID | None, values: dict[str, str], using: str
) -> Iterator[None]:
    """The block works for ``organization`` (None: for no one in particular), which the ORM
    scoping reads, behind the walls ``values`` describe."""
    token = _organization.set(organization)
    try:
        with _walls(values, using):
            yield
    finally:
        _organization.reset(token)


@contextmanager
def tenant_context(organization_id: uuid.UUID | str, *, using: str = "default") -> Iterator[None]:
    """Work for one organization: on PostgreSQL one transaction in which the walls admit
    exactly its rows (and the bypass is off, whatever an outer block did), in the
    organization's time zone (``django.utils.timezone``: local days, months, times)."""
    if not organization_id:
        raise ValueError("tenant_context needs an organization id")
    org = organization_id if isinstance(organization_id, uuid.UUID) else uuid.UUID(organization_id)
    # The zone is read once the walls admit the organization (``with`` enters in order).
    with (
        _working_for(org, {ORG_SETTING: str(org), BYPASS_SETTING: "off"}, using),
        timezone.override(_time_zone_of(org, using)),
    ):
        yield


def _time_zone_of(organization: uuid.UUID, using: str) -> zoneinfo.ZoneInfo:
    """The organization's zone: as this process last saw its row (no query), else read
    once (``accounts.time_zones``). Called where the walls already admit the organization."""
    name = time_zones.remembered(organization)
    if name is None:
        from accounts.models import Organization

        found = Organization.objects.using(using).filter(pk=organization)
        name = found.values_list("time_zone", flat=True).first() or time_zones.DEFAULT_TIME_ZONE
        time_zones.remember(organization, name)
    return time_zones.zone(name)


@contextmanager
def user_context(user_id: int | None, *, using: str = "default") -> Iterator[None]:
    """The logged-in user, so their own memberships and organizations are readable
    before an organization is chosen (login, the org switcher)."""
    value = "" if user_id is None else str(int(user_id))
    with _walls({USER_SETTING: value, ORG_SETTING: "", BYPASS_SETTING: "off"}, using):
        yield


@contextmanager
def bypass_rls(reason: str, *, using: str = "default") -> Iterator[None]:
    """Lift the walls for one transaction. Privileged paths only — superusers in the admin,
    ``seed_demo``, cross-organization sweeps that only collect ids — each naming ``reason``.
    ``tests/security`` keeps the list of modules allowed to call this."""
    log.info("rls bypass", extra={"reason": reason})
    with _working_for(None, {BYPASS_SETTING: "on"}, using):
        yield


@contextmanager
def erasure(*, using: str = "default") -> Iterator[None]:
    """Inside the current transaction, let an LGPD erasure rewrite append-only rows (the
    holder's text in case timelines); the tenant wall still applies. Must run in a
    transaction: the permission ends with it."""
    if not enforced(using):
        yield
        return
    if not connections[using].in_atomic_block:
        raise RuntimeError("rls.erasure() needs an open transaction")
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT set_config(%s, 'on', true)", [ERASURE_SETTING])
    try:
        yield
    finally:
        if not connections[using].needs_rollback:
            with connections[using].cursor() as cursor:
                cursor.execute("SELECT set_config(%s, '', true)", [ERASURE_SETTING])


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


def runs_in_tenant_of(
    model: type[models.Model],
    arg: str,
    *,
    context: Callable[[uuid.UUID], AbstractContextManager[None]] | None = None,
) -> Callable[[F], F]:
    """Task decorator: the task's argument ``arg`` is the id of a ``model`` row; the task
    body runs in that row's organization. A vanished row ends the task quietly (None).
    ``context``: how the body enters it — ``tenant_context`` (one transaction) unless
    given (the turn package's ``tenant_session``: short transactions of its own).

        @shared_task(name="cases.case_reply_turn")
        @rls.runs_in_tenant_of(CaseEvent, "event_id")
        def case_reply_turn(event_id: str) -> None: ...
    """
    enter = context or tenant_context

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
            # The zone too: a ``context`` of the caller's (``tenant_session``) sets none.
            with (
                enter(organization_id),
                timezone.override(_time_zone_of(organization_id, "default")),
            ):
                return fn(*args, **kwargs)

        return wrapped  # type: ignore[return-value]

    return decorator


def organization_ids(*, using: str = "default") -> list[uuid.UUID]:
    """Every organization's id, for periodic work that then enters each one with
    ``tenant_context`` (beat sweeps: due follow-ups, stale-case reminders). On PostgreSQL
    through ``app_organization_ids()``, which reveals ids only: no walls are lifted."""
    from accounts.models import Organization

    if not enforced(using):
        return list(Organization.objects.using(using).order_by("pk").values_list("pk", flat=True))
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT app_organization_ids()")
        rows = cursor.fetchall()
    return [r[0] if isinstance(r[0], uuid.UUID) else uuid.UUID(str(r[0])) for r in rows]


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
