"""Review r31: the conversation page of a long conversation loads only what it shows.

A conversation with thousands of messages and hundreds of turns must open fast on a phone:
the page reads the latest messages (the timeline's page, "Carregar mensagens anteriores"
brings the rest), the latest turns with their own model calls ("Ver turnos anteriores"
brings the older ones), and the runtime's figures of the whole conversation as totals —
never every row, and never a pass over every message per turn."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any
from urllib.parse import urljoin

import pytest
import time_machine
from django.db.models.signals import post_init
from django.utils import timezone

from conversation.models import Handoff, LlmCall, Message, Turn
from inbox.selectors import TIMELINE_PAGE_SIZE
from tests import factories

TURN_PAGE = 20  # the page shows the latest 20 turns at a time
OLDER_TURNS = re.compile(r'<a[^>]*href="([^"]*turnos=2[^"]*)"[^>]*>\s*Ver turnos anteriores')
HANDLED = {"mode": "on", "handled": True, "decision": "ask_confirmation", "rule": "5"}
UNCOVERED = {"mode": "on", "handled": False, "fallback_reason": "uncovered_intent"}


def _long_chat(world: Any, *, messages: int, turns: int, runtime: bool = False, phone: str = ""):
    """``turns`` turns "t00".. (each with its customer line, its reply and one model call)
    followed by plain customer lines up to ``messages`` messages, a second apart."""
    conversation = factories.make_conversation(world.channel_a, phone=phone or "5511955550000")
    start = timezone.now() - timedelta(days=2)
    at = iter(start + timedelta(seconds=n) for n in range(10 * (messages + turns) + 10))
    made = 0
    for i in range(turns):
        with time_machine.travel(next(at), tick=False):
            trace: dict[str, Any] = {"batch": 1}
            if runtime:
                trace["runtime"] = HANDLED if i % 3 else UNCOVERED
            turn = factories.make_turn(conversation, trace=trace, trigger_key=f"t{i:02d}-{phone}")
            factories.make_message(conversation, f"linha {made:03d}", turn=turn)
        made += 1
        with time_machine.travel(next(at), tick=False):
            factories.make_message(
                conversation,
                f"resposta do turno t{i:02d}",
                direction="outbound",
                sender_kind="ai",
                status="sent",
                turn=turn,
            )
        made += 1
        with time_machine.travel(next(at), tick=False):
            LlmCall.objects.create(
                organization=world.org_a,
                conversation=conversation,
                turn=turn,
                purpose="orchestrator",
                provider="offline",
                model=f"modelo-t{i:02d}",
            )
    while made < messages:
        with time_machine.travel(next(at), tick=False):
            factories.make_message(conversation, f"linha {made:03d}")
        made += 1
    return conversation


@contextmanager
def _loaded_rows() -> Iterator[Counter[str]]:
    """How many rows of each model the block builds (what it fetched, row by row)."""
    seen: Counter[str] = Counter()

    def count(sender: Any, **kwargs: Any) -> None:
        seen[sender.__name__] += 1

    for model in (Message, Turn, LlmCall):
        post_init.connect(count, sender=model, weak=False)
    try:
        yield seen
    finally:
        for model in (Message, Turn, LlmCall):
            post_init.disconnect(count, sender=model)


def _turn_ids(html: str) -> list[str]:
    return re.findall(r'<article class="turn" id="turn-([0-9a-f-]+)"', html)


def _calls_table(html: str) -> str:
    return html.split('id="calls-title"')[1]


def _follow(page: str, href: str) -> str:
    """The link's address as a browser resolves it from ``page``."""
    return urljoin(page, href.replace("&amp;", "&"))


def _newest_first(conversation) -> list[Turn]:
    return list(conversation.turns.order_by("-created_at"))


def test_a_long_conversation_loads_only_the_rows_the_page_shows(world):
    conversation = _long_chat(world, messages=400, turns=60)
    client = world.client_for(world.viewer)

    with _loaded_rows() as loaded:
        response = client.get(f"/conversas/{conversation.pk}/")

    assert response.status_code == 200
    # The timeline's page (one more tells whether older messages exist), the latest turns
    # (one more tells whether older turns exist) and the model calls of those turns only.
    assert loaded["Message"] <= TIMELINE_PAGE_SIZE + 1
    assert loaded["Turn"] <= TURN_PAGE + 1
    assert loaded["LlmCall"] == TURN_PAGE


def test_a_long_conversation_shows_its_latest_messages_and_turns_with_older_controls(world):
    conversation = _long_chat(world, messages=400, turns=60)

    html = world.client_for(world.viewer).get(f"/conversas/{conversation.pk}/").content.decode()

    assert "linha 399" in html and "linha 350" in html  # the latest messages
    assert "linha 000" not in html and "linha 349" not in html
    assert "Carregar mensagens anteriores" in html
    newest = _newest_first(conversation)
    assert _turn_ids(html) == [str(t.pk) for t in newest[:TURN_PAGE]]  # newest first
    assert OLDER_TURNS.search(html) is not None
    calls = _calls_table(html)
    assert "modelo-t59" in calls and "modelo-t40" in calls
    assert "modelo-t39" not in calls and "modelo-t00" not in calls  # older turns' calls


