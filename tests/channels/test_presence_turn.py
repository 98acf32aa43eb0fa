"""Read receipts and typing while a turn runs: WAHA ``sendSeen`` + ``startTyping`` before
the reply and ``stopTyping`` after; Meta ``status: read`` with ``typing_indicator``. Best
effort: a provider failing those calls still gets the reply."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx

from conversation.models import Message, Turn
from tests import factories

from ._media_support import (
    GRAPH,
    META_NUMBER,
    WAHA_URL,
    meta_agent_channel,
    meta_case,
    waha_media_event,
)
from ._support import encode
from ._webhooks import meta_post, waha_post


@pytest.fixture
def waha_channel(world: Any) -> Any:
    return factories.make_channel(
        world.org_a,
        "waha",
        agent=world.agent_a,
        external_id="default",
        api_base_url=WAHA_URL,
        api_token="waha-key",
        webhook_secret="hmac-key",
    )


def _text_event(message_id: str) -> dict[str, Any]:
    event = waha_media_event(message_id=message_id)
    event["payload"].pop("media")
    event["payload"].update(hasMedia=False, body="Oi, qual o horário de vocês?")
    return event


def _paths(mock: Any) -> list[str]:
    return [call.request.url.path for call in mock.calls]


def test_waha_turn_marks_read_types_then_replies_then_stops_typing(
    world, waha_channel, django_capture_on_commit_callbacks
):
    with respx.mock(assert_all_called=False) as mock:
        for endpoint in ("sendSeen", "startTyping", "stopTyping"):
            mock.post(f"{WAHA_URL}/api/{endpoint}").respond(201, json={})
        mock.post(f"{WAHA_URL}/api/sendText").respond(201, json={"id": "true_x@c.us_R1"})
        with django_capture_on_commit_callbacks(execute=True):
            waha_post(waha_channel, encode(_text_event("false_11111111111@c.us_IN1")))
        paths = _paths(mock)  # respx forgets its calls when the mock closes
        seen = json.loads(mock.calls[0].request.content)

    assert paths[:2] == ["/api/sendSeen", "/api/startTyping"]
    assert "/api/stopTyping" in paths
    assert seen["messageIds"] == ["false_11111111111@c.us_IN1"]
    assert Turn.objects.get().outcome  # the turn finished
    # The reply was queued by the turn; typing stopped once the turn had decided.
    assert paths.index("/api/stopTyping") < paths.index("/api/sendText")
    assert Message.objects.filter(direction="outbound", status="sent").exists()


def test_waha_receipts_failing_never_fail_the_turn(
    world, waha_channel, django_capture_on_commit_callbacks
):
    with respx.mock(assert_all_called=False) as mock:
        mock.post(f"{WAHA_URL}/api/sendSeen").mock(side_effect=httpx.ConnectError("down"))
        mock.post(f"{WAHA_URL}/api/startTyping").respond(500)
        text = mock.post(f"{WAHA_URL}/api/sendText").respond(201, json={"id": "true_x@c.us_R2"})
        with django_capture_on_commit_callbacks(execute=True):
            response = waha_post(waha_channel, encode(_text_event("false_11111111111@c.us_IN2")))
        paths = _paths(mock)
        replied = text.called

    assert response.status_code == 200
    assert replied  # the customer still got the answer
    assert "/api/stopTyping" not in paths  # typing never started, nothing to stop
    assert Turn.objects.get().outcome


def test_presence_can_be_switched_off(
    world, waha_channel, settings, django_capture_on_commit_callbacks
):
    settings.WHATSAPP_PRESENCE_ENABLED = False
    with respx.mock(assert_all_called=False) as mock:
        mock.post(f"{WAHA_URL}/api/sendText").respond(201, json={"id": "true_x@c.us_R3"})
        with django_capture_on_commit_callbacks(execute=True):
            waha_post(waha_channel, encode(_text_event("false_11111111111@c.us_IN3")))
        paths = _paths(mock)

    assert paths == ["/api/sendText"]


def test_meta_turn_marks_the_message_read_with_typing(world, django_capture_on_commit_callbacks):
    channel = meta_agent_channel(world)
    with respx.mock(assert_all_called=False) as mock:
        route = mock.post(f"{GRAPH}/{META_NUMBER}/messages").respond(
            200, json={"success": True, "messages": [{"id": "wamid.REPLY"}]}
        )
        with django_capture_on_commit_callbacks(execute=True):
            meta_post(channel, encode(meta_case("text", message_id="wamid.IN-TEXT")))
        bodies = [json.loads(call.request.content) for call in route.calls]
    assert bodies[0] == {
        "messaging_product": "whatsapp",
        "status": "read",
        "message_id": "wamid.IN-TEXT",
        "typing_indicator": {"type": "text"},
    }
    assert any(b.get("type") == "text" for b in bodies[1:])  # then the reply
