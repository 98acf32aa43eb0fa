"""Fault drills on the real stack (issue 10 item 8): signed WAHA webhooks into the Django
app, real Celery workers and beat (``scripts/worker.sh``) on a private Redis, PostgreSQL as
the application role, a fake WAHA provider and a fake Anthropic API on loopback.

Each drill injects one fault and checks the promise: every customer line answered, none
twice, replies in order (``harness.tally``), plus what the fault itself must leave behind.
Recovery settings are short (``stack.FAST_RECOVERY``: a 1 s sweep, a 5 s lease, backoff
from 0.3 s), so the five drills take about two minutes together; every wait has a
deadline, so a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from conversation.models import ChannelSession, Handoff, Message, Turn
from conversation.turns.unavailable import UNAVAILABLE_HANDOFF_NOTICE, UNAVAILABLE_RETRY_NOTICE
from tests import factories
from tests.faults.harness import (
    BrokerProcess,
    FakeProvider,
    Posted,
    post_line,
    tally,
    wait_until_answered,
)
from tests.faults.stack import REPLY_TEXT, FakeModel, Processes, database_url, routed_to

pytestmark = [
    pytest.mark.worker,
    pytest.mark.postgres,
    # Like tests/conversation/test_worker.py: worker processes share only a server database.
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


class Drill:
    """One drill's stack: broker, provider, model, processes — and its channels."""

    def __init__(
        self, broker: BrokerProcess, provider: FakeProvider, model: FakeModel, procs: Processes
    ) -> None:
        self.broker, self.provider, self.model, self.procs = broker, provider, model, procs
        self.client = Client(raise_request_exception=False)  # an error is a 500, as live

    def channel(self, name: str, **agent: Any) -> ChannelSession:
        """A WAHA channel of a new organization, its sends to ``provider`` (tag = its id)."""
        org = factories.make_org(name)
        channel = factories.make_channel(
            org,
            "waha",
            agent=factories.make_agent(org, name, **agent),
            external_id=f"faults-{org.pk.hex[:8]}",
            webhook_secret=f"segredo-{org.pk.hex[:8]}",
            api_base_url="http://placeholder.invalid",
        )
        ChannelSession.objects.filter(pk=channel.pk).update(
            api_base_url=self.provider.url_for(str(channel.pk))
        )
        channel.refresh_from_db()
        return channel

    def post(self, channel: ChannelSession, phone: str, text: str = "oi", burst: int = 0) -> Posted:
        return post_line(self.client, channel, phone, text, burst)


@pytest.fixture
def drill(request: pytest.FixtureRequest) -> Iterator[Drill]:
    env = getattr(request, "param", None) or {}
    with (
        BrokerProcess() as broker,
        FakeProvider(hang_s=10.0) as provider,
        FakeModel(latency_s=0.05, follow_up_s=0.05) as model,
    ):
        env = {"ANTHROPIC_BASE_URL": model.base_url, **env}
        with (
            Processes(database_url=database_url(), broker_url=broker.url, env=env) as procs,
            routed_to(procs),
        ):
            yield Drill(broker, provider, model, procs)


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def assert_every_line_answered_once(drill: Drill, name: str, posted: list[Posted]) -> None:
    result = tally(name, posted, drill.provider)
    assert (result.lost, result.duplicated, result.out_of_order) == (0, 0, 0), (
        f"{result}\n{drill.procs.log_tail()}"
    )
    assert result.answered_once == result.messages == len(posted)
    assert result.webhook_5xx == 0


def test_a_line_stored_while_the_broker_is_down_is_answered_once_it_is_back(drill):
    channel = drill.channel("Corretora")
    worker = drill.procs.start_worker()
    drill.procs.start_beat()
    drill.procs.wait_ready(worker)
    drill.procs.supervise()  # kombu 5.7 may end a worker holding unacked messages (stack.py)

    drill.broker.stop()  # the publish fails: the row is stored, the webhook still says 200
    posted = [drill.post(channel, f"551190000{i:04d}") for i in range(3)]
    assert [p.status_code for p in posted] == [200, 200, 200]
    assert Message.objects.filter(direction="inbound", turn__isnull=True).count() == 3
    drill.broker.start()  # back, and empty: the queue is lost too

    wait_until_answered(posted, drill.provider, deadline_s=45)
    assert_every_line_answered_once(drill, "broker_down", posted)
    assert Turn.objects.filter(outcome="replied", attempts=1).count() == 3


