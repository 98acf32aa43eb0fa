"""Shared set-up for benchmarks: a fresh database, migrated, with the demo seeded."""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def setup_django(database_url: str, **env: str) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.update(env)
    import django

    django.setup()


def fresh_database() -> None:
    from django.core.management import call_command
    from django.db import connection

    if connection.vendor == "sqlite":
        Path(connection.settings_dict["NAME"]).unlink(missing_ok=True)
        connection.close()
    else:
        name = connection.settings_dict["NAME"]
        connection.close()
        with connection._nodb_cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            cursor.execute(f'CREATE DATABASE "{name}"')
    call_command("migrate", verbosity=0)
    call_command("seed_demo", verbosity=0, stdout=open(os.devnull, "w"))  # noqa: SIM115


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def emit(name: str, value: float, unit: str, n: int, **extra: Any) -> None:
    print(json.dumps({"name": name, "value": round(value, 3), "unit": unit, "n": n, **extra}))


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")
