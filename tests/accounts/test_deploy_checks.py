"""check --deploy asks production to log in as the application role itself."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]


def _check_deploy(**extra: str) -> str:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        DJANGO_ENV="production",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="retaguarda.example.com",
        DJANGO_SETTINGS_MODULE="config.settings",
        FIELD_ENCRYPTION_KEYS=Fernet.generate_key().decode(),
        **extra,
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    return result.stdout + result.stderr


def test_logging_in_as_the_owner_and_setting_role_down_is_flagged():
    out = _check_deploy(
        DATABASE_URL="postgres://retaguarda_owner@db.example:5432/retaguarda",
        DATABASE_APP_ROLE="retaguarda_app",
    )
    assert "accounts.W003" in out and "MIGRATE_DATABASE_URL" in out


def test_logging_in_as_the_application_role_passes():
    out = _check_deploy(
        DATABASE_URL="postgres://retaguarda_app@db.example:5432/retaguarda",
        DATABASE_APP_ROLE="retaguarda_app",
    )
    assert "accounts.W00" not in out
