"""The ``accounts.db`` engine: Django's PostgreSQL backend, running as the application role.

Two roles: the login role of ``DATABASE_URL`` owns the tables (migrations run as it), and
``OPTIONS["assume_role"]`` — ``DATABASE_APP_ROLE``, created by ``scripts/db_roles.sh`` —
owns nothing, so row-level security binds it. Django 5.2 already ``SET ROLE``s every new
connection to ``assume_role``; this backend adds ``owner_mode()`` for the paths that change
the schema, and the grants that let the application role use what the owner created.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connections
from django.db.backends.postgresql import base, creation
from psycopg import sql

log = logging.getLogger(__name__)

_state = threading.local()
# Set once this process created a test database: its sessions lift the walls so fixtures
# can build two organizations' rows; requests, tasks and ``tenant_context`` put them back
# up for their own transaction (``accounts.rls``). Never set outside a test run.
_test_session = False


def application_role(settings_dict: dict[str, Any]) -> str:
    return str((settings_dict.get("OPTIONS") or {}).get("assume_role") or "")


def _owner_mode_active() -> bool:
    return getattr(_state, "depth", 0) > 0


def _reconfigure_open_connections() -> None:
    for wrapper in connections.all(initialized_only=True):
        if isinstance(wrapper, DatabaseWrapper) and wrapper.connection is not None:
            wrapper._configure_role(wrapper.connection)


@contextmanager
def owner_mode() -> Iterator[None]:
    """Run as the login (owner) role in this thread: DDL, grants, TRUNCATE."""
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        _reconfigure_open_connections()
        yield
    finally:
        _state.depth -= 1
        if _state.depth == 0:
            _reconfigure_open_connections()


def mark_test_session() -> None:
    global _test_session
    _test_session = True
    _reconfigure_open_connections()


def grant_application_role(wrapper: Any) -> None:
    """Let the application role read and write every table the owner created, now and
    later — but never change the schema, truncate, or rewrite the migration history."""
    role = application_role(wrapper.settings_dict)
    if wrapper.vendor != "postgresql" or not role or role == wrapper.settings_dict.get("USER"):
        return
    q = wrapper.ops.quote_name(role)
    with wrapper.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        schema = wrapper.ops.quote_name(cursor.fetchone()[0])
        for statement in (
            f"GRANT USAGE ON SCHEMA {schema} TO {q}",
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {q}",
            f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {q}",
            f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} "
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {q}",
            f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT USAGE, SELECT ON SEQUENCES TO {q}",
        ):
            cursor.execute(statement)
        cursor.execute("SELECT to_regclass('django_migrations') IS NOT NULL")
        if cursor.fetchone()[0]:
            cursor.execute(f"REVOKE INSERT, UPDATE, DELETE ON django_migrations FROM {q}")


class DatabaseCreation(creation.DatabaseCreation):
    """The test database is created, migrated and destroyed by the owner."""

    def create_test_db(self, *args: Any, **kwargs: Any) -> str:
        with owner_mode():
            name = super().create_test_db(*args, **kwargs)
        mark_test_session()
        return str(name)

    def clone_test_db(self, *args: Any, **kwargs: Any) -> None:
        with owner_mode():
            super().clone_test_db(*args, **kwargs)

    def destroy_test_db(self, *args: Any, **kwargs: Any) -> None:
        with owner_mode():
            super().destroy_test_db(*args, **kwargs)


class DatabaseWrapper(base.DatabaseWrapper):
    creation_class = DatabaseCreation

    def _configure_role(self, connection: Any) -> bool:
        role = application_role(self.settings_dict)
        with connection.cursor() as cursor:
            if _owner_mode_active():
                cursor.execute("RESET ROLE")
                cursor.execute("SELECT set_config('app.bypass_rls', '', false)")
                return True
            if role and role != self.settings_dict.get("USER"):
                # Composed by psycopg, not ``self.ops.compose_sql``: that opens a cursor
                # through this wrapper, and Django's connection pool configures new
                # connections on its own threads — where it would wait on the pool itself.
                cursor.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
            if _test_session:
                cursor.execute("SELECT set_config('app.bypass_rls', 'on', false)")
        return bool(role) or _test_session