def test_a_stalled_broker_holds_no_webhook_and_its_lines_are_answered_once_it_wakes(drill):
    channel = drill.channel("Despachante")
    worker = drill.procs.start_worker()
    drill.procs.start_beat()
    drill.procs.wait_ready(worker)
    drill.procs.supervise()

    # Stalled, not down: connections are accepted and nothing is answered. Each publish gives
    # up after the Redis socket timeout (config.settings.work), so the webhook still says 200.
    drill.broker.pause()
    posted: list[Posted] = []

    def post_two() -> None:
        try:
            posted.extend(drill.post(channel, f"551192000{i:04d}") for i in range(2))
        finally:
            connection.close()  # this thread's own database connection

    poster = threading.Thread(target=post_two)
    poster.start()
    poster.join(timeout=60)  # a bound against a hang, not a speed target
    stalled = poster.is_alive()
    drill.broker.resume()
    poster.join()
    assert not stalled, "a webhook waited on the stalled broker for a minute"
    assert [p.status_code for p in posted] == [200, 200]

    wait_until_answered(posted, drill.provider, deadline_s=60)
    assert_every_line_answered_once(drill, "broker_stalled", posted)


@pytest.mark.parametrize(
    "drill", [{"TURN_LEASE_S": "4", "ANTHROPIC_TIMEOUT_S": "3"}], indirect=True
)
def test_a_turn_whose_worker_is_killed_mid_turn_is_finished_by_another_once(drill):
    drill.model.latency_s = 2.0  # the first model call of each turn is in flight at the kill
    channel = drill.channel("Imobiliaria", provider="anthropic", cases_enabled=False)
    first = drill.procs.start_worker()
    drill.procs.start_beat()
    drill.procs.wait_ready(first)

    posted = [drill.post(channel, f"551191000{i:04d}") for i in range(3)]
    assert wait_for(
        lambda: Turn.objects.filter(status="running").count() == 3 and drill.model.calls[""] >= 3,
        timeout=20,
    ), drill.procs.log_tail()
    second = drill.procs.start_worker()
    drill.procs.kill(first)  # kill -9: its three turns hold leases nobody will finish
    drill.procs.wait_ready(second)

    wait_until_answered(posted, drill.provider, deadline_s=45)
    assert_every_line_answered_once(drill, "worker_killed", posted)
    turns = list(Turn.objects.values_list("status", "outcome", "attempts"))
    assert turns == [("done", "replied", 2)] * 3  # each taken over once, after its lease
    assert [s.text for s in drill.provider.sends] == [REPLY_TEXT] * 3
    assert not Message.objects.filter(direction="outbound").exclude(status="sent").exists()


OUTAGE_S = 8.0


def test_replies_pending_through_a_provider_outage_go_out_once_and_in_order(drill):
    """The outage outlasts the old retry budget (5 attempts: 0.3+0.6+1.2+1.5+1.5 s here)."""
    channel = drill.channel("Padaria")
    worker = drill.procs.start_worker()
    drill.procs.start_beat()
    drill.procs.wait_ready(worker)

    tag = str(channel.pk)
    drill.provider.set_mode(tag, "down")
    started = time.monotonic()
    posted = []
    for burst in range(3):  # three turns per conversation, three replies queued in the outage
        for conv in range(2):
            posted.append(drill.post(channel, f"551192000{conv:04d}", f"linha {burst}", burst))
        assert wait_for(
            lambda n=burst + 1: Message.objects.filter(direction="outbound").count() == 2 * n,
            timeout=15,
        ), drill.procs.log_tail()
    time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - started)))
    assert drill.provider.sends == []
    refused = drill.provider.refused
    drill.provider.set_mode(tag, "ok")

    wait_until_answered(posted, drill.provider, deadline_s=45)
    assert_every_line_answered_once(drill, "provider_down", posted)
    assert refused >= 2  # the outage was met, and backed off (breaker: probes, not a storm)
    assert len(drill.provider.sends) == 6
    rows = Message.objects.filter(direction="outbound")
    assert set(rows.values_list("status", flat=True)) == {"sent"}


