"""Shared set-up for benchmarks: a fresh database, migrated, with the demo seeded."""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
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


MACHINE_LOOP_STEPS = 2_000_000


def machine_loop_ms(rounds: int = 3) -> float:
    """CPU milliseconds of a fixed pure-Python loop, best of ``rounds``: how fast the machine
    runs Python right now. The same 2-core machine has run it 2.4 times slower on some days
    than on others, so every speed figure is read beside this one."""
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        total = 0
        for i in range(MACHINE_LOOP_STEPS):
            total += i
        best = min(best, time.process_time() - started)
    return round(best * 1000, 1)


def emit_machine_line(rounds: int = 3) -> None:
    steps = MACHINE_LOOP_STEPS
    emit("machine_python_loop_2m_cpu", machine_loop_ms(rounds), "ms", steps, rounds=rounds)


def emit(name: str, value: float, unit: str, n: int, **extra: Any) -> None:
    print(json.dumps({"name": name, "value": round(value, 3), "unit": unit, "n": n, **extra}))


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")
