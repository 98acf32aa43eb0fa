"""Provider statuses only move forward, and the retry timing stays inside its bounds."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conversation.models import Conversation, Message
from conversation.outbox import STATUS_RANK, OutboxPolicy, moves_forward, outbound_status_update
from tests import factories
from tests.conversation._outbox_support import waha_channel, waha_conversation

CALLBACKS = ["sent", "delivered", "read", "failed"]
_ids = itertools.count(1)


def policy(**overrides) -> OutboxPolicy:
    values = {
        "horizon": timedelta(hours=6),
        "backoff_base_s": 2.0,
        "backoff_max_s": 600.0,
        "breaker_threshold": 5,
        "breaker_cooldown": timedelta(seconds=30),
        "lease": timedelta(seconds=60),
        "provider_timeout_s": 10.0,
        "sweep_grace": timedelta(seconds=30),
        "resend_max_age": timedelta(hours=24),
    }
    return OutboxPolicy(**{**values, **overrides})


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(events=st.lists(st.sampled_from(CALLBACKS), max_size=8))
def test_status_callbacks_never_move_a_message_backwards(world, events):
    # Examples share the test's database: one conversation, a fresh message per example.
    conversation = Conversation.objects.filter(organization=world.org_a).first()
    conversation = conversation or waha_conversation(waha_channel(world.org_a))
    provider_id = f"wamid-{next(_ids)}"
    message = factories.make_message(
        conversation,
        "oi",
        direction="outbound",
        sender_kind="ai",
        status="sent",
        provider_message_id=provider_id,
    )
    seen = ["sent"]
    for event in events:
        changed = outbound_status_update(
            channel=conversation.channel, provider_message_id=provider_id, status=event, error="x"
        )
        message.refresh_from_db()
        assert changed == moves_forward(seen[-1], event)
        assert STATUS_RANK[message.status] >= STATUS_RANK[seen[-1]]
        seen.append(message.status)
    # Where it ends: the furthest status any event reached.
    assert message.status == max(["sent", *events], key=STATUS_RANK.__getitem__)
    if {"delivered", "read"} & set(events):
        assert message.status != "failed"  # a late failure never undoes a confirmed delivery
    if message.status == "failed":
        assert message.failure_reason == "provider_status"
    else:
        assert (message.failure_reason, message.error_code) == ("", "")


def test_a_status_callback_without_an_id_changes_nothing(world):
    conversation = waha_conversation(waha_channel(world.org_a))
    factories.make_message(
        conversation, "oi", direction="outbound", sender_kind="ai", status="sent"
    )
    assert not outbound_status_update(
        channel=conversation.channel, provider_message_id="", status="read"
    )
    assert Message.objects.get().status == "sent"


@given(attempts=st.integers(min_value=1, max_value=60), r=st.floats(min_value=0, max_value=1))
def test_backoff_grows_exponentially_with_jitter_up_to_the_cap(attempts, r):
    rules = policy()
    step = min(600.0, 2.0 * 2 ** (attempts - 1))
    delay = rules.backoff_s(attempts, rand=lambda: r)
    assert step / 2 <= delay <= step
    assert rules.backoff_s(attempts + 1, rand=lambda: 0.0) >= rules.backoff_s(attempts, lambda: 0.0)


@given(
    attempts=st.integers(min_value=1, max_value=40),
    left_us=st.integers(min_value=-3_600_000_000, max_value=3_600_000_000),
)
def test_the_next_attempt_never_falls_after_the_horizon(attempts, left_us):
    now = datetime(2026, 3, 2, 12, tzinfo=UTC)
    retry_until = now + timedelta(microseconds=left_us)
    at = policy().next_attempt(now, attempts, retry_until)
    if left_us <= 0:
        assert at is None  # past the horizon: give up
    else:
        assert at is not None and now < at <= retry_until
