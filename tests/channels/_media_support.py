"""Fixtures of the media/receipt/template tests (tests/fixtures/channels, see SOURCE.md)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from tests import factories

from ._support import strip_jsonc

CHANNEL_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "channels"
META_NUMBER = "1122334455667"
GRAPH = "https://graph.facebook.com/v21.0"
WAHA_URL = "http://waha.internal:3000"


def load(name: str) -> Any:
    text = (CHANNEL_FIXTURES / name).read_text(encoding="utf-8")
    return json.loads(strip_jsonc(text) if name.endswith(".jsonc") else text)


def meta_case(case: str, *, message_id: str | None = None, number: str = META_NUMBER) -> Any:
    """One recorded Cloud API update (a full webhook body), addressed to ``number``."""
    body = copy.deepcopy(load("meta_updates_message.json")[case])
    value = body["entry"][0]["changes"][0]["value"]
    value["metadata"]["phone_number_id"] = number
    if message_id is not None:
        value["messages"][0]["id"] = message_id
    return body


def meta_agent_channel(world: Any) -> Any:
    """A Cloud API channel of org A answered by its agent, at the recorded payloads' number."""
    return factories.make_channel(
        world.org_a,
        "meta",
        agent=world.agent_a,
        external_id=META_NUMBER,
        api_token="EAAG-token",
        webhook_secret="app-secret",
    )


def meta_message(case: str) -> dict[str, Any]:
    return meta_case(case)["entry"][0]["changes"][0]["value"]["messages"][0]


def waha_media_event(*, session: str = "default", message_id: str | None = None) -> Any:
    event = load("waha_event_message_with_media.jsonc")
    event["session"] = session
    if message_id is not None:
        event["payload"]["id"] = message_id
    return event


def schema(name: str) -> dict[str, Any]:
    return load("waha_openapi_media_subset.json")["components"]["schemas"][name]


def assert_matches_schema(body: dict[str, Any], name: str) -> None:
    """The request body carries every required key of the WAHA schema, and no key the
    schema does not know (nested ``RemoteFile`` checked too)."""
    spec = schema(name)
    assert set(spec["required"]) <= set(body), (name, body)
    assert set(body) <= set(spec["properties"]), (name, body)
    if "file" in body:
        remote = schema("BinaryFile" if "data" in body["file"] else "RemoteFile")
        assert set(remote.get("required", [])) <= set(body["file"])
        assert set(body["file"]) <= set(remote["properties"])
