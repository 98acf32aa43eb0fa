"""Every figure of the outcomes page on the small world (tests/analytics/world.py), by
hand: read all live, and again after the beat rolled the days up (the same answers)."""

from __future__ import annotations

from decimal import Decimal

import pytest
import time_machine

from analytics import rollups, selectors
from analytics.models import DailyOutcome, DailyUsage, RollupState
from tests.analytics import world as small

PERIOD = selectors.Period(small.FIRST, small.LAST)


@pytest.fixture
def built(world):
    return small.build(world)


def _outcomes(world, **filters):
    with time_machine.travel(small.NOW, tick=False):
        return selectors.outcomes(world.org_a, PERIOD, **filters)


def _assert_every_figure(data, built):
    # conversations started in the period: c1..c5; turns in it: t1..t6
    assert data.total("conversations") == 5
    assert data.total("turns") == 6
    assert data.total("turns_inbound") == 6
    # AI alone: c1 (closed) and c2 (idle for more than a day); c3, c4 handed off; c5 a case
    assert data.total("conversations_ai_alone") == 2
    assert data.ai_alone_share == pytest.approx(2 / 5)
    assert data.total("conversations_handed_off") == 2
    assert data.handoff_rate == pytest.approx(2 / 5)
    assert {s.key: s.n for s in data.handoff_reasons} == {"requested_human": 1, "low_confidence": 1}
    assert {s.key: s.share for s in data.handoff_reasons} == {
        "requested_human": pytest.approx(0.5),
        "low_confidence": pytest.approx(0.5),
    }
    # routing: t1, t2, t4, t5 routed; t2 a fallback; t1 and t5 decided locally
    assert data.total("routed") == 4
    assert {s.key: s.n for s in data.routing} == {"classified": 3, "fallback": 1}
    assert data.fallback_share == pytest.approx(1 / 4)
    assert data.local_share == pytest.approx(2 / 4)
    # runtime live on t1, t2, t5 (t3 is shadow); t2 fell back to the LLM
    assert data.total("runtime_live") == 3
    assert data.runtime_fallback_rate == pytest.approx(1 / 3)
    assert data.total("follow_ups_sent") == 1
    assert data.total("unresponsive") == 1
    # cases
    cases = data.cases
    assert (cases.opened, cases.resolved, cases.escalated) == (2, 1, 1)
    # first answers: case 1 08:00 → 09:00 = 3600 s; case 2 10:00 → 10:30 = 1800 s
    assert (cases.first_answer.n, cases.first_answer.median_s, cases.first_answer.p90_s) == (
        2,
        2700.0,
        3600.0,
    )
    # resolution: case 1 08:00 → 10:30
    assert (cases.resolution.n, cases.resolution.median_s, cases.resolution.p90_s) == (
        1,
        9000.0,
        9000.0,
    )
    waits = {key: (d.n, d.median_s, d.p90_s) for key, _label, d in cases.waits}
    assert waits == {
        "new_case": (2, 2700.0, 3600.0),  # 3600, 1800
        "customer_answered": (1, 3600.0, 3600.0),  # case 1 09:30 → 10:30
        "customer_unresponsive": (1, 1800.0, 1800.0),  # case 2 11:30 → 12:00
        "awaiting_customer": (2, 2700.0, 3600.0),  # case 1 09:00 → 09:30; case 2 10:30 → 11:30
    }
    # cost: haiku (1000·1 + 200·5 + 5000·0.10 + 2000·1.25)/1e6 = 0.005; sonnet
    # (2000·3 + 100·15)/1e6 = 0.0075; haiku (10000·1 + 1000·5)/1e6 = 0.015
    assert data.cost_usd == Decimal("0.0275")
    assert data.unpriced_calls == 0  # the offline model runs here: free, not unpriced
    assert {d.isoformat(): c for d, c in data.cost_by_day.items()} == {
        "2026-12-10": Decimal("0.005"),
        "2026-12-12": Decimal("0.0075"),
        "2026-12-14": Decimal("0.015"),
    }
    by_agent = {r.label: r for r in data.by_agent}
    assert by_agent["Suporte"].cost_usd == Decimal("0.0125")
    assert by_agent["Vendas"].cost_usd == Decimal("0.015")
    assert (by_agent["Suporte"].conversations, by_agent["Suporte"].turns) == (3, 5)
    assert (by_agent["Vendas"].conversations, by_agent["Vendas"].turns) == (2, 1)
    by_channel = {r.key: r for r in data.by_channel}
    ch1, ch2 = by_channel[str(built.ch1.pk)], by_channel[str(built.ch2.pk)]
    assert (ch1.conversations, ch1.turns, ch1.ai_alone, ch1.handed_off) == (3, 5, 2, 1)
    assert (ch2.conversations, ch2.turns, ch2.ai_alone, ch2.handed_off) == (2, 1, 0, 1)
    assert ch1.cost_usd == Decimal("0.0125") and ch2.cost_usd == Decimal("0.015")
    models = {m: (n, c) for m, n, c in data.cost_by_model}
    assert models == {
        "claude-haiku-4-5": (2, Decimal("0.020")),
        "claude-sonnet-4-5-20250929": (1, Decimal("0.0075")),
        "offline": (1, Decimal("0")),
    }
    # daily chart: c1 and c2 alone (12-10, 12-11), c3 and c4 handed off, c5 other
    days = PERIOD.days
    assert data.daily["ai_alone"][days.index(small.at(12, 10).date())] == 1
    assert sum(data.daily["handed_off"]) == 2
    assert sum(data.daily["other"]) == 1


