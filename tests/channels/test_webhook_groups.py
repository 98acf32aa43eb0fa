"""Group chats are not answered. An agent serves one customer per chat: a message written in a
WhatsApp group (Meta Cloud API: ``messages[].group_id``, per Meta's group messages webhook
reference; WAHA: a ``...@g.us`` chat) is acknowledged, logged with ids only, and stored as
nothing — no contact, no conversation, no turn, no private reply to the participant. Both
providers answer and log it alike. Signed webhooks on the recorded payloads."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import respx

from conversation.models import Contact, Conversation, Message, Turn
from tests import factories

from ._media_support import GRAPH, META_NUMBER, meta_agent_channel
from ._support import encode
from ._webhooks import WAHA_SESSION, meta_body, meta_post, meta_text, waha_message, waha_post

GROUP_ID = "Y2FwaV9ncm91cDoxNzA1NTU1MDEzOToxMjAzNjM0MDQ2OTQyOTM4MjAZD"  # Meta's doc sample shape
WAHA_GROUP = "120363025246125486@g.us"
SECRET_TEXT = "segredo do grupo"

# The answer to a body whose one line is a group's: taken (200), nothing stored, one ignored.
ONE_IGNORED = {"ok": True, "stored": 0, "duplicates": 0, "statuses": 0, "ignored": 1}


@pytest.fixture
def meta(world: Any) -> Any:
    return meta_agent_channel(world)


@pytest.fixture
def waha(world: Any) -> Any:
    return factories.make_channel(
        world.org_a, "waha", agent=world.agent_a, external_id=WAHA_SESSION, webhook_secret="k"
    )


def _group_line(message_id: str) -> dict[str, Any]:
    raw = meta_text(message_id, body=SECRET_TEXT)
    raw["group_id"] = GROUP_ID
    return raw


def _ignored_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage() == "webhook event ignored"]


def _assert_logged_with_ids_only(caplog: pytest.LogCaptureFixture, channel: Any, event_id: str):
    (record,) = _ignored_records(caplog)
    assert record.levelno == logging.INFO
    fields = vars(record)
    assert fields["channel_id"] == str(channel.pk)
    assert (fields["code"], fields["provider_message_id"]) == ("group_chat", event_id)
    assert fields["chat_id"]
    assert SECRET_TEXT not in repr(fields)


def _nothing_stored() -> None:
    assert not Message.objects.exists()
    assert not Contact.objects.exists()
    assert not Conversation.objects.exists()
    assert not Turn.objects.exists()


def test_a_meta_group_message_is_not_answered_as_a_private_chat(
    meta, caplog, django_capture_on_commit_callbacks
):
    caplog.set_level(logging.INFO)
    with respx.mock(assert_all_called=False) as mock:
        graph = mock.post(f"{GRAPH}/{META_NUMBER}/messages").respond(
            200, json={"messaging_product": "whatsapp", "messages": [{"id": "wamid.OUT"}]}
        )
        with django_capture_on_commit_callbacks(execute=True):
            response = meta_post(meta, encode(meta_body([_group_line("wamid.GROUP-1")])))
        calls = graph.call_count

    assert response.status_code == 200
    assert response.json() == ONE_IGNORED
    _nothing_stored()
    assert calls == 0  # no read receipt, no reply to the participant
    _assert_logged_with_ids_only(caplog, meta, "wamid.GROUP-1")
    assert vars(_ignored_records(caplog)[0])["chat_id"] == GROUP_ID


def test_a_meta_body_with_a_group_line_and_a_private_one_stores_only_the_private_one(meta):
    private = meta_text("wamid.PRIVATE-1", sender="5511977776666")
    body = meta_body([_group_line("wamid.GROUP-2"), private])

    response = meta_post(meta, encode(body))

    assert response.status_code == 200
    assert (response.json()["stored"], response.json()["ignored"]) == (1, 1)
    (line,) = Message.objects.all()
    assert line.provider_message_id == "wamid.PRIVATE-1"
    assert line.conversation.contact.phone == "5511977776666"


def test_a_meta_group_message_beside_a_refused_event_still_answers_200(meta):
    broken = meta_text("wamid.BROKEN-1")
    del broken["from"]

    response = meta_post(meta, encode(meta_body([_group_line("wamid.GROUP-3"), broken])))

    assert response.status_code == 200
    assert (response.json()["ignored"], response.json()["rejected"]) == (1, 1)
    _nothing_stored()


def test_a_waha_group_message_is_ignored_like_a_meta_one(
    waha, caplog, django_capture_on_commit_callbacks
):
    caplog.set_level(logging.INFO)
    event = waha_message(
        "false_120363025246125486@g.us_3EB0GROUP_5511977776666@c.us",
        body=SECRET_TEXT,
        participant="5511977776666@c.us",
    )
    event["payload"]["from"] = WAHA_GROUP
    event["payload"]["_data"]["Info"].update(
        Chat=WAHA_GROUP, Sender="5511977776666@s.whatsapp.net", IsGroup=True
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = waha_post(waha, encode(event))

    assert response.status_code == 200
    assert response.json() == ONE_IGNORED
    _nothing_stored()
    _assert_logged_with_ids_only(
        caplog, waha, "false_120363025246125486@g.us_3EB0GROUP_5511977776666@c.us"
    )
    assert vars(_ignored_records(caplog)[0])["chat_id"] == WAHA_GROUP


def test_a_waha_group_message_whose_sender_id_looks_private_is_still_a_group_one(waha):
    """GOWS says so in ``_data.Info.IsGroup``/``Chat`` even when ``from`` names a person."""
    event = waha_message("false_GROUP-GOWS-1", participant="208800000000077@lid")
    event["payload"]["_data"]["Info"].update(Chat=WAHA_GROUP, IsGroup=True)

    response = waha_post(waha, encode(event))

    assert response.status_code == 200
    assert response.json()["ignored"] == 1
    _nothing_stored()


def test_our_own_message_in_a_waha_group_is_ignored_too(waha):
    event = waha_message("true_GROUP-OWN-1", fromMe=True, to=WAHA_GROUP)
    event["payload"]["_data"]["Info"].update(Chat=WAHA_GROUP, IsGroup=True, IsFromMe=True)

    response = waha_post(waha, encode(event))

    assert response.status_code == 200
    assert response.json()["ignored"] == 1
    _nothing_stored()
