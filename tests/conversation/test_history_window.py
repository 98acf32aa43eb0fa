"""The model's history window (``build_history``) reads a fixed-shape query and drops the
turn's own batch in Python. For every conversation, batch and window it must pick the
same earlier messages as the exclusion query it replaced — that query is the oracle."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conversation.models import Direction, Message
from conversation.turns import build_history
from conversation.turns.orchestration import alternate
from tests import factories

pytestmark = pytest.mark.django_db


@dataclass
class _Ctx:
    conversation: Any
    batch: list[Message]
    notes: list[str] = field(default_factory=list)
    reentry: str = ""

    def customer_text(self) -> str:
        return "\n".join(m.body for m in self.batch if m.body)


def _oracle(ctx: _Ctx, window: int) -> list[tuple[str, str]]:
    """The history from the messages the exclusion query picked."""
    earlier = list(
        Message.objects.filter(conversation=ctx.conversation)
        .exclude(pk__in={m.pk for m in ctx.batch})
        .order_by("-created_at")[: max(window - len(ctx.batch), 0)]
    )
    rows = [
        ("user" if m.direction == Direction.INBOUND else "assistant", m.body)
        for m in reversed(earlier)
    ]
    rows.append(("user", ctx.customer_text()))
    return alternate(rows)  # the merging is not under test here: the selection is


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    directions=st.lists(st.booleans(), min_size=1, max_size=12),
    batch_from_end=st.integers(min_value=1, max_value=4),
    batch_skip=st.integers(min_value=0, max_value=3),
    window=st.integers(min_value=0, max_value=14),
)
def test_the_window_holds_what_the_exclusion_query_picked(
    world, directions, batch_from_end, batch_skip, window
):
    conversation = factories.make_conversation(world.channel_a, "5511977770000")
    start = timezone.now() - dt.timedelta(hours=1)
    messages = []
    for i, inbound in enumerate(directions):
        message = factories.make_message(
            conversation,
            f"m{i}",
            direction=Direction.INBOUND if inbound else Direction.OUTBOUND,
        )
        Message.objects.filter(pk=message.pk).update(created_at=start + dt.timedelta(seconds=i))
        messages.append(message)
    # The batch: inbound lines near the end, not always the very last messages (a reply
    # may have been stored after them).
    inbound = [m for m in messages if m.direction == Direction.INBOUND]
    end = len(inbound) - min(batch_skip, max(len(inbound) - 1, 0))
    batch = inbound[max(end - batch_from_end, 0) : end]
    ctx = _Ctx(conversation=conversation, batch=batch)

    history = [(m.role, m.content) for m in build_history(ctx, window)]  # type: ignore[arg-type]

    assert history == _oracle(ctx, window)
    conversation.delete()
