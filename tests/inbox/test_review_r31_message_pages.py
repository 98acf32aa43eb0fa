"""Review r31: a long conversation's page shows its latest messages only, and "Carregar
mensagens anteriores" brings the page before (htmx), at the same query cost however long
the conversation is. Internal notes stay between the messages they were written between,
on exactly one page."""

from __future__ import annotations

import re
from datetime import timedelta

import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from inbox import services
from inbox.selectors import TIMELINE_PAGE_SIZE
from tests import factories

HTMX = {"HTTP_HX_REQUEST": "true"}
OLDER = re.compile(r'hx-get="([^"]+)"[^>]*>Carregar mensagens anteriores<')


def _chat(world, total: int, *, channel=None, phone: str = "5511944443333", notes=()):
    """A conversation with ``total`` customer lines "linha 000".. a second apart, and a note
    written just after each line numbered in ``notes``."""
    conversation = factories.make_conversation(channel or world.channel_a, phone=phone)
    start = timezone.now() - timedelta(days=1)
    for i in range(total):
        with time_machine.travel(start + timedelta(seconds=2 * i), tick=False):
            factories.make_message(conversation, f"linha {i:03d}")
        if i in notes:
            with time_machine.travel(start + timedelta(seconds=2 * i + 1), tick=False):
                services.internal_note_add(
                    contact=conversation.contact,
                    conversation=conversation,
                    actor=world.agent,
                    body=f"nota depois da {i:03d}",
                )
    return conversation


def _lines(html: str) -> list[int]:
    return [int(n) for n in re.findall(r"linha (\d{3})", html)]


def _older_url(html: str) -> str | None:
    match = OLDER.search(html)
    return match.group(1).replace("&amp;", "&") if match else None


def test_a_long_conversation_shows_only_its_latest_messages_with_a_control(world):
    conversation = _chat(world, 120)

    html = world.client_for(world.viewer).get(f"/conversas/{conversation.pk}/").content.decode()

    assert _lines(html) == list(range(120 - TIMELINE_PAGE_SIZE, 120))
    assert _older_url(html) is not None


def test_a_short_conversation_shows_everything_and_no_control(world):
    conversation = _chat(world, 3)

    html = world.client_for(world.viewer).get(f"/conversas/{conversation.pk}/").content.decode()

    assert _lines(html) == [0, 1, 2]
    assert "Carregar mensagens anteriores" not in html


def test_loading_older_pages_walks_back_to_the_first_message(world):
    conversation = _chat(world, 2 * TIMELINE_PAGE_SIZE + 7)
    client = world.client_for(world.viewer)
    html = client.get(f"/conversas/{conversation.pk}/").content.decode()
    seen = _lines(html)

    pages = 0
    while (url := _older_url(html)) is not None:
        response = client.get(url, **HTMX)
        assert response.status_code == 200
        html = response.content.decode()
        assert "<html" not in html  # a fragment, swapped in place of the control
        # The page before lands above what is shown: each page ends where the next begins.
        seen = _lines(html) + seen
        pages += 1
        assert pages < 5

    assert pages == 2
    assert seen == list(range(2 * TIMELINE_PAGE_SIZE + 7))  # each message once, in order


def test_each_note_shows_once_between_its_messages_across_pages(world):
    # Notes after the oldest line, on the boundary of two pages, and on the newest page.
    boundary = 120 - TIMELINE_PAGE_SIZE - 1
    conversation = _chat(world, 120, notes=(0, boundary, 118))
    client = world.client_for(world.viewer)
    html = client.get(f"/conversas/{conversation.pk}/").content.decode()
    pages = [html]
    while (url := _older_url(html)) is not None:
        html = client.get(url, **HTMX).content.decode()
        pages.insert(0, html)
    whole = "".join(pages)

    for n in (0, boundary, 118):
        assert whole.count(f"nota depois da {n:03d}") == 1
        assert (
            whole.index(f"linha {n:03d}")
            < whole.index(f"nota depois da {n:03d}")
            < whole.index(f"linha {n + 1:03d}")
        )


def _queries(client, url: str, **headers: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url, **headers).status_code == 200
    return len(captured)


def test_the_older_page_costs_the_same_queries_however_long_the_conversation(
    world, django_assert_num_queries
):
    client = world.client_for(world.viewer)
    short = _chat(world, TIMELINE_PAGE_SIZE + 10, phone="5511944440001")
    long = _chat(world, 4 * TIMELINE_PAGE_SIZE, phone="5511944440002")
    urls = []
    for conversation in (short, long):
        html = client.get(f"/conversas/{conversation.pk}/").content.decode()
        url = _older_url(html)
        assert url is not None
        urls.append(url)

    # session · user · membership (with its organization) · the conversation (contact,
    # assignee) · the cursor message · one page of messages (with senders) · its notes ·
    # the member's workspaces (the ``workspace`` context processor of every render)
    for url in urls:
        with django_assert_num_queries(8):
            client.get(url, **HTMX)


def test_the_conversation_page_costs_the_same_queries_however_long(world):
    client = world.client_for(world.viewer)
    short = _chat(world, 5, phone="5511944440001")
    long = _chat(world, 3 * TIMELINE_PAGE_SIZE, phone="5511944440002")
    assert _queries(client, f"/conversas/{short.pk}/") == _queries(client, f"/conversas/{long.pk}/")


def test_the_control_link_works_without_htmx_as_a_page(world):
    conversation = _chat(world, TIMELINE_PAGE_SIZE + 3)
    client = world.client_for(world.viewer)
    url = _older_url(client.get(f"/conversas/{conversation.pk}/").content.decode())
    assert url is not None

    html = client.get(url).content.decode()

    assert "<html" in html and "Mensagens anteriores" in html
    assert _lines(html) == [0, 1, 2]
    assert f"/conversas/{conversation.pk}/" in html  # back to the conversation


def test_the_older_page_refuses_another_orgs_conversation_and_a_foreign_cursor(world):
    mine = _chat(world, TIMELINE_PAGE_SIZE + 2)
    other = _chat(world, 2, phone="5511944440009")
    theirs = _chat(world, 2, channel=world.channel_b, phone="5511944440008")
    client = world.client_for(world.viewer)
    foreign = other.messages.first()
    assert foreign is not None
    assert client.get(f"/caixa/conversas/{mine.pk}/mensagens/", **HTMX).status_code == 200

    assert client.get(f"/caixa/conversas/{theirs.pk}/mensagens/", **HTMX).status_code == 404
    assert (
        client.get(f"/caixa/conversas/{mine.pk}/mensagens/?antes={foreign.pk}", **HTMX).status_code
        == 404
    )
    assert client.get(f"/caixa/conversas/{mine.pk}/mensagens/?antes=x", **HTMX).status_code == 404


def test_the_fragment_has_no_inline_script_or_style(world):
    # Three pages: the middle one carries a control of its own.
    conversation = _chat(world, 2 * TIMELINE_PAGE_SIZE + 1)
    client = world.client_for(world.viewer)
    url = _older_url(client.get(f"/conversas/{conversation.pk}/").content.decode())
    assert url is not None
    html = client.get(url, **HTMX).content.decode()
    assert _older_url(html) is not None
    assert "<script" not in html and "style=" not in html and "onclick=" not in html
