"""Queues, time limits, leases and the broker's visibility timeout fit together (issue 10
item 5): a live task is never handed to a second worker, a live turn is never presumed
dead, and one kind of work never waits behind another."""

from __future__ import annotations

from django.conf import settings
from django.test import override_settings

from config.celery import app
from conversation import dispatch

TURNS = ("conversation.run_inbound_turn", "cases.run_case_reply_turn", "cases.run_follow_up_turn")
DELIVERIES = ("conversation.deliver_outbox", "cases.deliver_case_notice")
SWEEP = "conversation.sweep_due_work"
BULK = (
    "routers.run_quality_run",
    "cases.fire_due_follow_ups",
    "cases.watch_stale_cases",
)


def queue_of(name: str) -> str:
    return app.amqp.router.route({}, name)["queue"].name


def test_turns_deliveries_and_bulk_work_have_their_own_queues():
    assert {queue_of(n) for n in TURNS} == {settings.CELERY_TURNS_QUEUE}
    assert {queue_of(n) for n in DELIVERIES} == {settings.CELERY_OUTBOX_QUEUE}
    assert {queue_of(n) for n in BULK} == {settings.CELERY_BULK_QUEUE}
    assert (
        len({settings.CELERY_TURNS_QUEUE, settings.CELERY_OUTBOX_QUEUE, settings.CELERY_BULK_QUEUE})
        == 3
    )
    # Every registered task is routed: nothing lands in a queue no worker kind is for.
    project = {n for n in app.tasks if not n.startswith(("celery.", "tests."))}
    assert project <= set(settings.TASK_QUEUE_KINDS)
    assert set(TURNS + DELIVERIES + BULK + (SWEEP,)) <= project


def test_the_sweeper_never_waits_behind_bulk_work():
    # It recovers what a broker blip or a killed worker lost: a quality run (ten minutes in
    # the prefork bulk pool) must not hold it up. The outbox threads are always running.
    assert queue_of(SWEEP) == settings.CELERY_OUTBOX_QUEUE != settings.CELERY_BULK_QUEUE


def test_queue_names_are_read_when_a_task_is_published():
    with override_settings(CELERY_TURNS_QUEUE="q-private", CELERY_OUTBOX_QUEUE="q-private"):
        assert {queue_of(n) for n in TURNS + DELIVERIES} == {"q-private"}
    assert queue_of("tests.not_a_routed_task") == settings.CELERY_TASK_DEFAULT_QUEUE


def test_time_limits_fit_inside_the_leases_and_the_visibility_timeout():
    limits = {n: app.tasks[n].time_limit for n in TURNS + DELIVERIES + BULK}
    soft = {n: app.tasks[n].soft_time_limit for n in TURNS + DELIVERIES + BULK}
    assert all(limits.values()) and all(soft[n] < limits[n] for n in limits)
    assert all(limits[n] < settings.TURN_LEASE_S for n in TURNS)
    assert all(limits[n] < settings.OUTBOX_DELIVERY_LEASE_S for n in DELIVERIES)
    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    assert visibility > max(limits.values())
    assert visibility > settings.OUTBOX_BACKOFF_MAX_S  # the longest countdown
    # A hanging model holds a turn less than its soft limit.
    model = (settings.ANTHROPIC_MAX_RETRIES + 1) * settings.ANTHROPIC_TIMEOUT_S
    assert model < min(soft[n] for n in TURNS)
    # Thread pools enforce no time limit: the lease is what bounds a turn, renewed after each
    # model call once a third of it is spent (``pipeline._LeaseKeeper``). One call (with the
    # SDK's backoff between its retries, a few seconds) must fit in the other two thirds.
    assert model + 10 < settings.TURN_LEASE_S * 2 / 3


def test_the_beat_sweeps_and_so_does_the_in_process_runner():
    entry = settings.CELERY_BEAT_SCHEDULE["sweep-due-work"]
    assert entry == {"task": "conversation.sweep_due_work", "schedule": settings.SWEEP_INTERVAL_S}
    assert dispatch.task_named(dispatch.SWEEP_TASK).name == "conversation.sweep_due_work"
