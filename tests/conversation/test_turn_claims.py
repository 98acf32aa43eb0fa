"""Turns under faults, on the embedded default (SQLite, in-process tasks): the claim and
its lease, the fence on finish, the burst bounds under a backlog, and the sweeper that
re-drives what a lost task or a dead worker left behind (issue 10 items 1, 2, 4, 7)."""

from __future__ import annotations

import dataclasses
import logging
import threading
from datetime import timedelta

import pytest
import time_machine
from django.db import connection, connections, transaction
from django.test import Client
from django.utils import timezone

from accounts import rls
from conversation import dispatch, tasks
from conversation.models import Conversation, Handoff, Message, Turn
from conversation.sweeper import sweep_due_work
from conversation.turns import HANDOFF_NOTICE, claim, pipeline, run_inbound_turn
from conversation.turns.context import new_context
from tests import factories
from tests.conftest import simulator_post

PHONE = "5511988887777"


def post(channel, text, msg_id, capture, *, run=True):
    """A webhook; ``run=False``: its task publish is lost (the broker was down)."""
    with capture(execute=run) as callbacks:
        response = simulator_post(Client(), channel, text, msg_id=msg_id, phone=PHONE)
    assert response.status_code == 200
    return callbacks


def line(msg_id):
    return Message.objects.get(provider_message_id=msg_id)


def replies():
    return list(
        Message.objects.filter(direction="outbound")
        .order_by("created_at")
        .values_list("turn_id", flat=True)
    )


def claim_and_die(message):
    """A worker claims the turn of ``message`` and is killed before it finishes."""
    with transaction.atomic():
        claimed = pipeline._claim_inbound(str(message.pk), timezone.now())
    assert isinstance(claimed, tuple)
    return claimed


def past_the_lease(settings):
    return time_machine.travel(timezone.now() + timedelta(seconds=settings.TURN_LEASE_S + 1))


# --- the sweeper ---------------------------------------------------------------------------


def test_the_sweeper_answers_a_stored_line_whose_task_was_never_published(
    world, settings, django_capture_on_commit_callbacks
):
    post(world.channel_a, "oi", "sw-1", django_capture_on_commit_callbacks, run=False)
    message = line("sw-1")
    assert message.turn_id is None and replies() == []

    with django_capture_on_commit_callbacks(execute=True):
        early = sweep_due_work(timezone.now())
    assert early.stranded_lines == 0  # within the window + grace its own task may still come

    late = timezone.now() + timedelta(
        seconds=settings.TURN_BURST_WINDOW_S + settings.TURN_SWEEP_GRACE_S + 1
    )
    with django_capture_on_commit_callbacks(execute=True):
        swept = sweep_due_work(late)
    assert swept.stranded_lines == 1
    message.refresh_from_db()
    assert message.turn is not None and message.turn.outcome == "replied"
    assert replies() == [message.turn_id]

    with django_capture_on_commit_callbacks(execute=True):
        again = sweep_due_work(late)
    assert again.stranded_lines == 0 and len(replies()) == 1  # answered once


def test_the_sweeper_gives_lines_older_than_the_service_window_to_the_team_not_the_ai(
    world, settings, django_capture_on_commit_callbacks
):
    # More in tests/conversation/test_no_line_unseen.py.
    post(world.channel_a, "oi", "sw-2", django_capture_on_commit_callbacks, run=False)
    much_later = timezone.now() + timedelta(seconds=settings.TURN_SWEEP_MAX_AGE_S + 60)
    with (
        time_machine.travel(much_later, tick=False),
        django_capture_on_commit_callbacks(execute=True),
    ):
        assert sweep_due_work().past_window == 1
    assert line("sw-2").turn.outcome == "handoff"
    assert replies() == [] and Handoff.objects.count() == 1


def test_a_turn_whose_worker_died_is_re_driven_once_after_its_lease(
    world, settings, django_capture_on_commit_callbacks
):
    post(world.channel_a, "oi", "lz-1", django_capture_on_commit_callbacks, run=False)
    message = line("lz-1")
    dead, _batch = claim_and_die(message)

    # While the lease lives, nothing takes the turn from its (presumed live) worker.
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_due_work(timezone.now()).expired_turns == 0
        assert run_inbound_turn(str(message.pk)) is None  # a redelivered task
    assert replies() == []

    with past_the_lease(settings):
        with django_capture_on_commit_callbacks(execute=True):
            swept = sweep_due_work()
        with django_capture_on_commit_callbacks(execute=True):
            again = sweep_due_work()
    assert (swept.expired_turns, again.expired_turns) == (1, 0)
    turn = Turn.objects.get()
    assert turn.pk == dead.turn.pk
    assert (turn.status, turn.outcome, turn.attempts) == ("done", "replied", 2)
    assert turn.lease_token != dead.token and turn.lease_expires_at is None
    assert replies() == [turn.pk]


