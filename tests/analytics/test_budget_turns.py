"""Budgets through the public path: a customer writes to the simulator webhook and the
turn runs. A budget below the month's spend stops model calls on the next turn, and the
customer still gets an answer (offline model) or a handoff."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core import mail

from accounts.models import AuditLog
from analytics import services
from analytics.budgets import BudgetConfig
from analytics.models import BudgetSwitch
from conversation.models import Handoff, LlmCall, Message, Turn
from conversation.turns.guards import HANDOFF_NOTICE
from tests.cases.conftest import Script, end, tool
from tests.conversation.test_turns import say

MODEL_TEXT = "Resposta escrita pelo modelo."


@pytest.fixture
def spent(world):
    """This month: one call of a million haiku input tokens = US$ 1.00."""
    for user in (world.admin, world.manager):
        user.email = f"{user.username}@example.com"
        user.save(update_fields=["email"])
    LlmCall.objects.create(
        organization=world.org_a,
        purpose="orchestrator",
        provider="anthropic",
        model="claude-haiku-4-5",
        input_tokens=1_000_000,
    )
    return world


def _budget(world, limit, **fields):
    services.budget_set(
        organization=world.org_a,
        actor=world.admin,
        config=BudgetConfig(monthly_limit_usd=Decimal(limit), **fields),
    )
    world.org_a.refresh_from_db()


def _turn_of(msg_id):
    message = Message.objects.get(provider_message_id=msg_id)
    return Turn.objects.get(pk=message.turn_id)


def _outbound(turn):
    return list(
        Message.objects.filter(turn=turn, direction="outbound").values_list("body", flat=True)
    )


def test_a_budget_below_the_months_spend_stops_model_calls_on_the_next_turn(
    spent, django_capture_on_commit_callbacks
):
    _budget(spent, "0.50")
    with Script([tool("send_message", {"text": MODEL_TEXT}), end()]) as model:
        say(
            spent.channel_a,
            "qual o horário de vocês?",
            "b-1",
            capture=django_capture_on_commit_callbacks,
        )
    assert model.requests == []  # the model was never called
    turn = _turn_of("b-1")
    assert turn.trace["budget"]["stop"] == "monthly_spend"
    assert turn.trace["budget"]["path"] == "offline"
    assert turn.trace["budget"]["limit_usd"] == "0.50"
    sent = _outbound(turn)
    assert sent and MODEL_TEXT not in sent  # the customer got the offline model's answer
    assert set(LlmCall.objects.filter(turn=turn).values_list("provider", flat=True)) <= {"offline"}
    switch = BudgetSwitch.objects.get(organization=spent.org_a)
    assert (switch.level, switch.limit_usd, switch.spend_usd) == (
        "stopped",
        Decimal("0.50"),
        Decimal("1"),
    )
    assert (
        AuditLog.objects.filter(organization=spent.org_a, action="analytics.budget_stopped").count()
        == 1
    )
    assert len(mail.outbox) == 1 and "atingido" in mail.outbox[0].subject
    assert sorted(mail.outbox[0].to) == sorted([spent.admin.email, spent.manager.email])


def test_the_stop_is_recorded_once_however_many_turns_cross_it(
    spent, django_capture_on_commit_callbacks
):
    _budget(spent, "0.50")
    for i in range(2):
        say(
            spent.channel_a,
            "oi",
            f"once-{i}",
            phone=f"551190000100{i}",
            capture=django_capture_on_commit_callbacks,
        )
    assert _turn_of("once-1").trace["budget"]["stop"] == "monthly_spend"
    assert BudgetSwitch.objects.filter(level="stopped").count() == 1
    assert len(mail.outbox) == 1


def test_a_budget_above_the_spend_lets_the_model_answer(spent, django_capture_on_commit_callbacks):
    _budget(spent, "10.00")
    with Script([tool("send_message", {"text": MODEL_TEXT}), end()]) as model:
        say(spent.channel_a, "qual o horário?", "b-2", capture=django_capture_on_commit_callbacks)
    assert model.requests
    turn = _turn_of("b-2")
    assert "budget" not in turn.trace
    assert MODEL_TEXT in _outbound(turn)
    assert not BudgetSwitch.objects.exists()


def test_the_handoff_path_hands_the_customer_to_the_team_without_a_model_call(
    spent, django_capture_on_commit_callbacks
):
    _budget(spent, "0.50", on_limit="handoff")
    with Script([tool("send_message", {"text": MODEL_TEXT}), end()]) as model:
        say(
            spent.channel_a,
            "quero saber do meu pedido",
            "b-3",
            capture=django_capture_on_commit_callbacks,
        )
    assert model.requests == []
    turn = _turn_of("b-3")
    assert turn.outcome == "handoff"
    assert turn.trace["budget"]["path"] == "handoff"
    assert _outbound(turn) == [HANDOFF_NOTICE]
    handoff = Handoff.objects.get(conversation=turn.conversation)
    assert handoff.reason_code == "llm_unavailable"
    assert not LlmCall.objects.filter(turn=turn).exists()


def test_eighty_percent_of_the_limit_alerts_and_shows_the_banner(
    spent, django_capture_on_commit_callbacks
):
    _budget(spent, "1.20")  # US$ 1.00 spent = 83 %
    with Script([tool("send_message", {"text": MODEL_TEXT}), end()]) as model:
        say(spent.channel_a, "oi", "b-4", capture=django_capture_on_commit_callbacks)
    assert model.requests  # an alert, not a stop
    assert BudgetSwitch.objects.get().level == "alert"
    assert AuditLog.objects.filter(action="analytics.budget_alert").count() == 1
    assert "80%" in mail.outbox[0].subject
    page = spent.client_for(spent.viewer).get("/")
    assert b'id="budget-banner"' in page.content
    assert "80%" in page.content.decode()


def test_raising_the_limit_reopens_the_model_on_the_next_turn(
    spent, django_capture_on_commit_callbacks
):
    _budget(spent, "0.50")
    say(spent.channel_a, "oi", "b-5", capture=django_capture_on_commit_callbacks)
    assert _turn_of("b-5").trace["budget"]["stop"] == "monthly_spend"
    _budget(spent, "5.00")
    assert BudgetSwitch.objects.filter(level="reopened").count() == 1
    assert AuditLog.objects.filter(action="analytics.budget_reopened").count() == 1
    with Script([tool("send_message", {"text": MODEL_TEXT}), end()]) as model:
        say(spent.channel_a, "e agora?", "b-6", capture=django_capture_on_commit_callbacks)
    assert model.requests
    assert "budget" not in _turn_of("b-6").trace
    page = spent.client_for(spent.viewer).get("/")
    assert b'id="budget-banner"' not in page.content


def test_a_contact_past_its_turn_rate_gets_the_offline_model(
    world, django_capture_on_commit_callbacks
):
    services.budget_set(
        organization=world.org_a,
        actor=world.admin,
        config=BudgetConfig(contact_turns_per_minute=1),
    )
    with Script([tool("send_message", {"text": MODEL_TEXT}), end()] * 2) as model:
        say(world.channel_a, "oi", "r-1", capture=django_capture_on_commit_callbacks)
        say(world.channel_a, "oi de novo", "r-2", capture=django_capture_on_commit_callbacks)
    assert "budget" not in _turn_of("r-1").trace
    assert _turn_of("r-2").trace["budget"] == {"stop": "contact_rate", "path": "offline"}
    turns_called = {r.context.get("turn_id") for r in model.requests}
    assert turns_called == {str(_turn_of("r-1").pk)}  # none for the second turn
    assert _outbound(_turn_of("r-2"))  # still answered


def test_an_organization_without_a_budget_pays_no_query_for_it(world):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from analytics import budgets
    from tests import factories

    conversation = factories.make_conversation(world.channel_a)
    turn = Turn.objects.create(
        organization=world.org_a,
        conversation=conversation,
        trigger_kind="inbound_message",
        trigger_key="no-budget",
    )
    with CaptureQueriesContext(connection) as queries:
        verdict = budgets.evaluate(conversation=conversation, turn=turn)
    assert verdict.stop is None and verdict.crossed is None
    assert len(queries) == 0


def test_raising_the_limit_past_the_alert_clears_the_banner(
    spent, django_capture_on_commit_callbacks
):
    _budget(spent, "1.20")
    say(spent.channel_a, "oi", "b-7", capture=django_capture_on_commit_callbacks)
    assert b'id="budget-banner"' in spent.client_for(spent.viewer).get("/").content
    _budget(spent, "100.00")
    assert b'id="budget-banner"' not in spent.client_for(spent.viewer).get("/").content
