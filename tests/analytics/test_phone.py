"""The outcomes page on a 390 px phone (Debian's Chromium): its charts stay readable."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from analytics.models import ModelPrice
from conversation.models import LlmCall
from tests import factories
from tests.browser import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_charts_axis_labels_stay_readable_on_a_phone(world, live_server, phone_page):
    world.manager.set_password(factories.PASSWORD)
    world.manager.save(update_fields=["password"])
    # Its own price: a transactional test's flush empties the seeded price list, so the
    # prices the migration wrote are there only if no such test ran before this one.
    ModelPrice.objects.create(
        model="claude-haiku-4-5",
        input_per_mtok=Decimal("1"),
        output_per_mtok=Decimal("5"),
        cache_write_per_mtok=Decimal("1.25"),
        cache_read_per_mtok=Decimal("0.1"),
        effective_date=dt.date(2020, 1, 1),
        source_date=dt.date(2020, 1, 1),
    )
    conversation = factories.make_conversation(world.channel_a)
    LlmCall.objects.create(
        organization=world.org_a,
        conversation=conversation,
        purpose="orchestrator",
        provider="anthropic",
        model="claude-haiku-4-5",
        input_tokens=300_000,
    )
    page = phone_page
    login(page, live_server.url, world.manager)
    page.goto(f"{live_server.url}/resultados/")
    for chart in ("#conversation-chart", "#cost-chart"):
        sizes = page.eval_on_selector_all(
            f"{chart} svg.chart-plot text",
            "els => els.map(e => e.getBoundingClientRect().height)",
        )
        assert sizes and min(sizes) >= 9, f"{chart}: labels {sizes} px tall"
        # the latest day is in view: the chart scrolls towards the older ones
        last = page.eval_on_selector_all(
            f"{chart} svg.chart-plot text", "els => els[els.length - 1].getBoundingClientRect()"
        )
        assert last["x"] >= 0 and last["x"] + last["width"] <= 390, f"{chart}: {last}"
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0  # the page itself never scrolls sideways