def test_an_attempt_whose_claim_was_taken_over_writes_nothing(
    world, settings, django_capture_on_commit_callbacks
):
    post(world.channel_a, "oi", "fx-1", django_capture_on_commit_callbacks, run=False)
    message = line("fx-1")
    slow, batch = claim_and_die(message)  # not dead: only slower than its lease
    with past_the_lease(settings), django_capture_on_commit_callbacks(execute=True):
        taken = run_inbound_turn(str(message.pk))
    assert taken is not None and taken.outcome == "replied"

    ctx = new_context(slow.conversation, slow.turn, batch, trace={"batch": len(batch)})
    with django_capture_on_commit_callbacks(execute=True):
        assert pipeline._decide_and_finish(ctx, slow, pipeline._decide_inbound) is None
    assert replies() == [taken.pk]  # the slow attempt's reply never reached the outbox
    assert Turn.objects.get().attempts == 2


def test_a_second_claim_while_a_turn_runs_is_refused_and_retried_shortly(
    world, settings, django_capture_on_commit_callbacks
):
    post(world.channel_a, "oi", "bz-1", django_capture_on_commit_callbacks, run=False)
    running, batch = claim_and_die(line("bz-1"))
    post(world.channel_a, "e o prazo?", "bz-2", django_capture_on_commit_callbacks)
    assert Turn.objects.count() == 1 and line("bz-2").turn_id is None
    assert dispatch.pending_delayed() == 1  # bz-2 tries again after TURN_BUSY_RETRY_S
    with django_capture_on_commit_callbacks(execute=True):
        assert run_inbound_turn(str(line("bz-1").pk)) is None  # and its own redelivery

    ctx = new_context(running.conversation, running.turn, batch, trace={})
    with django_capture_on_commit_callbacks(execute=True):
        pipeline._decide_and_finish(ctx, running, pipeline._decide_inbound)
        dispatch.run_delayed()
    first, second = Turn.objects.order_by("created_at")
    assert (first.outcome, second.outcome) == ("replied", "replied")
    assert first.finished_at <= second.created_at  # never interleaved
    assert replies() == [first.pk, second.pk]


def test_an_unexpected_error_gives_the_lease_back_for_the_next_delivery(
    world, monkeypatch, django_capture_on_commit_callbacks
):
    real = pipeline._decide_inbound
    calls = []

    def crash_once(ctx):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a bug in this attempt")
        return real(ctx)

    monkeypatch.setattr(pipeline, "_decide_inbound", crash_once)
    post(world.channel_a, "oi", "er-1", django_capture_on_commit_callbacks)  # logged, not raised
    turn = Turn.objects.get()
    assert turn.status == "running" and turn.lease_expires_at <= timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        again = run_inbound_turn(str(line("er-1").pk))  # e.g. the task's own retry
    assert again is not None and (again.outcome, again.attempts) == ("replied", 2)


def test_a_turn_that_dies_on_every_attempt_goes_to_the_team(
    world, settings, django_capture_on_commit_callbacks
):
    settings.TURN_MAX_ATTEMPTS = 2
    post(world.channel_a, "oi", "px-1", django_capture_on_commit_callbacks, run=False)
    message = line("px-1")
    claim_and_die(message)
    with past_the_lease(settings):
        claim_and_die(message)  # the re-drive dies too
        with (
            time_machine.travel(timezone.now() + timedelta(seconds=settings.TURN_LEASE_S + 1)),
            django_capture_on_commit_callbacks(execute=True),
        ):
            turn = run_inbound_turn(str(message.pk))
    assert turn is not None
    assert (turn.status, turn.outcome, turn.error_code) == (
        "failed",
        "handoff",
        "attempts_exhausted",
    )
    assert list(Message.objects.filter(direction="outbound").values_list("body", flat=True)) == [
        HANDOFF_NOTICE
    ]
    assert Handoff.objects.get().reason_code == "low_confidence"


