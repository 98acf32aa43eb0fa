"""One ordered delivery chain per conversation: only the head is attempted, nothing is sent
twice, and the provider is called with no transaction open."""

from __future__ import annotations

import httpx
import pytest
import respx
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts import rls
from conversation import dispatch, outbox
from conversation.models import Message
from tests import factories
from tests.conversation._outbox_support import (
    WAHA_URL,
    drop_delayed,
    fake_waha,
    virtual_clock,
    waha_channel,
    waha_conversation,
)


@pytest.fixture(autouse=True)
def _no_wakeups_left_behind():
    yield
    drop_delayed()


def statuses(conversation) -> list[tuple[str, str, int]]:
    rows = Message.objects.filter(conversation=conversation).order_by("queued_at")
    return [(m.body, m.status, m.attempts) for m in rows]


def test_a_failing_first_reply_holds_the_later_ones_without_spending_their_attempts(
    world, monkeypatch, django_capture_on_commit_callbacks
):
    conversation = waha_conversation(waha_channel(world.org_a))
    with (
        fake_waha() as provider,
        virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock,
    ):
        provider.down = True
        clock.enqueue(conversation, "um", "dois", "três")
        clock.run(20)
        (first, *later) = statuses(conversation)
        assert first[1] == "queued" and first[2] >= 2  # the head keeps trying
        assert later == [("dois", "queued", 0), ("três", "queued", 0)]  # no attempts spent
        provider.down = False
        clock.run(120)
    assert provider.texts() == ["um", "dois", "três"]
    assert [s for _, s, _ in statuses(conversation)] == ["sent", "sent", "sent"]


def test_an_outage_of_45_seconds_delivers_every_reply_once_and_in_order(
    world, monkeypatch, django_capture_on_commit_callbacks
):
    channel = waha_channel(world.org_a)
    conversations = [waha_conversation(channel, phone=f"551197777000{i}") for i in range(3)]
    with (
        fake_waha() as provider,
        virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock,
    ):
        provider.down = provider.refuse_connection = True
        for i, conversation in enumerate(conversations):
            clock.enqueue(conversation, f"c{i} r1", f"c{i} r2", f"c{i} r3")
        clock.run(45)
        calls_during_outage = provider.calls
        provider.down = False
        clock.run(300)
    for i in range(len(conversations)):
        chat = f"551197777000{i}@c.us"
        assert [text for c, text in provider.sent if c == chat] == [
            f"c{i} r1",
            f"c{i} r2",
            f"c{i} r3",
        ]
    assert len(provider.sent) == 9  # once each
    assert set(Message.objects.values_list("status", flat=True)) == {"sent"}
    # The breaker spared the provider: the threshold, then a probe per cool-down.
    assert calls_during_outage <= 5 + 3


def test_a_redelivered_task_for_a_sent_reply_sends_nothing(
    world, monkeypatch, django_capture_on_commit_callbacks
):
    conversation = waha_conversation(waha_channel(world.org_a))
    with (
        fake_waha() as provider,
        virtual_clock(django_capture_on_commit_callbacks, monkeypatch) as clock,
    ):
        clock.enqueue(conversation, "oi")
        task = dispatch.task_named("conversation.deliver_outbox")
        again = task.apply(args=[str(conversation.pk)]).get()
    assert provider.texts() == ["oi"]
    assert again == {"idle": 1}


def test_a_second_run_during_the_provider_call_sends_nothing_twice(
    world, django_capture_on_commit_callbacks
):
    conversation = waha_conversation(waha_channel(world.org_a))
    sent: list[str] = []
    overlapping: list[dict[str, int]] = []

    def provider(request: httpx.Request) -> httpx.Response:
        text = request.content.decode()
        sent.append(text)
        if len(overlapping) < 2:  # a duplicate task runs while this send is in flight
            overlapping.append(outbox.deliver_conversation_outbox(str(conversation.pk)))
        return httpx.Response(201, json={"id": f"true_x_{len(sent)}"})

    with respx.mock() as mock:
        mock.post(f"{WAHA_URL}/api/sendText").mock(side_effect=provider)
        with django_capture_on_commit_callbacks(execute=False):
            for body in ("primeira", "segunda"):
                outbox.outbound_enqueue(conversation=conversation, body=body, sender_kind="ai")
        counts = outbox.deliver_conversation_outbox(str(conversation.pk))
    assert len(sent) == 2 and "primeira" in sent[0] and "segunda" in sent[1]
    assert overlapping == [{"busy": 1}, {"busy": 1}]
    assert counts == {"sent": 2, "idle": 1}


