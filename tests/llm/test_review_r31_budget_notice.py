"""Review r31: the budget's staff e-mail never holds the customer's turn.

The turn that crosses the monthly limit records the switch; the notice to the managers is
an e-mail, and a mail server that is slow or down must not delay the customer's answer
(DESIGN §5: turns wait on the network only for their own model and provider calls). So the
e-mail goes out from a task scheduled when the switch commits — retried when the server
fails, and still once per switch (a month, a level, a limit) however many turns cross it.

The broker here is a list: ``dispatch`` publishes into it on commit, and the test plays the
worker, so what runs inside the turn's task and what runs after it can be told apart.
"""

from __future__ import annotations

import smtplib
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any, ClassVar

import pytest
from django.core import mail
from django.core.mail.backends import locmem
from django.test import Client

from analytics import services
from analytics.budgets import BudgetConfig
from analytics.models import BudgetSwitch
from conversation import dispatch
from conversation.models import LlmCall, Message
from tests.conftest import simulator_post


class FlakyBackend(locmem.EmailBackend):
    """locmem, recording every attempt; the first ``failures`` attempts fail like an SMTP
    server that drops the connection."""

    attempts: ClassVar[list[str]] = []  # the phase of each attempt ("turn" / "after")
    failures: ClassVar[int] = 0
    phase: ClassVar[str] = ""

    def send_messages(self, email_messages: Any) -> int:
        FlakyBackend.attempts.append(FlakyBackend.phase)
        if len(FlakyBackend.attempts) <= FlakyBackend.failures:
            raise smtplib.SMTPServerDisconnected("Connection unexpectedly closed")
        return super().send_messages(email_messages)


class Broker:
    """What ``dispatch`` published, in order: (task name, args, countdown)."""

    def __init__(self, capture: Callable[..., Any]) -> None:
        self.queue: list[tuple[Any, tuple[Any, ...], float]] = []
        self.published: list[tuple[str, float]] = []
        self._capture = capture

    def publish(self, task: Any, args: tuple[Any, ...], countdown: float) -> None:
        self.queue.append((task, args, countdown))
        self.published.append((task.name, countdown))

    def work(self, phase: str, *, only: str | None = None) -> int:
        """Run the queued tasks (and what they publish in turn); ``only``: just that task."""
        ran = 0
        while ran < 50:  # a retry that never stops would loop here: bounded
            index = next(
                (i for i, (t, _, _) in enumerate(self.queue) if only is None or t.name == only),
                None,
            )
            if index is None:
                return ran
            task, args, _ = self.queue.pop(index)
            FlakyBackend.phase = phase
            # A worker commits what the task writes: its on-commit publishes run.
            with self._capture(execute=True):
                dispatch._run(task, args)
            ran += 1
        return ran


@pytest.fixture
def broker(
    world: Any,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> Iterator[Broker]:
    for user in (world.admin, world.manager):
        user.email = f"{user.username}@example.com"
        user.save(update_fields=["email"])
    # This month: a million haiku input tokens = US$ 1.00, past a US$ 0.50 limit.
    LlmCall.objects.create(
        organization=world.org_a,
        purpose="orchestrator",
        provider="anthropic",
        model="claude-haiku-4-5",
        input_tokens=1_000_000,
    )
    services.budget_set(
        organization=world.org_a,
        actor=world.admin,
        config=BudgetConfig(monthly_limit_usd=Decimal("0.50")),
    )
    world.org_a.refresh_from_db()
    settings.EMAIL_BACKEND = f"{__name__}.FlakyBackend"
    FlakyBackend.attempts.clear()
    FlakyBackend.failures = 0
    mail.outbox.clear()
    broker = Broker(django_capture_on_commit_callbacks)
    monkeypatch.setattr(dispatch, "_send", broker.publish)
    yield broker


def customer_writes(world: Any, broker: Broker, msg_id: str, capture: Any, phone: str) -> None:
    with capture(execute=True):
        simulator_post(Client(), world.channel_a, "oi", msg_id=msg_id, phone=phone)
    broker.work("turn", only="conversation.run_inbound_turn")


def test_the_turn_that_crosses_the_limit_answers_without_waiting_on_the_mail_server(
    world: Any, broker: Broker, django_capture_on_commit_callbacks: Any
) -> None:
    customer_writes(world, broker, "bn-1", django_capture_on_commit_callbacks, "5511900000001")

    # The turn is over and the customer's answer is stored; no mail server was touched.
    assert Message.objects.filter(direction="outbound").exists()
    assert BudgetSwitch.objects.get().level == "stopped"
    assert FlakyBackend.attempts == []
    # The notice goes out from the work the switch's commit scheduled.
    broker.work("after")
    assert FlakyBackend.attempts == ["after"]
    (notice,) = mail.outbox
    assert notice.subject == "Retaguarda: limite mensal de gasto com IA atingido"
    assert sorted(notice.to) == sorted([world.admin.email, world.manager.email])


def test_a_mail_server_that_fails_gets_the_notice_later_and_only_once(
    world: Any, broker: Broker, django_capture_on_commit_callbacks: Any
) -> None:
    FlakyBackend.failures = 2
    customer_writes(world, broker, "bn-2", django_capture_on_commit_callbacks, "5511900000002")
    # A second customer's turn crosses the same stop: no second notice is scheduled.
    customer_writes(world, broker, "bn-3", django_capture_on_commit_callbacks, "5511900000003")

    broker.work("after")

    assert FlakyBackend.attempts == ["after", "after", "after"]  # two failures, then sent
    assert len(mail.outbox) == 1
    # Each retry waited (a countdown), rather than hammering the server at once.
    retries = [c for name, c in broker.published if name.startswith("analytics.")][1:]
    assert len(retries) == 2 and all(c > 0 for c in retries)


def test_a_mail_server_that_stays_down_is_not_retried_forever(
    world: Any, broker: Broker, django_capture_on_commit_callbacks: Any
) -> None:
    FlakyBackend.failures = 10_000
    customer_writes(world, broker, "bn-4", django_capture_on_commit_callbacks, "5511900000004")

    broker.work("after")

    assert broker.queue == []  # the attempts stopped: nothing is scheduled any more
    assert 1 < len(FlakyBackend.attempts) < 50
    assert mail.outbox == []