def test_a_duplicate_delivery_that_loses_the_insert_race_ends_quietly_with_an_info_log(
    world, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    post(world.channel_a, "oi", "dp-1", django_capture_on_commit_callbacks)
    message = line("dp-1")
    real = claim.lock_conversation

    def read_before_the_first_delivery_committed(*args, **kwargs):
        locked = real(*args, **kwargs)
        return dataclasses.replace(locked, already_turned=False) if locked else None

    monkeypatch.setattr(claim, "lock_conversation", read_before_the_first_delivery_committed)
    with caplog.at_level(logging.INFO), django_capture_on_commit_callbacks(execute=True):
        result = tasks.run_inbound_turn.apply(args=[str(message.pk)], throw=True).result
    assert result is None
    assert Turn.objects.count() == 1 and len(replies()) == 1
    assert "duplicate turn delivery ignored" in [r.getMessage() for r in caplog.records]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


# --- the burst window, bounded whatever the backlog -----------------------------------------


@pytest.fixture
def window(settings):
    settings.TURN_BURST_WINDOW_S = 2
    settings.TURN_BURST_MAX_S = 10
    return settings


@pytest.mark.parametrize("order", ["in_order", "reversed"])
def test_under_a_backlog_a_line_after_the_cut_off_gets_its_own_turn(
    world, window, order, django_capture_on_commit_callbacks
):
    t0 = timezone.now()
    with time_machine.travel(t0, tick=False):
        first = post(world.channel_a, "oi", "bl-1", django_capture_on_commit_callbacks, run=False)
    with time_machine.travel(t0 + timedelta(seconds=5), tick=False):
        second = post(
            world.channel_a,
            "tem entrega hoje?",
            "bl-2",
            django_capture_on_commit_callbacks,
            run=False,
        )
    pending = [*first, *second] if order == "in_order" else [*second, *first]
    # The workers reach both tasks 30 s later: both bursts closed long ago.
    with (
        time_machine.travel(t0 + timedelta(seconds=30), tick=False),
        django_capture_on_commit_callbacks(execute=True),
    ):
        for callback in pending:
            callback()
    answering = [t for t in Turn.objects.order_by("created_at") if t.outcome == "replied"]
    assert [
        [m.provider_message_id for m in t.messages.filter(direction="inbound")] for t in answering
    ] == [
        ["bl-1"],
        ["bl-2"],
    ]
    assert replies() == [t.pk for t in answering]  # in the customer's order


def test_typing_without_a_pause_gets_its_first_reply_at_the_maximum(
    world, window, django_capture_on_commit_callbacks
):
    t0 = timezone.now()
    for i in range(7):  # a line every 1.5 s, 0 … 9 s
        with time_machine.travel(t0 + timedelta(seconds=1.5 * i), tick=False):
            post(world.channel_a, f"linha {i}", f"mx-{i}", django_capture_on_commit_callbacks)
    assert replies() == []
    with time_machine.travel(t0 + timedelta(seconds=9.9), tick=False):
        with django_capture_on_commit_callbacks(execute=True):
            dispatch.run_delayed()
        assert replies() == []  # still typing, and within the maximum
    with time_machine.travel(t0 + timedelta(seconds=10.05), tick=False):
        with django_capture_on_commit_callbacks(execute=True):
            dispatch.run_delayed()
        post(world.channel_a, "mais uma", "mx-7", django_capture_on_commit_callbacks)
    (turn,) = Turn.objects.filter(outcome="replied")
    assert turn.messages.filter(direction="inbound").count() == 7
    assert line("mx-7").turn_id is None  # after the cut-off: the next turn's line
    assert len(replies()) == 1


def test_the_first_reply_waits_the_window_after_the_last_line_only(
    world, window, django_capture_on_commit_callbacks
):
    t0 = timezone.now()
    with time_machine.travel(t0, tick=False):
        post(world.channel_a, "oi", "wn-1", django_capture_on_commit_callbacks)
    with time_machine.travel(t0 + timedelta(seconds=1), tick=False):
        post(world.channel_a, "tudo bem?", "wn-2", django_capture_on_commit_callbacks)
    with time_machine.travel(t0 + timedelta(seconds=2.9), tick=False):
        with django_capture_on_commit_callbacks(execute=True):
            dispatch.run_delayed()
        assert replies() == []
    with (
        time_machine.travel(t0 + timedelta(seconds=3.1), tick=False),
        django_capture_on_commit_callbacks(execute=True),
    ):
        dispatch.run_delayed()
    (turn,) = Turn.objects.filter(outcome="replied")
    assert turn.messages.filter(direction="inbound").count() == 2
    assert dispatch.pending_delayed() == 0  # no task left waiting for an ETA


@pytest.mark.django_db(transaction=True)
def test_a_claim_that_finds_its_conversation_locked_comes_back_instead_of_reading_stale(
    world, settings, django_capture_on_commit_callbacks
):
    # Under READ COMMITTED a claim that *waited* for the row lock would read "no turn is
    # active" from the snapshot taken before the wait (the turn claimed by the transaction
    # it waited for is invisible) and decide alongside it. NOWAIT refuses; the trigger
    # comes back shortly and is then claimed on a fresh read.
    if connection.vendor != "postgresql":
        pytest.skip("row locks: PostgreSQL (CI runs it; SQLite serialises writers)")
    settings.TURN_BURST_WINDOW_S = 0
    message = factories.make_message(factories.make_conversation(world.channel_a), "oi")
    locked, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        with rls.tenant_context(world.org_a.pk):
            Conversation.objects.select_for_update().get(pk=message.conversation_id)
            locked.set()
            release.wait(10)
        connections.close_all()

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    try:
        assert locked.wait(10)
        assert run_inbound_turn(str(message.pk)) is None
        assert Turn.objects.count() == 0
        assert dispatch.pending_delayed() == 1  # re-driven after LOCKED_RETRY_S
    finally:
        release.set()
        holder.join(10)
    with django_capture_on_commit_callbacks(execute=True):
        dispatch.run_delayed()
    assert Turn.objects.get().outcome == "replied"
