"""No customer line vanishes unseen: a line no turn took for longer than
``TURN_SWEEP_MAX_AGE_S`` (its task lost, nothing re-drove it for a day) is not answered by the
AI a day late, but the conversation goes to the team — once, visibly, logged with ids only.
Through the public path: a signed webhook whose task publish is lost, the sweeper, a real
turn; the handoff inbox page is where staff see it."""

from __future__ import annotations

import logging
from datetime import timedelta

import time_machine
from django.test import Client
from django.utils import timezone

from conversation.models import Conversation, Handoff, Message, Turn
from conversation.sweeper import sweep_due_work
from tests.conftest import simulator_post

PHONE = "5511944443333"


def post(channel, text, msg_id, capture, *, run=True):
    """A webhook; ``run=False``: its task publish is lost (the broker was down)."""
    with capture(execute=run):
        response = simulator_post(Client(), channel, text, msg_id=msg_id, phone=PHONE)
    assert response.status_code == 200


def sweep(capture):
    with capture(execute=True):
        return sweep_due_work()


def outbound_bodies():
    rows = Message.objects.filter(direction="outbound").order_by("created_at")
    return list(rows.values_list("body", flat=True))


def a_day_later(settings, seconds=60):
    return time_machine.travel(
        timezone.now() + timedelta(seconds=settings.TURN_SWEEP_MAX_AGE_S + seconds), tick=False
    )


def test_a_line_no_turn_took_for_a_day_goes_to_the_team_once_with_ids_only_in_the_log(
    world, settings, caplog, django_capture_on_commit_callbacks
):
    post(
        world.channel_a,
        "meu pedido não chegou",
        "day-1",
        django_capture_on_commit_callbacks,
        run=False,
    )
    line = Message.objects.get(provider_message_id="day-1")

    with a_day_later(settings), caplog.at_level(logging.INFO):
        first = sweep(django_capture_on_commit_callbacks)
        again = sweep(django_capture_on_commit_callbacks)

    assert (first.stranded_lines, first.past_window) == (1, 1)
    assert (again.stranded_lines, again.past_window) == (0, 0)  # taken: never swept again
    line.refresh_from_db()
    turn = line.turn
    assert turn is not None
    assert (turn.status, turn.outcome) == ("done", "handoff")
    assert turn.trace["guard"] == "past_service_window"
    # A day late the AI does not answer (the 24-hour window is closed), nor send a notice.
    assert outbound_bodies() == []
    handoff = Handoff.objects.get()
    assert (handoff.status, handoff.reason_code, handoff.reason) == (
        "open",
        "low_confidence",
        "Mensagem do cliente ficou sem resposta por mais de 24 horas.",
    )
    assert Conversation.objects.get().status == "pending"
    # Where staff work: the handoff inbox lists the customer.
    page = world.client_for(world.agent).get("/transbordos/")
    assert page.status_code == 200 and PHONE in page.content.decode()

    given_up = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.getMessage() for r in given_up] == [
        "customer line past the service window: handed to the team"
    ]
    record = given_up[0]
    assert (record.conversation_id, record.turn_id) == (str(line.conversation_id), str(turn.pk))
    assert "pedido" not in str(vars(record))  # ids, never the customer's text


def test_a_customer_who_wrote_again_gets_the_late_answer_not_a_handoff(
    world, settings, django_capture_on_commit_callbacks
):
    # The line was stranded a day ago, but the customer writes again now: the window is
    # open, so the AI answers (the oldest burst first, as always), nobody is called.
    post(world.channel_a, "oi", "day-2", django_capture_on_commit_callbacks, run=False)
    with a_day_later(settings):
        post(world.channel_a, "alguém aí?", "day-3", django_capture_on_commit_callbacks)
        sweep(django_capture_on_commit_callbacks)

    assert not Handoff.objects.exists()
    outcomes = set(Turn.objects.values_list("outcome", flat=True))
    assert outcomes == {"replied"}
    assert Message.objects.filter(direction="inbound", turn__isnull=True).count() == 0


def test_a_line_left_in_a_conversation_staff_resolved_is_taken_without_reopening_it(
    world, settings, django_capture_on_commit_callbacks
):
    post(world.channel_a, "oi", "day-4", django_capture_on_commit_callbacks, run=False)
    Conversation.objects.update(status="closed", resolved_at=timezone.now())
    with a_day_later(settings):
        sweep(django_capture_on_commit_callbacks)
        assert sweep(django_capture_on_commit_callbacks).stranded_lines == 0

    assert not Handoff.objects.exists()
    assert Conversation.objects.get().status == "closed"
    assert Turn.objects.get().outcome == "no_reply"


def test_a_line_past_the_window_while_a_person_owns_the_conversation_bumps_its_handoff(
    world, settings, django_capture_on_commit_callbacks
):
    post(world.channel_a, "oi", "day-5", django_capture_on_commit_callbacks, run=False)
    contact = Conversation.objects.get().contact
    contact.force_human = True
    contact.save(update_fields=["force_human"])
    with a_day_later(settings):
        sweep(django_capture_on_commit_callbacks)

    handoff = Handoff.objects.get()  # the inbox item is there: inserted, not dropped
    assert handoff.status == "open"
    assert outbound_bodies() == []