def test_every_figure_matches_the_hand_count_when_read_live(world, built):
    assert not RollupState.objects.exists()
    _assert_every_figure(_outcomes(world), built)


def test_every_figure_is_the_same_after_the_days_are_rolled_up(world, built):
    with time_machine.travel(small.NOW, tick=False):
        rolled = rollups.roll_up(world.org_a.pk)
    assert rolled > 0
    state = RollupState.objects.get(organization=world.org_a)
    assert state.final_before == small.LAST  # the days before today had ended
    assert state.rolled_at == small.NOW
    assert DailyOutcome.objects.filter(organization=world.org_a).exists()
    assert DailyUsage.objects.filter(organization=world.org_a).count() == 4
    _assert_every_figure(_outcomes(world), built)


def test_rolling_up_twice_changes_nothing(world, built):
    with time_machine.travel(small.NOW, tick=False):
        rollups.roll_up(world.org_a.pk)
        first = sorted(DailyOutcome.objects.values_list("day", "channel_id", "agent_id", "counts"))
        rollups.roll_up(world.org_a.pk)
    again = sorted(DailyOutcome.objects.values_list("day", "channel_id", "agent_id", "counts"))
    assert first == again


def test_a_row_arriving_after_the_roll_up_is_counted_live(world, built):
    with time_machine.travel(small.NOW, tick=False):
        rollups.roll_up(world.org_a.pk)
    later = small.at(12, 15, 12, 30)
    turn = small._turn(built.conversations["c3"], later, {"route": {"source": "channel"}})
    small._call(turn, "claude-haiku-4-5", later, input_tokens=1_000_000)  # + US$ 1.00
    with time_machine.travel(small.at(12, 15, 12, 45), tick=False):
        data = selectors.outcomes(world.org_a, PERIOD)
        assert data.total("turns") == 7
        assert data.cost_usd == Decimal("1.0275")
        rollups.roll_up(world.org_a.pk)  # the next beat run counts it in the rollups
        assert selectors.outcomes(world.org_a, PERIOD).total("turns") == 7
    assert DailyUsage.objects.filter(organization=world.org_a, day=small.LAST).count() == 1


def test_the_channel_filter_keeps_only_that_channels_figures(world, built):
    data = _outcomes(world, channel_id=built.ch2.pk)
    assert data.total("conversations") == 2
    assert data.total("turns") == 1
    assert data.cost_usd == Decimal("0.015")
    assert {s.key: s.n for s in data.handoff_reasons} == {"low_confidence": 1}
    assert (data.cases.opened, data.cases.resolved, data.cases.escalated) == (2, 1, 1)


def test_the_agent_filter_keeps_only_that_agents_figures(world, built):
    data = _outcomes(world, agent_id=built.agent1.pk)
    assert data.total("conversations") == 3
    assert data.total("turns") == 5
    assert data.cost_usd == Decimal("0.0125")
    assert data.cases.opened == 0  # both cases are the other agent's


def test_another_organizations_rows_never_count(world, built):
    data = _outcomes(world)
    assert "manual" not in {s.key for s in data.handoff_reasons}
    with time_machine.travel(small.NOW, tick=False):
        other = selectors.outcomes(world.org_b, PERIOD)
    assert other.total("turns") == 1
    assert other.total("conversations") == 1
    assert other.cost_usd == Decimal("0.099999")
