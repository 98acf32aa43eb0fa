"""Turns under faults the lease and the sweeper must survive: a live turn slower than its
lease (it must not be presumed dead while it still talks to the model), a bug in the claim's
guards (the line must not be re-driven for a day without an answer), and a backlog in one
conversation (it must not starve the others of the sweeper). Through the public path: a
webhook, a real turn, the sweeper; the model is a script whose answers take virtual time."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from conversation import model_calls
from conversation.llm.base import ModelRequest, ModelResponse, ReportingClient
from conversation.models import Handoff, Message, Turn
from conversation.sweeper import sweep_due_work
from conversation.turns import HANDOFF_NOTICE, pipeline
from tests import factories
from tests.cases.conftest import end, promise_check_answer, tool
from tests.conftest import simulator_post

PHONE = "5511955554444"


def post(channel: Any, text: str, msg_id: str, capture: Any, *, run: bool = True) -> None:
    with capture(execute=run):
        response = simulator_post(Client(), channel, text, msg_id=msg_id, phone=PHONE)
    assert response.status_code == 200


class SlowScript:
    """Every model call of the turn (whatever client asks) answers from one script, each
    answer taking ``seconds`` of virtual time; ``during[n]`` runs while call ``n`` is in
    flight (what another process does meanwhile). Calls are reported to the turn's ledger
    like a real client's."""

    def __init__(self, traveller: Any, seconds: float, responses: list[ModelResponse]) -> None:
        self.traveller, self.seconds = traveller, seconds
        self.responses = deque(responses)
        self.calls = 0
        self.during: dict[int, Callable[[], None]] = {}

    def factory(self, recorder: Any) -> Any:
        script = self

        class Client(ReportingClient):
            name = "slow-script"

            def __init__(self) -> None:
                self._recorder = recorder

            def complete(self, request: ModelRequest) -> ModelResponse:
                started = time.monotonic()
                if request.purpose == "promise_check":
                    answer = promise_check_answer(False)
                else:
                    script.calls += 1
                    script.traveller.shift(timedelta(seconds=script.seconds))
                    hook = script.during.get(script.calls)
                    if hook is not None:
                        hook()
                    answer = script.responses.popleft()
                self._report(request, started, usage=answer.usage)
                return answer

        return Client()


def test_a_turn_slower_than_its_lease_is_kept_by_its_worker_not_taken_over(
    world, settings, django_capture_on_commit_callbacks
):
    # An agent with several steps on a slow (but answering) model: five calls of 70 s each,
    # 350 s in all, more than TURN_LEASE_S (150 s). The worker is alive the whole time; the
    # sweeper must not presume it dead and hand the turn to another worker (which would call
    # the model all over again, and drop this attempt's answer as written by a dead claim).
    settings.TURN_LEASE_S = 150
    agent = factories.make_agent(
        world.org_a, "Lento", provider="anthropic", cases_enabled=False, max_steps=6
    )
    channel = factories.make_channel(world.org_a, agent=agent)
    seen: list[int] = []
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        script = SlowScript(
            traveller,
            70,
            [
                *(tool("search_knowledge", {"query": f"prazo {i}"}, n=i) for i in range(4)),
                tool("send_message", {"text": "O prazo de entrega é de 3 dias úteis."}, n=9),
                end(),
            ],
        )

        def another_process_sweeps() -> None:
            with django_capture_on_commit_callbacks(execute=False):
                seen.append(sweep_due_work().expired_turns)

        for call in (3, 4, 5):
            script.during[call] = another_process_sweeps
        with model_calls.use_model_client(script.factory):
            post(channel, "qual o prazo de entrega?", "sl-1", django_capture_on_commit_callbacks)

    assert seen == [0, 0, 0]  # alive, so never re-driven
    turn = Turn.objects.get()
    assert (turn.status, turn.outcome, turn.attempts) == ("done", "replied", 1)
    assert list(Message.objects.filter(direction="outbound").values_list("body", flat=True)) == [
        "O prazo de entrega é de 3 dias úteis."
    ]


def test_a_line_whose_guards_crash_goes_to_the_team_after_the_attempts_not_swept_forever(
    world, settings, monkeypatch, django_capture_on_commit_callbacks
):
    # A bug in the claim's guards (here: on one malformed line) fails every delivery of the
    # line. The turn's attempts must count, so that after TURN_MAX_ATTEMPTS the customer is
    # told a person takes over and the team gets the conversation — instead of the sweeper
    # re-driving the line every 15 s for a day with nobody ever answering.
    settings.TURN_MAX_ATTEMPTS = 3
    real = pipeline.reaction_only_guard

    def crashes_on_the_malformed_line(ctx: Any) -> Any:
        if "\u2063" in ctx.customer_text():
            raise ValueError("a bug this line trips")
        return real(ctx)

    monkeypatch.setattr(pipeline, "reaction_only_guard", crashes_on_the_malformed_line)
    post(world.channel_a, "oi\u2063", "gd-1", django_capture_on_commit_callbacks)

    now = timezone.now()
    for sweep in range(1, 8):
        later = now + timedelta(seconds=sweep * (settings.TURN_SWEEP_GRACE_S + 5))
        with time_machine.travel(later, tick=False):
            with django_capture_on_commit_callbacks() as due:
                sweep_due_work()
            for callback in due:  # the re-driven task, run by a worker
                callback()

    bodies = list(Message.objects.filter(direction="outbound").values_list("body", flat=True))
    assert bodies == [HANDOFF_NOTICE]
    assert Handoff.objects.filter(conversation__channel=world.channel_a).count() == 1
    turn = Turn.objects.get()
    assert (turn.status, turn.error_code) == ("failed", "attempts_exhausted")
    assert turn.attempts == settings.TURN_MAX_ATTEMPTS + 1


@pytest.mark.parametrize("batch", [3])
def test_a_backlog_in_one_conversation_does_not_starve_the_others_of_the_sweeper(
    world, settings, monkeypatch, batch, django_capture_on_commit_callbacks
):
    # The broker lost every task for a while: one customer wrote many separate lines (a
    # flood, a bot), another wrote one, later. Each sweep takes a batch of the oldest lines:
    # a batch full of the first customer's lines must not leave the second one unanswered.
    from conversation import sweeper

    monkeypatch.setattr(sweeper, "SWEEP_BATCH", batch)
    settings.TURN_BURST_WINDOW_S = 1
    t0 = timezone.now()
    for i in range(batch + 2):
        with time_machine.travel(t0 + timedelta(seconds=5 * i), tick=False):
            post(world.channel_a, f"l{i}", f"fl-{i}", django_capture_on_commit_callbacks, run=False)
    with time_machine.travel(t0 + timedelta(seconds=60), tick=False):
        with django_capture_on_commit_callbacks(execute=False):
            response = simulator_post(
                Client(), world.channel_a, "oi", msg_id="other-1", phone="5511933332222"
            )
        assert response.status_code == 200

    later = t0 + timedelta(seconds=120)
    with time_machine.travel(later, tick=False), django_capture_on_commit_callbacks(execute=True):
        swept = sweep_due_work()
    assert swept.stranded_lines == 2  # both conversations, not just the flooded one
    other = Message.objects.get(provider_message_id="other-1")
    assert other.turn is not None and other.turn.outcome == "replied"
