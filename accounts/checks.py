"""Deployment checks of the tenant walls (``manage.py check --deploy``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register


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
                hint="Leave ENGINE to config/settings/base.py (it switches to accounts.db).",
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
    user = str(database.get("USER") or "")
    if role and user and role != user:
        problems.append(
            Warning(
                f"The application logs in as {user!r} and only SET ROLEs to {role!r}: any "
                "query that runs RESET ROLE is back to the login role, which owns the tables "
                "and is above the tenant walls.",
                hint="In production log in as the application role (DATABASE_URL=postgres://"
                f"{role}@...) and give migrations the owner's URL in MIGRATE_DATABASE_URL "
                "(scripts/serve.sh).",
                id="accounts.W003",
            )
        )
    return problems


@register(Tags.security)
def check_field_encryption_keys(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """Every configured key must be a Fernet key, or no channel secret can be read."""
    from accounts.encryption import invalid_keys

    keys = [str(k).strip() for k in getattr(settings, "FIELD_ENCRYPTION_KEYS", []) or []]
    bad = invalid_keys([k for k in keys if k])
    if not bad:
        return []
    return [
        Error(
            f"FIELD_ENCRYPTION_KEYS: entries {bad} (0 = first) are not Fernet keys.",
            hint="Generate one with: manage.py generate_field_key",
            id="accounts.E011",
        )
    ]


@register(Tags.security, deploy=True)
def check_field_encryption_keys_in_production(
    app_configs: Any = None, **kwargs: Any
) -> list[Error]:
    """Production needs its own keys: the development key derives from SECRET_KEY, and
    rotating SECRET_KEY would then make every stored channel secret unreadable."""
    keys = [str(k).strip() for k in getattr(settings, "FIELD_ENCRYPTION_KEYS", []) or []]
    if any(keys):
        return []
    return [
        Error(
            "FIELD_ENCRYPTION_KEYS is not set: channel secrets are encrypted with a key "
            "derived from DJANGO_SECRET_KEY.",
            hint="Set FIELD_ENCRYPTION_KEYS to a key from manage.py generate_field_key "
            "(README, 'Secrets at rest').",
            id="accounts.E010",
        )
    ]
