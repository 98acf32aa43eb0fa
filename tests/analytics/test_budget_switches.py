"""The budget's switches over a month's life: the banner follows the switch in force
(a limit lowered back, a price corrected, a new month), and the staff notice reads in
pt-BR without holding the turn on a slow mail server."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, ClassVar

import pytest
import time_machine
from django.core import mail
from django.core.mail.backends import locmem
from django.utils import timezone

from analytics import services
from analytics.budgets import BudgetConfig
from analytics.models import BudgetSwitch, ModelPrice
from conversation.models import LlmCall, Message, Turn
from tests.conversation.test_turns import say

NOVEMBER = timezone.make_aware(dt.datetime(2026, 11, 20, 10, 0))
DECEMBER = timezone.make_aware(dt.datetime(2026, 12, 3, 10, 0))


@pytest.fixture
def staff(world):
    for user in (world.admin, world.manager):
        user.email = f"{user.username}@example.com"
        user.save(update_fields=["email"])
    return world


def _spend(world: Any, input_tokens: int = 1_000_000) -> None:
    """One haiku call: a million input tokens = US$ 1.00 at the seeded price."""
    LlmCall.objects.create(
        organization=world.org_a,
        purpose="orchestrator",
        provider="anthropic",
        model="claude-haiku-4-5",
        input_tokens=input_tokens,
    )


def _budget(world: Any, limit: str) -> None:
    services.budget_set(
        organization=world.org_a,
        actor=world.admin,
        config=BudgetConfig(monthly_limit_usd=Decimal(limit)),
    )
    world.org_a.refresh_from_db()


def _banner(world: Any) -> str:
    html = world.client_for(world.viewer).get("/").content.decode()
    if 'id="budget-banner"' not in html:
        return ""
    return "stopped" if "budget-banner-stopped" in html else "alert"


def _stopped(msg_id: str) -> bool:
    message = Message.objects.get(provider_message_id=msg_id)
    trace = Turn.objects.get(pk=message.turn_id).trace
    return trace.get("budget", {}).get("stop") == "monthly_spend"


def test_last_months_stop_sends_no_reopened_notice_when_the_limit_changes(
    staff, django_capture_on_commit_callbacks
):
    with time_machine.travel(NOVEMBER, tick=True):
        _spend(staff)
        _budget(staff, "0.50")
        say(staff.channel_a, "oi", "nov-1", capture=django_capture_on_commit_callbacks)
    assert _stopped("nov-1")
    assert list(BudgetSwitch.objects.values_list("month", "level")) == [("2026-11", "stopped")]
    mail.outbox.clear()
    with time_machine.travel(DECEMBER, tick=True):
        _budget(staff, "0.40")  # nothing spent in December yet; the admin lowers the limit
        assert not BudgetSwitch.objects.filter(level="reopened").exists()
        assert mail.outbox == []
        assert _banner(staff) == ""


def test_a_limit_lowered_back_to_one_already_crossed_shows_the_stop_again(
    staff, django_capture_on_commit_callbacks
):
    _spend(staff)
    _budget(staff, "0.50")
    say(staff.channel_a, "oi", "low-1", capture=django_capture_on_commit_callbacks)
    assert _stopped("low-1") and _banner(staff) == "stopped"
    _budget(staff, "5.00")
    assert _banner(staff) == ""
    _budget(staff, "0.50")
    say(staff.channel_a, "de novo", "low-2", capture=django_capture_on_commit_callbacks)
    assert _stopped("low-2")
    assert _banner(staff) == "stopped"  # the model is stopped: the staff must see it
    # the stop under this limit is recorded and noticed once a month
    assert [m.subject.endswith("atingido") for m in mail.outbox] == [True]
    assert BudgetSwitch.objects.filter(level="stopped").count() == 1


def test_a_corrected_price_under_the_limit_reopens_the_model_and_its_banner(
    staff, django_capture_on_commit_callbacks
):
    # The platform typed haiku at US$ 10 per million input tokens instead of 1, from the
    # first of this month: the US$ 1.00 spent read as US$ 10.00, past the US$ 5.00 limit.
    today = timezone.localdate()
    wrong = ModelPrice.objects.create(
        model="claude-haiku-4-5",
        input_per_mtok=Decimal("10"),
        output_per_mtok=Decimal("50"),
        cache_write_per_mtok=Decimal("12.5"),
        cache_read_per_mtok=Decimal("1"),
        effective_date=today.replace(day=1),
        source_date=today,
    )
    _spend(staff)
    _budget(staff, "5.00")
    say(staff.channel_a, "oi", "price-1", capture=django_capture_on_commit_callbacks)
    assert _stopped("price-1") and _banner(staff) == "stopped"
    wrong.delete()  # corrected: US$ 1.00 of US$ 5.00
    say(staff.channel_a, "e agora?", "price-2", capture=django_capture_on_commit_callbacks)
    assert not _stopped("price-2")  # the model answers again...
    assert _banner(staff) == ""  # ...and no page says it is stopped
    assert BudgetSwitch.objects.filter(level="reopened").count() == 1


class TimeoutRecordingBackend(locmem.EmailBackend):
    timeouts: ClassVar[list[Any]] = []

    def __init__(self, *args: Any, timeout: Any = None, **kwargs: Any) -> None:
        TimeoutRecordingBackend.timeouts.append(timeout)
        super().__init__(*args, **kwargs)


def test_the_staff_notice_reads_in_pt_br_and_waits_on_the_mail_server_briefly(
    staff, settings, django_capture_on_commit_callbacks
):
    settings.EMAIL_BACKEND = f"{__name__}.TimeoutRecordingBackend"
    TimeoutRecordingBackend.timeouts.clear()
    _spend(staff, input_tokens=1_234_560_000)  # US$ 1,234.56
    _budget(staff, "1000.00")
    say(staff.channel_a, "oi", "notice-1", capture=django_capture_on_commit_callbacks)
    (notice,) = mail.outbox
    assert notice.subject == "Retaguarda: limite mensal de gasto com IA atingido"
    month = timezone.localdate().strftime("%m/%Y")
    assert f"Mês: {month}\n" in notice.body
    assert "Gasto: US$ 1.234,56 de US$ 1.000,00" in notice.body
    assert TimeoutRecordingBackend.timeouts and all(
        t is not None and t <= 10 for t in TimeoutRecordingBackend.timeouts
    )


def test_the_budget_check_of_a_turn_makes_the_same_queries_however_much_was_spent(world):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from analytics import budgets, rollups
    from tests import factories

    _budget(world, "100.00")
    conversation = factories.make_conversation(world.channel_a)
    turn = Turn.objects.create(
        organization=world.org_a,
        conversation=conversation,
        trigger_kind="inbound_message",
        trigger_key="pinned",
    )
    world.org_a.refresh_from_db()
    conversation.organization = world.org_a
    _spend(world)
    rollups.roll_up(world.org_a.pk)
    for _ in range(20):
        _spend(world, input_tokens=10)
    with CaptureQueriesContext(connection) as queries:
        verdict = budgets.evaluate(conversation=conversation, turn=turn)
    # rollup state · daily usage · rollup state again · the live tail (model calls) · prices
    assert len(queries) == 5, "\n".join(q["sql"] for q in queries.captured_queries)
    assert verdict.stop is None and verdict.spend_usd == Decimal("1.0002")
