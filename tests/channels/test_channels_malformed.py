"""Whatever arrives at a webhook, ``parse_webhook`` returns a ParsedWebhook or raises WebhookError.

A malformed body raises; a malformed event inside a well-formed body is a ``rejected`` entry.

Three generators: raw bytes, arbitrary JSON documents, and the real fixtures with one value
anywhere in the tree replaced by arbitrary JSON (the inputs most likely to reach deep code).
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conversation.channels import get_adapter
from conversation.channels.base import ChannelAdapter, ParsedWebhook, WebhookError

from ._support import load_fixture

ADAPTERS = [get_adapter(name) for name in ("waha", "meta", "simulator")]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=25,
)

SEED_DOCUMENTS: list[Any] = [
    load_fixture("waha/composed_message_lid_noweb_with_alt.json"),
    load_fixture("waha/composed_message_any_gows_lid.json"),
    load_fixture("waha/event_message_full_webjs_docs2023.json"),
    load_fixture("waha/event_message_with_media.jsonc"),
    load_fixture("waha/event_message_ack.json"),
    load_fixture("meta/pywa_fixture_updates_message.json")["contacts"],
    load_fixture("meta/pywa_fixture_updates_message.json")["reaction"],
    load_fixture("meta/pywa_fixture_updates_message.json")["chosen_location"],
    load_fixture("meta/pywa_fixture_updates_message_status.json")["failed"],
    load_fixture("meta/pywa_fixture_updates_callback_button.json")["button"],
    {"from": "5511988887777", "name": "Maria", "text": "Oi", "id": "c-1", "reply_to": None},
]


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


@st.composite
def mutated_documents(draw: st.DrawFn) -> bytes:
    document = copy.deepcopy(draw(st.sampled_from(SEED_DOCUMENTS)))
    path = draw(st.sampled_from(_paths(document)))
    replacement = draw(json_values)
    if not path:
        return json.dumps(replacement).encode()
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    if draw(st.booleans()) and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = replacement
    return json.dumps(document).encode()


def _assert_parses_or_rejects_cleanly(adapter: ChannelAdapter, body: bytes) -> None:
    try:
        parsed = adapter.parse_webhook(body)
    except WebhookError as exc:
        assert exc.code and isinstance(exc.code, str)
        assert exc.message
        return
    assert isinstance(parsed, ParsedWebhook)
    for rejected in parsed.rejected:
        assert rejected.code and rejected.reason and rejected.where
    for item in (*parsed.messages, *parsed.statuses):
        assert item.provider_message_id
        assert item.timestamp.utcoffset() == timedelta(0)
        assert item.timestamp.tzinfo is UTC
    for message in parsed.messages:
        assert isinstance(message.body, str) and message.from_phone


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.provider)
@FUZZ
@given(body=st.binary(max_size=300))
def test_parse_webhook_survives_arbitrary_bytes(adapter, body):
    _assert_parses_or_rejects_cleanly(adapter, body)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.provider)
@FUZZ
@given(document=json_values)
def test_parse_webhook_survives_arbitrary_json(adapter, document):
    _assert_parses_or_rejects_cleanly(adapter, json.dumps(document).encode())


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.provider)
@FUZZ
@given(body=mutated_documents())
def test_parse_webhook_survives_mutated_real_payloads(adapter, body):
    _assert_parses_or_rejects_cleanly(adapter, body)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.provider)
@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"", "invalid_json"),
        (b"not json", "invalid_json"),
        (b"\xff\xfe\x00garbage", "invalid_json"),
        (b"[" * 100_000, "invalid_json"),  # nesting deep enough to blow the recursion limit
        (b"[]", "invalid_payload"),
        (b'"text"', "invalid_payload"),
        (b"null", "invalid_payload"),
    ],
)
def test_parse_webhook_rejects_non_objects_with_a_code(adapter, body, code):
    with pytest.raises(WebhookError) as caught:
        adapter.parse_webhook(body)

    assert caught.value.code == code


@pytest.mark.parametrize(
    ("adapter_name", "document", "code"),
    [
        ("waha", {"session": "default", "payload": {}}, "missing_event"),
        ("waha", {"event": "message", "payload": []}, "invalid_payload"),
        (
            "waha",
            {"event": "message", "payload": {"from": "5511988887777@c.us", "timestamp": 1}},
            "missing_id",
        ),
        ("waha", {"event": "message", "payload": {"id": "x", "timestamp": 1}}, "missing_sender"),
        (
            "waha",
            {"event": "message", "payload": {"id": "x", "from": "5511988887777@c.us"}},
            "invalid_timestamp",
        ),
        (
            "waha",
            {
                "event": "message",
                "payload": {"id": "x", "from": "5511988887777@c.us", "timestamp": 1e30},
            },
            "invalid_timestamp",
        ),
        (
            "waha",
            {"event": "message", "payload": {"id": "x", "from": "abc@c.us", "timestamp": 1}},
            "invalid_sender",
        ),
        ("waha", {"event": "message.ack", "payload": {"ack": 3}}, "missing_id"),
        ("meta", {"object": "whatsapp_business_account"}, "invalid_payload"),
        (
            "meta",
            {"entry": [{"changes": [{"field": "messages", "value": {"messages": [{}]}}]}]},
            "missing_id",
        ),
        (
            "meta",
            {
                "entry": [
                    {
                        "changes": [
                            {
                                "value": {
                                    "statuses": [{"id": "w", "status": "read", "timestamp": "soon"}]
                                }
                            }
                        ]
                    }
                ]
            },
            "invalid_timestamp",
        ),
    ],
)
def test_parse_webhook_explains_wrong_shapes(adapter_name, document, code):
    body = json.dumps(document).encode()
    try:
        parsed = get_adapter(adapter_name).parse_webhook(body)
    except WebhookError as exc:
        assert exc.code == code
        return
    # A wrong event inside a well-formed body: refused on its own, with the same code.
    assert (parsed.accepted, [r.code for r in parsed.rejected]) == (0, [code])