@pytest.mark.django_db(transaction=True)
def test_the_provider_is_called_with_no_transaction_open():
    org = factories.make_org("T")
    conversation = waha_conversation(waha_channel(org))
    seen: list[bool] = []

    def provider(request: httpx.Request) -> httpx.Response:
        seen.append(connection.in_atomic_block)
        return httpx.Response(201, json={"id": "true_x_1"})

    with respx.mock() as mock:
        mock.post(f"{WAHA_URL}/api/sendText").mock(side_effect=provider)
        # No test transaction here: the delivery runs on commit, like after a real request.
        outbox.outbound_enqueue(conversation=conversation, body="oi", sender_kind="ai")
    assert seen == [False]
    assert Message.objects.get().status == "sent"


def test_a_lapsed_delivery_lease_is_taken_again_by_the_sweeper(
    world, settings, django_capture_on_commit_callbacks
):
    conversation = waha_conversation(waha_channel(world.org_a))
    message = factories.make_message(
        conversation,
        "perdida",
        direction="outbound",
        sender_kind="ai",
        status="sending",  # a worker claimed it and died
        attempts=1,
        queued_at=timezone.now(),
        next_attempt_at=timezone.now() + timezone.timedelta(seconds=30),
    )
    with fake_waha() as provider:
        with django_capture_on_commit_callbacks(execute=True):
            assert outbox.sweep_due() == 0  # the lease still runs: somebody is delivering
        lapsed = timezone.now() - timezone.timedelta(seconds=1)
        Message.objects.filter(pk=message.pk).update(next_attempt_at=lapsed)
        with django_capture_on_commit_callbacks(execute=True):
            assert outbox.sweep_due() == 1
    message.refresh_from_db()
    assert (message.status, message.attempts) == ("sent", 2)
    assert provider.texts() == ["perdida"]


def test_provider_calls_use_the_short_outbox_timeout(
    world, settings, django_capture_on_commit_callbacks
):
    settings.OUTBOX_PROVIDER_TIMEOUT_S = 3.0
    conversation = waha_conversation(waha_channel(world.org_a))
    with respx.mock() as mock:
        route = mock.post(f"{WAHA_URL}/api/sendText").mock(
            return_value=httpx.Response(201, json={"id": "true_x_1"})
        )
        with django_capture_on_commit_callbacks(execute=True):
            outbox.outbound_enqueue(conversation=conversation, body="oi", sender_kind="ai")
    assert route.calls.last.request.extensions["timeout"] == {
        "connect": 3.0,
        "read": 3.0,
        "write": 3.0,
        "pool": 3.0,
    }


def test_delivering_a_reply_takes_five_queries(world, django_capture_on_commit_callbacks):
    conversation = waha_conversation(waha_channel(world.org_a))
    with django_capture_on_commit_callbacks(execute=False):
        outbox.outbound_enqueue(conversation=conversation, body="oi", sender_kind="ai")
    with fake_waha() as provider, CaptureQueriesContext(connection) as queries:
        counts = outbox.deliver_conversation_outbox(str(conversation.pk))
    data = [q["sql"] for q in queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]
    # 1 the conversation's organization; 2 the head with its conversation, contact and
    # channel; 3 the claim; 4 the record; 5 the head again: the chain is empty.
    assert len(data) == 5, "\n".join(data)
    assert counts == {"sent": 1, "idle": 1}
    assert provider.texts() == ["oi"]


def test_a_send_whose_echo_was_stored_first_keeps_its_id_and_the_echo_row_goes(
    world, django_capture_on_commit_callbacks
):
    conversation = waha_conversation(waha_channel(world.org_a))

    def provider(request: httpx.Request) -> httpx.Response:
        # WAHA's ``fromMe`` webhook for this very send arrives before the send is recorded;
        # the webhook's own request binds the tenant, as the inbound path does.
        with rls.tenant_context(conversation.organization_id):
            factories.make_message(
                conversation,
                "oi",
                direction="outbound",
                sender_kind="human",
                status="sent",
                provider_message_id="true_echo_1",
            )
        return httpx.Response(201, json={"id": "true_echo_1"})

    with respx.mock() as mock:
        mock.post(f"{WAHA_URL}/api/sendText").mock(side_effect=provider)
        with django_capture_on_commit_callbacks(execute=True):
            reply = outbox.outbound_enqueue(conversation=conversation, body="oi", sender_kind="ai")
    reply.refresh_from_db()
    assert (reply.status, reply.provider_message_id) == ("sent", "true_echo_1")
    # The history holds the reply once, as the AI's (the model reads it; the briefing too).
    outbound = Message.objects.filter(conversation=conversation, direction="outbound")
    assert list(outbound.values_list("sender_kind", flat=True)) == ["ai"]


def test_a_reply_with_nul_or_a_lone_surrogate_is_stored_clean(world):
    # PostgreSQL cannot store NUL in text; a model's odd output must not break the turn.
    conversation = waha_conversation(waha_channel(world.org_a))
    reply = outbox.outbound_enqueue(
        conversation=conversation, body="ol\x00á \ud800fim", sender_kind="ai"
    )
    reply.refresh_from_db()
    assert reply.body == "olá \ufffdfim"
