"""Two roll-ups of one organization at the same time (a beat run slower than the beat's
period, a redelivered task) count every row once.

On PostgreSQL the second run's DELETE does not see the first run's new rows (they were
committed after the statement began), so without a lock both runs' rows stay and every
figure doubles. Only meaningful where transactions really overlap: PostgreSQL (SQLite
serializes writers)."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import pytest
import time_machine
from django.db import connection

from accounts import rls
from analytics import rollups, selectors
from analytics.models import DailyOutcome, DailyUsage
from tests.analytics import world as small

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs overlapping transactions"),
    pytest.mark.django_db(transaction=True),
]

PERIOD = selectors.Period(small.FIRST, small.LAST)


def _race(organization_id: Any) -> None:
    """Run A holds its transaction open for a moment right after inserting its rows; run B
    starts meanwhile."""
    inserted = threading.Event()
    errors: list[BaseException] = []

    def hold_after_insert(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        result = execute(sql, params, many, context)
        if sql.startswith('INSERT INTO "analytics_dailyusage"'):
            inserted.set()
            time.sleep(1.0)
        return result

    def run(hold: bool) -> None:
        try:
            if not hold:
                inserted.wait(timeout=20)
            wrapper = connection.execute_wrapper(hold_after_insert)
            with wrapper if hold else contextlib.nullcontext(), rls.tenant_context(organization_id):
                rollups.roll_up(organization_id, now=small.NOW)
        except BaseException as error:  # pragma: no cover — reported below
            errors.append(error)
            inserted.set()
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(hold,)) for hold in (True, False)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []


def test_two_roll_ups_at_once_count_every_turn_and_call_once(world):
    small.build(world)
    org = world.org_a.pk
    for _round in range(2):  # the organization's first roll-up, then a later one
        _race(org)
        usage = list(
            DailyUsage.objects.filter(organization_id=org).values_list(
                "day", "channel_id", "agent_id", "model"
            )
        )
        assert len(usage) == len(set(usage)) == 4
        outcomes = list(
            DailyOutcome.objects.filter(organization_id=org).values_list(
                "day", "channel_id", "agent_id"
            )
        )
        assert len(outcomes) == len(set(outcomes))
        with time_machine.travel(small.NOW, tick=False):
            data = selectors.outcomes(world.org_a, PERIOD)
        assert data.total("turns") == 6
        assert data.total("handoffs") == 2
