"""Webhook fuzz over the real payload formats, signed like the providers sign them.

Every delivery mixes valid events with poison ones: NUL characters and lone surrogates in
text, names and ids (as JSON escapes or raw surrogate bytes), ids and phones longer than
their columns, non-object events, bad timestamps, events for another ``phone_number_id`` or
WAHA ``session``. Whatever arrives: no 5xx, every valid event stored (cleaned), no refused
event stored, and the answer is 200 exactly when something was acceptable.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conversation.models import Message
from tests import factories

from ._support import load_fixture
from ._webhooks import META_NUMBER, WAHA_SESSION, meta_post, waha_message, waha_post

OTHER_NUMBER = "109876543210"
_tokens = itertools.count()

FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# Text that breaks storage when it gets through: NUL (PostgreSQL text) and lone surrogates
# (no UTF-8 encoding), mixed with ordinary and astral characters.
POISON_CHARS = ["\x00", "\ud800", "\udbff", "\udc00", "\udfff", "\ud83d"]
nasty_text = st.lists(
    st.one_of(st.characters(), st.sampled_from(POISON_CHARS)), min_size=0, max_size=30
).map("".join)


def _meta_messages() -> list[dict[str, Any]]:
    """The recorded Cloud API messages of every kind (text, media, reaction, location...)."""
    out = []
    for data in load_fixture("meta/pywa_fixture_updates_message.json").values():
        value = data["entry"][0]["changes"][0]["value"]
        for raw in value.get("messages") or ():
            if raw.get("type") != "system":
                out.append(raw)
    return out


RECORDED_META_MESSAGES = _meta_messages()


def cleaned(value: str) -> str:
    """What the spec says a stored id becomes: NUL dropped, lone surrogates -> U+FFFD, and
    (as ever) surrounding whitespace stripped."""
    return re.sub("[\ud800-\udfff]", "\ufffd", value.replace("\x00", "")).strip()


def encoded(document: Any, expected: Expected, *, ensure_ascii: bool) -> bytes:
    """The body as a provider's encoder would write it: lone surrogates as \\u escapes, or as
    raw (CESU-style) bytes. ``expected.stored`` turns from the ids as built into the ids as
    the server will decode and clean them (JSON pairs two escaped surrogates into one
    character; raw surrogate bytes stay two lone ones)."""

    def wire(value: Any) -> bytes:
        return json.dumps(value, ensure_ascii=ensure_ascii).encode("utf-8", "surrogatepass")

    expected.stored = [cleaned(json.loads(wire(raw))) for raw in expected.stored]
    return wire(document)


def token() -> str:
    return f"F{next(_tokens):06d}"


@dataclass
class Expected:
    stored: list[str] = field(default_factory=list)  # cleaned ids that must be stored
    refused: list[str] = field(default_factory=list)  # id prefixes that must not be


def storable(text: str) -> bool:
    return "\x00" not in text and not re.search("[\ud800-\udfff]", text)


# -- Meta -----------------------------------------------------------------------------------

META_FLAVORS = [
    "good",
    "nasty_text",
    "nasty_id",
    "long_id",
    "long_phone",
    "not_object",
    "no_id",
    "bad_timestamp",
]


@st.composite
def meta_event(draw: st.DrawFn) -> tuple[str, Any, str]:
    """(flavor, raw event, id token)."""
    flavor = draw(st.sampled_from(META_FLAVORS))
    raw = copy.deepcopy(draw(st.sampled_from(RECORDED_META_MESSAGES)))
    tag = token()
    raw["id"] = f"wamid.{tag}"
    raw["from"] = draw(st.sampled_from(["5511988887777", "+5521977776666", "972987654321"]))
    if flavor == "nasty_text":
        raw["type"], raw["text"] = "text", {"body": draw(nasty_text)}
    elif flavor == "nasty_id":
        raw["id"] = f"wamid.{tag}{draw(nasty_text)}"
    elif flavor == "long_id":
        raw["id"] = f"wamid.{tag}" + "x" * draw(st.integers(180, 400))
    elif flavor == "long_phone":
        raw["from"] = "5" * draw(st.integers(65, 200))
    elif flavor == "not_object":
        raw = draw(st.one_of(st.integers(), nasty_text, st.lists(st.integers(), max_size=2)))
    elif flavor == "no_id":
        del raw["id"]
    elif flavor == "bad_timestamp":
        raw["timestamp"] = draw(st.sampled_from(["soon", -1, 1e30, None, True]))
    return flavor, raw, tag


def _meta_outcome(flavor: str, raw: Any, tag: str, expected: Expected) -> None:
    too_long = flavor == "long_id" and len(raw["id"]) > 200
    if too_long or flavor in ("not_object", "no_id", "bad_timestamp", "long_phone"):
        expected.refused.append(f"wamid.{tag}")
    else:
        expected.stored.append(raw["id"])


@st.composite
def meta_delivery(draw: st.DrawFn) -> tuple[bytes, Expected, int]:
    """A signed-ready body of 1-3 changes, some addressed to another number."""
    template = load_fixture("meta/pywa_fixture_updates_message.json")["text"]
    value = template["entry"][0]["changes"][0]["value"]
    expected, changes, events = Expected(), [], 0
    for _ in range(draw(st.integers(1, 3))):
        ours = draw(st.booleans()) or not changes  # at least the first change is ours
        number = META_NUMBER if ours else OTHER_NUMBER
        change_value = copy.deepcopy(value)
        change_value["metadata"]["phone_number_id"] = number
        if draw(st.booleans()):
            change_value["contacts"][0]["profile"]["name"] = draw(nasty_text)
        messages = []
        for flavor, raw, tag in draw(st.lists(meta_event(), min_size=1, max_size=4)):
            messages.append(raw)
            events += 1
            if ours:
                _meta_outcome(flavor, raw, tag, expected)
            else:
                expected.refused.append(f"wamid.{tag}")
        change_value["messages"] = messages
        changes.append({"field": "messages", "value": change_value})
    body = {"object": "whatsapp_business_account", "entry": [{"id": "1", "changes": changes}]}
    return encoded(body, expected, ensure_ascii=draw(st.booleans())), expected, events


@pytest.fixture
def open_webhooks(settings: Any) -> None:
    settings.WEBHOOK_RATE_LIMIT_PER_MINUTE = 1_000_000
    cache.clear()


@pytest.fixture
def meta_channel(world: Any, open_webhooks: None) -> Any:
    return factories.make_channel(world.org_a, "meta", external_id=META_NUMBER)


@pytest.fixture
def waha_channel(world: Any, open_webhooks: None) -> Any:
    return factories.make_channel(world.org_a, "waha", external_id=WAHA_SESSION)


def _assert_outcome(channel: Any, response: Any, expected: Expected) -> None:
    assert response.status_code < 500, response.content
    if expected.stored:
        assert response.status_code == 200, response.content
    else:
        assert response.status_code == 400, response.content
    stored = set(
        Message.objects.filter(channel=channel).values_list("provider_message_id", flat=True)
    )
    assert set(expected.stored) <= stored
    for prefix in expected.refused:
        assert not Message.objects.filter(provider_message_id__startswith=prefix).exists()
    for message in Message.objects.filter(channel=channel):
        assert storable(message.body) and storable(message.provider_message_id)


@FUZZ
@given(delivery=meta_delivery())
def test_meta_fuzzed_deliveries_never_5xx_and_keep_every_valid_message(meta_channel, delivery):
    body, expected, events = delivery

    response = meta_post(meta_channel, body)

    _assert_outcome(meta_channel, response, expected)
    if response.status_code == 200:
        answer = response.json()
        refused = events - len(expected.stored)
        assert answer["stored"] + answer["duplicates"] == len(expected.stored)
        assert answer.get("rejected", 0) == refused


# -- WAHA -----------------------------------------------------------------------------------

WAHA_FLAVORS = [
    "good",
    "nasty_text",
    "nasty_id",
    "long_id",
    "long_lid",
    "wrong_session",
    "not_object",
]


@st.composite
def waha_delivery(draw: st.DrawFn) -> tuple[bytes, Expected]:
    flavor = draw(st.sampled_from(WAHA_FLAVORS))
    tag = token()
    message_id = f"false_{tag}@lid_3EB0"
    event = waha_message(message_id)
    payload = event["payload"]
    expected = Expected()
    if flavor == "nasty_text":
        payload["body"] = draw(nasty_text)
        payload["_data"]["Info"]["PushName"] = draw(nasty_text)
    elif flavor == "nasty_id":
        payload["id"] = message_id = f"false_{tag}{draw(nasty_text)}"
    elif flavor == "long_id":
        payload["id"] = message_id = f"false_{tag}" + "x" * draw(st.integers(180, 400))
    elif flavor == "long_lid":
        payload["from"] = "1" * draw(st.integers(70, 150)) + "@lid"
        payload["_data"] = {}
    elif flavor == "wrong_session":
        event["session"] = draw(st.sampled_from(["default", "outra", "", "WAPI"]))
    elif flavor == "not_object":
        event["payload"] = draw(st.one_of(st.integers(), nasty_text, st.none()))
    refused = flavor in ("long_lid", "wrong_session", "not_object") or len(message_id) > 200
    if refused:
        expected.refused.append(f"false_{tag}")
    else:
        expected.stored.append(message_id)
    return encoded(event, expected, ensure_ascii=draw(st.booleans())), expected


@FUZZ
@given(delivery=waha_delivery())
def test_waha_fuzzed_events_never_5xx_and_store_only_this_sessions_valid_ones(
    waha_channel, delivery
):
    body, expected = delivery

    response = waha_post(waha_channel, body)

    _assert_outcome(waha_channel, response, expected)


# -- simulator ------------------------------------------------------------------------------


@FUZZ
@given(text=nasty_text, name=nasty_text)
def test_simulator_text_and_names_with_poison_characters_never_5xx(
    world, open_webhooks, text, name
):
    tag = token()
    body = json.dumps({"from": "5511988887777", "text": text, "id": tag, "name": name[:100]})

    response = Client().post(
        f"/webhooks/simulator/{world.channel_a.pk}",
        data=body.encode(),
        content_type="application/json",
        HTTP_X_SIMULATOR_SECRET=world.channel_a.webhook_secret,
    )

    assert response.status_code in (200, 400), response.content
    stored = Message.objects.filter(provider_message_id=tag).first()
    assert (stored is not None) == (response.status_code == 200)
    if stored is not None:
        assert storable(stored.body) and stored.body.strip()