def test_the_older_turns_control_walks_back_to_the_first_turn(world):
    conversation = _long_chat(world, messages=130, turns=45)
    client = world.client_for(world.viewer)
    page = f"/conversas/{conversation.pk}/"
    html = client.get(page).content.decode()
    seen = _turn_ids(html)

    match = OLDER_TURNS.search(html)
    assert match is not None
    second = client.get(_follow(page, match.group(1)))
    assert second.status_code == 200
    html = second.content.decode()
    seen += _turn_ids(html)
    assert "Turnos mais recentes" in html  # the way back
    third = re.search(r'href="([^"]*turnos=3[^"]*)"[^>]*>\s*Ver turnos anteriores', html)
    assert third is not None
    html = client.get(_follow(page, third.group(1))).content.decode()
    seen += _turn_ids(html)

    assert "Ver turnos anteriores" not in html  # the first turn is on the last page
    assert seen == [str(t.pk) for t in _newest_first(conversation)]  # each turn once
    calls = _calls_table(html)
    assert "modelo-t04" in calls and "modelo-t00" in calls and "modelo-t05" not in calls
    # The messages stay the latest ones whatever the page of turns.
    assert "linha 129" in html and "linha 000" not in html


def test_a_short_conversation_has_no_older_turns_control(world):
    conversation = _long_chat(world, messages=10, turns=3)

    html = world.client_for(world.viewer).get(f"/conversas/{conversation.pk}/").content.decode()

    assert len(_turn_ids(html)) == 3
    assert "Ver turnos anteriores" not in html and "Turnos mais recentes" not in html
    assert "Carregar mensagens anteriores" not in html


@pytest.mark.parametrize("bad", ["0", "-2", "x", "", "99999999999999999999"])
def test_a_bad_turn_page_shows_the_latest_turns(world, bad):
    conversation = _long_chat(world, messages=10, turns=3)

    response = world.client_for(world.viewer).get(f"/conversas/{conversation.pk}/", {"turnos": bad})

    assert response.status_code == 200
    assert len(_turn_ids(response.content.decode())) == 3


@pytest.mark.parametrize("runtime", [False, True])
def test_the_page_costs_the_same_queries_however_long_the_conversation(
    world, django_assert_num_queries, runtime
):
    client = world.client_for(world.viewer)
    short = _long_chat(world, messages=10, turns=3, runtime=runtime, phone="5511955550001")
    long = _long_chat(world, messages=500, turns=60, runtime=runtime, phone="5511955550002")
    client.get(f"/conversas/{short.pk}/")  # warm-up
    # session · user · membership · the conversation (+contact, channel, agent, its open
    # handoff) · the latest messages · the latest turns · their model calls · the runtime's
    # figures · nav badge · memberships (context processor) · internal notes; a page with
    # runtime turns reads those turns' replies as well.
    expected = 12 if runtime else 11
    for conversation in (short, long):
        with django_assert_num_queries(expected):
            response = client.get(f"/conversas/{conversation.pk}/")
        assert response.status_code == 200


def test_the_runtime_figures_count_every_turn_of_the_conversation(world):
    # 60 runtime turns, 20 of them passed to the orchestrator (one in three).
    conversation = _long_chat(world, messages=120, turns=60, runtime=True)

    html = world.client_for(world.viewer).get(f"/conversas/{conversation.pk}/").content.decode()

    summary = re.search(r'<section class="runtime-outcomes".*?</section>', html, re.S)
    assert summary is not None
    shown = re.sub(r"\s+", " ", summary.group(0))
    assert "Respondidos pelo runtime</dt><dd>40" in shown
    assert "Passados ao orquestrador</dt><dd>20" in shown
    assert "taxa de fallback 33%" in shown


def test_each_runtime_turn_shows_the_replies_it_sent_even_on_an_older_page(world):
    conversation = _long_chat(world, messages=200, turns=45, runtime=True)
    client = world.client_for(world.viewer)

    html = client.get(f"/conversas/{conversation.pk}/", {"turnos": "3"}).content.decode()

    newest = _newest_first(conversation)
    assert _turn_ids(html) == [str(t.pk) for t in newest[2 * TURN_PAGE :]]
    for n in range(5):  # t04 .. t00: their replies are long out of the latest messages
        block = re.search(
            rf'id="turn-{newest[-1 - n].pk}-runtime".*?</div>\s*</dl>\s*</div>', html, re.S
        )
        assert block is not None
        sent = re.findall(r'class="runtime-sent-msg">([^<]*)<', block.group(0))
        assert len(sent) == 1 and f"resposta do turno t{n:02d}" in sent[0]


def test_an_open_handoff_is_linked_from_the_page_and_a_closed_one_is_not(world):
    conversation = _long_chat(world, messages=10, turns=3)
    closed = Handoff.objects.create(
        organization=world.org_a, conversation=conversation, reason_code="manual", status="returned"
    )
    client = world.client_for(world.agent)

    html = client.get(f"/conversas/{conversation.pk}/").content.decode()
    assert "Abrir transbordo" not in html and f"/transbordos/{closed.pk}/" not in html

    handoff = Handoff.objects.create(
        organization=world.org_a, conversation=conversation, reason_code="manual"
    )
    html = client.get(f"/conversas/{conversation.pk}/").content.decode()
    assert f'href="/transbordos/{handoff.pk}/">Abrir transbordo' in html
    assert "Assumir conversa" not in html  # the handoff is already open
