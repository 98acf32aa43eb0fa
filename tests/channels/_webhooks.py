"""Signed provider deliveries to the real webhook view, built from the recorded payloads."""

from __future__ import annotations

import copy
import hashlib
import hmac
from typing import Any

from django.test import Client

from tests import factories

from ._support import load_fixture

META_NUMBER = "1122334455667"  # the recorded payloads' metadata.phone_number_id
WAHA_SESSION = "wapi"  # the GOWS recording's session


def recorded_meta_channel(world: Any) -> Any:
    """Organization A's Meta number of the recorded payloads, with its app secret."""
    return factories.make_channel(
        world.org_a, "meta", external_id=META_NUMBER, webhook_secret="app-secret"
    )


def recorded_waha_channel(world: Any) -> Any:
    """Organization A's WAHA session of the GOWS recording, with its webhook key."""
    return factories.make_channel(world.org_a, "waha", external_id=WAHA_SESSION, webhook_secret="k")


def meta_post(channel: Any, body: bytes, secret: str | None = None) -> Any:
    key = (secret if secret is not None else channel.webhook_secret).encode()
    digest = hmac.new(key, body, hashlib.sha256).hexdigest()
    return Client().post(
        f"/webhooks/meta/{channel.pk}",
        data=body,
        content_type="application/json",
        HTTP_X_HUB_SIGNATURE_256=f"sha256={digest}",
    )


def waha_post(channel: Any, body: bytes, secret: str | None = None) -> Any:
    key = (secret if secret is not None else channel.webhook_secret).encode()
    digest = hmac.new(key, body, hashlib.sha512).hexdigest()
    return Client().post(
        f"/webhooks/waha/{channel.pk}",
        data=body,
        content_type="application/json",
        HTTP_X_WEBHOOK_HMAC=digest,
        HTTP_X_WEBHOOK_HMAC_ALGORITHM="sha512",
    )


def meta_text(message_id: str, sender: str = "5511988887777", body: str = "oi") -> dict[str, Any]:
    """One Cloud API text message, shaped like the recorded ``text`` update."""
    raw = copy.deepcopy(
        load_fixture("meta/pywa_fixture_updates_message.json")["text"]["entry"][0]["changes"][0][
            "value"
        ]["messages"][0]
    )
    raw.update({"id": message_id, "from": sender})
    raw["text"]["body"] = body
    return raw


def meta_body(
    *changes: list[Any], number: str = META_NUMBER, statuses: list[Any] | None = None
) -> dict[str, Any]:
    """A delivery with one change per list of messages, all sent to ``number``."""
    template = load_fixture("meta/pywa_fixture_updates_message.json")["text"]
    entry = template["entry"][0]
    value = entry["changes"][0]["value"]
    out_changes = []
    for messages in changes or ([],):
        change_value = copy.deepcopy(value)
        change_value["metadata"]["phone_number_id"] = number
        change_value["messages"] = messages
        out_changes.append({"field": "messages", "value": change_value})
    if statuses:
        out_changes[0]["value"]["statuses"] = statuses
    return {
        "object": "whatsapp_business_account",
        "entry": [{"id": entry["id"], "changes": out_changes}],
    }


def waha_message(message_id: str, *, session: str = WAHA_SESSION, **payload: Any) -> dict[str, Any]:
    """The recorded GOWS ``message.any`` event with a fresh id (and any payload overrides)."""
    event = load_fixture("waha/composed_message_any_gows_lid.json")
    event["session"] = session
    event["payload"]["id"] = message_id
    event["payload"].update(payload)
    return event


def waha_ack(message_id: str, ack: int, *, session: str = WAHA_SESSION) -> dict[str, Any]:
    event = load_fixture("waha/event_message_ack.json")
    event["session"] = session
    event["payload"].update(id=message_id, ack=ack, fromMe=True)
    event["payload"].pop("ackName", None)
    return event