def test_a_broken_or_silent_model_gets_the_customer_a_clear_fallback(drill):
    """Broken JSON → the canned notice and a handoff (``llm_unavailable``); a model that
    times out, for an agent that retries → a notice that promises nothing, then the answer
    once the model is back (the sweeper re-drives the turn)."""
    handing = drill.channel("Quebrado", provider="anthropic", cases_enabled=False)
    retrying = drill.channel(
        "Mudo", provider="anthropic", cases_enabled=False, llm_unavailable_action="retry"
    )
    drill.model.set_mode("Quebrado", "broken")
    drill.model.set_mode("Mudo", "hang")
    worker = drill.procs.start_worker()
    drill.procs.start_beat()
    drill.procs.wait_ready(worker)

    broken = drill.post(handing, "5511930000001")
    silent = drill.post(retrying, "5511930000002")
    assert wait_for(lambda: len(drill.provider.sends) == 2, timeout=30), drill.procs.log_tail()
    texts = {s.tag: s.text for s in drill.provider.sends}
    assert texts == {
        str(handing.pk): UNAVAILABLE_HANDOFF_NOTICE,
        str(retrying.pk): UNAVAILABLE_RETRY_NOTICE,
    }
    handoff = Handoff.objects.get()
    assert (handoff.conversation.channel_id, handoff.reason_code) == (handing.pk, "llm_unavailable")
    handed = Turn.objects.get(conversation__channel=handing)
    assert (handed.status, handed.outcome) == ("done", "llm_unavailable")
    waiting = Turn.objects.get(conversation__channel=retrying)
    assert (waiting.status, waiting.error_code) == ("retry", "llm_timeout")

    drill.model.set_mode("Mudo", "ok")  # the model is back: the retry answers for real
    assert wait_for(lambda: len(drill.provider.sends) == 3, timeout=30), drill.procs.log_tail()
    assert drill.provider.sends[-1].text == REPLY_TEXT
    waiting.refresh_from_db()
    assert (waiting.status, waiting.outcome) == ("done", "replied")
    time.sleep(1.5)  # a late duplicate would show up by now
    assert len(drill.provider.sends) == 3
    assert [broken.status_code, silent.status_code] == [200, 200]


@pytest.mark.parametrize(
    "drill", [{"TURN_LEASE_S": "3", "ANTHROPIC_TIMEOUT_S": "5"}], indirect=True
)
def test_a_live_turn_slower_than_its_lease_is_finished_by_its_own_worker_once(drill):
    """A slow model (1.5 s a call, three calls a turn) keeps each turn busier than its
    lease. The worker is alive throughout: the sweeper must not hand its turns to another
    thread to decide again (twice the model calls, the first answer dropped, and after
    TURN_MAX_ATTEMPTS takeovers the team instead of an answer)."""
    drill.model.latency_s = 1.5
    drill.model.searches = 2  # search, search, send: three calls of 1.5 s, 4.5 s a turn
    channel = drill.channel("Vagarosa", provider="anthropic", cases_enabled=False)
    worker = drill.procs.start_worker()
    drill.procs.start_beat()
    drill.procs.wait_ready(worker)

    posted = [drill.post(channel, f"551194000{i:04d}") for i in range(2)]
    wait_until_answered(posted, drill.provider, deadline_s=60)
    assert_every_line_answered_once(drill, "slow_model", posted)
    turns = list(Turn.objects.values_list("status", "outcome", "attempts"))
    assert turns == [("done", "replied", 1)] * 2, drill.procs.log_tail()
    assert [s.text for s in drill.provider.sends] == [REPLY_TEXT] * 2
    assert drill.model.calls[""] <= 2 * 3  # each turn decided once: no call made twice
