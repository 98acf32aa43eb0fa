"""Deployment checks of the tenant walls (``manage.py check --deploy``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Tags, Warning, register


@register(Tags.security, Tags.database, deploy=True)
def check_application_role(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    """On PostgreSQL the application must run as a role that owns no table, or the
    row-level-security policies do not bind it (the owner bypasses them)."""
    database = settings.DATABASES["default"]
    if database["ENGINE"] not in ("accounts.db", "django.db.backends.postgresql"):
        return []
    problems = []
    if database["ENGINE"] != "accounts.db":
        problems.append(
            Warning(
                "PostgreSQL without the accounts.db engine: no owner mode for migrations.",
                hint="Leave ENGINE to config/settings.py (it switches to accounts.db).",
                id="accounts.W002",
            )
        )
    role = (database.get("OPTIONS") or {}).get("assume_role")
    if not role:
        problems.append(
            Warning(
                "The application connects to PostgreSQL without DATABASE_APP_ROLE: as the "
                "tables' owner it bypasses the tenant row-level-security policies.",
                hint="Create the roles with scripts/db_roles.sh and set "
                "DATABASE_APP_ROLE=retaguarda_app (or connect as that role).",
                id="accounts.W001",
            )
        )
    return problems
