"""Test support for the outbox: a fake WAHA provider at the HTTP level (respx), and one
virtual clock for both ``timezone.now()`` (time-machine) and the in-process delayed tasks
(``conversation.dispatch``), so retries, backoff and cool-downs run at their due times."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import httpx
import respx
import time_machine

from conversation import dispatch, outbox
from tests import factories

WAHA_URL = "http://waha.local"
START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


@dataclass
class FakeWaha:
    """WAHA's ``/api/sendText``: ``down`` answers 503 (or refuses the connection); every
    accepted send is recorded as (chat, text) with the id it was given."""

    down: bool = False
    refuse_connection: bool = False
    sent: list[tuple[str, str]] = field(default_factory=list)
    calls: int = 0
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        if self.down:
            if self.refuse_connection:
                raise httpx.ConnectError("connection refused", request=request)
            return httpx.Response(503)
        body = json.loads(request.content)
        self.sent.append((body["chatId"], body["text"]))
        return httpx.Response(201, json={"id": f"true_{body['chatId']}_W{next(self._ids)}"})

    def texts(self) -> list[str]:
        return [text for _, text in self.sent]


@contextmanager
def fake_waha() -> Iterator[FakeWaha]:
    provider = FakeWaha()
    with respx.mock(assert_all_called=False) as mock:
        mock.post(f"{WAHA_URL}/api/sendText").mock(side_effect=provider)
        yield provider


def waha_channel(org: Any, **fields: Any) -> Any:
    return factories.make_channel(
        org, "waha", external_id="default", api_base_url=WAHA_URL, api_token="k", **fields
    )


def waha_conversation(channel: Any, phone: str = "5511977776666") -> Any:
    return factories.make_conversation(channel, phone=phone)


class Clock:
    """Virtual time: ``run(seconds)`` lets that much time pass, running each delayed task
    (and, when asked, the sweeper) when it falls due — never early."""

    def __init__(self, traveller: Any, capture: Callable[..., Any], monkeypatch: Any) -> None:
        self.traveller = traveller
        self.capture = capture
        self.offset = 0.0
        base = time.monotonic()
        # Purely virtual: a delayed task falls due exactly when its countdown has passed.
        monkeypatch.setattr(dispatch, "time", SimpleNamespace(monotonic=lambda: base + self.offset))

    def now(self) -> datetime:
        return START + timedelta(seconds=self.offset)

    def advance(self, seconds: float) -> None:
        if seconds > 0:
            self.traveller.shift(timedelta(seconds=seconds))
            self.offset += seconds

    def _next_due_in(self) -> float | None:
        with dispatch._lock:
            if not dispatch._delayed:
                return None
            return dispatch._delayed[0][0] - dispatch.time.monotonic()

    def run(self, seconds: float, *, sweep_every: float | None = None) -> None:
        end = self.offset + seconds
        next_sweep = self.offset + sweep_every if sweep_every else None
        while True:
            due_in = self._next_due_in()
            task_at = None if due_in is None else self.offset + max(due_in, 0.0)
            candidates = [t for t in (task_at, next_sweep) if t is not None]
            at = min(candidates) if candidates else None
            if at is None or at > end:
                self.advance(end - self.offset)
                return
            self.advance(at - self.offset)
            with self.capture(execute=True):
                if next_sweep is not None and at >= next_sweep:
                    outbox.sweep_due()
                    next_sweep += sweep_every or 0
                dispatch.run_delayed(all_due=False)

    def enqueue(self, conversation: Any, *bodies: str) -> list[Any]:
        """Write replies to the outbox in one transaction; their first delivery runs on commit."""
        with self.capture(execute=True):
            return [
                outbox.outbound_enqueue(conversation=conversation, body=b, sender_kind="ai")
                for b in bodies
            ]


def drop_delayed() -> None:
    """Forget wake-ups a test left scheduled (they belong to its database and its time)."""
    with dispatch._lock:
        dispatch._delayed.clear()


@contextmanager
def virtual_clock(capture: Callable[..., Any], monkeypatch: Any) -> Iterator[Clock]:
    with time_machine.travel(START, tick=False) as traveller:
        try:
            yield Clock(traveller, capture, monkeypatch)
        finally:
            drop_delayed()  # rather than let the next test's setup run them
