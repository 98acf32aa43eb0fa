"""``DB_PREPARED_STATEMENTS``: the knob that turns on server-side binding with psycopg's
prepared statements (config/settings/base.py). Off unless asked for — behind PgBouncer
before 1.21 in transaction mode a prepared statement would be missing on the next
transaction's server connection — and only ever for PostgreSQL. That the tenant walls hold
on prepared statements: ``test_pooled_tenant_context.py``."""

from __future__ import annotations

import json
from typing import Any

from tests.serving.settings_probe import settings_lines


def _options(database_url: str, **env: str) -> dict[str, Any]:
    (line,) = settings_lines(
        ["json.dumps(settings.DATABASES['default'].get('OPTIONS') or {}, default=str)"],
        drop_prefixes=("DB_", "DATABASE_", "DJANGO_"),
        DATABASE_URL=database_url,
        **env,
    )
    options: dict[str, Any] = json.loads(line)
    return options


POSTGRES = "postgres://someone@127.0.0.1:5432/nowhere"


def test_prepared_statements_are_off_unless_asked_for() -> None:
    options = _options(POSTGRES)
    assert "server_side_binding" not in options and "prepare_threshold" not in options


def test_the_knob_binds_server_side_and_prepares_after_five_runs() -> None:
    options = _options(POSTGRES, DB_PREPARED_STATEMENTS="1")
    assert options["server_side_binding"] is True
    assert options["prepare_threshold"] == 5
    assert (
        _options(POSTGRES, DB_PREPARED_STATEMENTS="1", DB_PREPARE_THRESHOLD="2")[
            "prepare_threshold"
        ]
        == 2
    )


def test_the_knob_leaves_sqlite_alone() -> None:
    options = _options("sqlite:////tmp/retaguarda-knob.sqlite3", DB_PREPARED_STATEMENTS="1")
    assert "server_side_binding" not in options and "prepare_threshold" not in options


def test_each_process_names_its_database_connections_for_pg_stat_activity() -> None:
    # scripts/serve.sh and scripts/worker.sh set it (retaguarda-web, retaguarda-turns...);
    # bench/load.py finds the workers' backends by it.
    assert _options(POSTGRES, DATABASE_APPLICATION_NAME="retaguarda-turns")["application_name"] == (
        "retaguarda-turns"
    )
    assert "application_name" not in _options(POSTGRES)
