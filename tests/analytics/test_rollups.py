"""The beat's roll-ups against what the rows say: outcomes settled long after a
conversation started, a roll-up committing while a reader reads, and one organization's
failing roll-up among many."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.db import connection

from analytics import budgets, rollups, selectors, tasks
from analytics.models import RollupState
from conversation.models import Handoff, LlmCall
from tests.analytics import world as small

PERIOD = selectors.Period(small.FIRST, small.LAST)


def _roll(organization_id: Any, when: dt.datetime) -> None:
    with time_machine.travel(when, tick=False):
        rollups.roll_up(organization_id)


def test_a_conversation_handed_off_days_after_it_started_counts_as_handed_off(world):
    # One conversation per contact and channel, reopened when the customer writes again:
    # it started on 12-01, went quiet (AI alone), and the customer came back on 12-10 and
    # asked for a person. The beat rolled every day in between.
    conversation = small._conversation(world.channel_a, "5511900000077", small.at(12, 1, 9))
    for day in range(1, 10):
        _roll(world.org_a.pk, small.at(12, day, 23))
    with time_machine.travel(small.at(12, 10, 9), tick=False):
        Handoff.objects.create(
            organization=world.org_a, conversation=conversation, reason_code="requested_human"
        )
    _roll(world.org_a.pk, small.NOW)
    with time_machine.travel(small.NOW, tick=False):
        data = selectors.outcomes(world.org_a, PERIOD)
    assert data.total("conversations") == 1
    assert data.total("conversations_handed_off") == 1
    assert data.total("conversations_ai_alone") == 0
    assert data.handoff_rate == pytest.approx(1.0)
    assert data.daily["handed_off"][PERIOD.days.index(dt.date(2026, 12, 1))] == 1


def test_a_roll_up_committing_while_the_spend_is_read_counts_each_call_once(world):
    _roll(world.org_a.pk, small.at(12, 15, 9))
    with time_machine.travel(small.at(12, 15, 10), tick=False):
        LlmCall.objects.create(
            organization=world.org_a,
            purpose="orchestrator",
            provider="anthropic",
            model="claude-haiku-4-5",
            input_tokens=1_000_000,  # US$ 1.00
        )
    fired = []

    def roll_before_the_rollups_are_read(execute, sql, params, many, context):
        # The beat's next run commits between the reader's look at the state and its
        # read of the rollup rows (it then counts the call; so would the live tail).
        if not fired and sql.startswith("SELECT") and '"analytics_dailyusage"' in sql:
            fired.append(sql)
            rollups.roll_up(world.org_a.pk, now=small.at(12, 15, 11))
        return execute(sql, params, many, context)

    with (
        time_machine.travel(small.NOW, tick=False),
        connection.execute_wrapper(roll_before_the_rollups_are_read),
    ):
        spend = budgets.month_spend(world.org_a.pk)
    assert fired
    assert spend.total_usd == Decimal("1")


def test_rolling_up_again_with_an_earlier_clock_keeps_the_later_roll_up(world):
    # A run that waited on the lock for one that started after it has nothing to add.
    small.build(world)
    _roll(world.org_a.pk, small.NOW)
    assert rollups.roll_up(world.org_a.pk, now=small.NOW - dt.timedelta(minutes=5)) == 0
    assert RollupState.objects.get(organization=world.org_a).rolled_at == small.NOW
    with time_machine.travel(small.NOW, tick=False):
        assert selectors.outcomes(world.org_a, PERIOD).total("turns") == 6


def test_one_organizations_failing_roll_up_does_not_stop_the_others(world, monkeypatch):
    from accounts import rls

    first, *others = rls.organization_ids()
    real = rollups.aggregate

    def aggregate(organization_id: Any, *args: Any, **kwargs: Any) -> Any:
        if organization_id == first:
            raise RuntimeError("one organization's bad row")
        return real(organization_id, *args, **kwargs)

    monkeypatch.setattr(rollups, "aggregate", aggregate)
    with time_machine.travel(small.NOW, tick=False):
        tasks.roll_up()
    assert not RollupState.objects.filter(organization_id=first).exists()
    assert set(RollupState.objects.values_list("organization_id", flat=True)) == set(others)
