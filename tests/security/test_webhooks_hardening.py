"""Webhooks: the channel in the URL is the only thing that names an organization; secrets
are compared in constant time; redeliveries store once; a channel's budget answers 429
(and a flood of bad signatures cannot spend the real provider's); bodies are capped
before they are read; every refusal speaks the error envelope."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from accounts import rls
from conversation import inbound, webhooks
from conversation.channels import _parsing
from conversation.models import ChannelSession, Contact, Conversation, Message
from tests.security.tenant_data import TenantData

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "whatsapp"
SECRET = "segredo-do-webhook-de-teste"


def _channel(tenants: TenantData, tag: str, provider: str = "simulator") -> ChannelSession:
    channel = tenants.row(tag, "conversation.ChannelSession")
    ChannelSession.objects.filter(pk=channel.pk).update(
        provider=provider, webhook_secret=SECRET, is_active=True
    )
    channel.refresh_from_db()
    return channel


def _simulator(channel: Any, payload: dict[str, Any], secret: str = SECRET, **extra: Any) -> Any:
    return Client().post(
        f"/webhooks/simulator/{channel.pk}",
        data=json.dumps(payload),
        content_type="application/json",
        HTTP_X_SIMULATOR_SECRET=secret,
        **extra,
    )


def _meta(channel: Any, body: bytes, secret: str = SECRET) -> Any:
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return Client().post(
        f"/webhooks/meta/{channel.pk}",
        data=body,
        content_type="application/json",
        HTTP_X_HUB_SIGNATURE_256=f"sha256={digest}",
    )


def _waha(channel: Any, body: bytes, secret: str = SECRET) -> Any:
    digest = hmac.new(secret.encode(), body, hashlib.sha512).hexdigest()
    return Client().post(
        f"/webhooks/waha/{channel.pk}",
        data=body,
        content_type="application/json",
        HTTP_X_WEBHOOK_HMAC=digest,
        HTTP_X_WEBHOOK_HMAC_ALGORITHM="sha512",
    )


def _counts(org: Any) -> tuple[int, int, int]:
    return (
        Message.objects.filter(organization=org).count(),
        Contact.objects.filter(organization=org).count(),
        Conversation.objects.filter(organization=org).count(),
    )


def test_a_payload_naming_another_organization_changes_nothing_there(tenants):
    channel_a = _channel(tenants, "A")
    org_b, channel_b = tenants.org("B"), _channel(tenants, "B")
    before = _counts(tenants.org("A")), _counts(org_b)
    payload = {
        "from": "5511977776666",
        "text": "oi",
        "id": "msg-naming-b",
        "organization_id": str(org_b.pk),
        "channel_id": str(channel_b.pk),
    }
    response = _simulator(channel_a, payload)
    # The simulator's format is closed: fields it does not know are refused outright.
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "unknown_field"
    assert (_counts(tenants.org("A")), _counts(org_b)) == before


def test_a_waha_event_naming_another_organization_is_stored_in_the_urls_channel(tenants):
    channel_a = _channel(tenants, "A", "waha")
    org_b, channel_b = tenants.org("B"), _channel(tenants, "B", "waha")
    message = json.loads((FIXTURES / "waha" / "composed_message_any_gows_lid.json").read_text())
    message.update(organization_id=str(org_b.pk), channel_id=str(channel_b.pk))
    # The session must be the URL channel's own (a session naming another number is refused:
    # tests/channels/test_webhook_payloads.py); the ids naming B are what is under test here.
    message["session"] = channel_a.external_id
    before_b = _counts(org_b)
    response = _waha(channel_a, json.dumps(message).encode())
    assert response.status_code == 200, response.content
    assert response.json()["stored"] == 1
    assert _counts(org_b) == before_b
    stored = Message.objects.get(provider_message_id=message["payload"]["id"])
    assert (stored.organization_id, stored.channel_id) == (tenants.org("A").pk, channel_a.pk)


def test_a_meta_payload_carrying_another_channels_number_is_refused_and_stores_nothing(
    tenants,
):
    channel_a = _channel(tenants, "A", "meta")
    channel_b = _channel(tenants, "B", "meta")
    ChannelSession.objects.filter(pk=channel_b.pk).update(external_id="109876543210")
    body = json.loads((FIXTURES / "meta" / "pywa_fixture_updates_message.json").read_text())
    body = body["text"]
    body["entry"][0]["changes"][0]["value"]["metadata"]["phone_number_id"] = "109876543210"
    before = _counts(tenants.org("A")), _counts(tenants.org("B"))
    response = _meta(channel_a, json.dumps(body).encode())
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "wrong_channel"
    assert (_counts(tenants.org("A")), _counts(tenants.org("B"))) == before


def test_another_organizations_channel_does_not_accept_this_ones_secret(tenants):
    _channel(tenants, "A")
    channel_b = tenants.row("B", "conversation.ChannelSession")
    ChannelSession.objects.filter(pk=channel_b.pk).update(webhook_secret="outro-segredo")
    before_b = _counts(tenants.org("B"))
    response = _simulator(channel_b, {"from": "5511977776666", "text": "oi", "id": "x-b"})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_signature"
    assert _counts(tenants.org("B")) == before_b


def test_the_webhook_works_inside_the_channels_organization_only(tenants, monkeypatch):
    channel_a = _channel(tenants, "A")
    seen = []
    real = inbound.webhook_receive

    def spy(**kwargs: Any) -> Any:
        seen.append(rls.current_organization_id())
        return real(**kwargs)

    monkeypatch.setattr(webhooks, "webhook_receive", spy)
    response = _simulator(channel_a, {"from": "5511977776666", "text": "oi", "id": "ctx-1"})
    assert response.status_code == 200
    assert seen == [tenants.org("A").pk]


@pytest.mark.parametrize("provider", ["simulator", "meta", "waha"])
def test_secrets_are_compared_in_constant_time(tenants, monkeypatch, provider):
    channel = _channel(tenants, "A", provider)
    calls = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((type(a), type(b)))
        return real(a, b)

    monkeypatch.setattr(_parsing.hmac, "compare_digest", spy)
    body = b'{"any": "body"}'
    post = {"simulator": lambda: _simulator(channel, {}, secret="errado"), "meta": None}
    if provider == "simulator":
        response = post["simulator"]()
    elif provider == "meta":
        response = _meta(channel, body, secret="errado")
    else:
        response = _waha(channel, body, secret="errado")
    assert response.status_code == 401
    assert calls == [(bytes, bytes)]


def test_a_replayed_signed_event_is_stored_once(tenants):
    channel = _channel(tenants, "A", "meta")
    fixture = json.loads((FIXTURES / "meta" / "pywa_fixture_updates_message.json").read_text())
    number = fixture["text"]["entry"][0]["changes"][0]["value"]["metadata"]["phone_number_id"]
    ChannelSession.objects.filter(pk=channel.pk).update(external_id=number)
    body = json.dumps(fixture["text"]).encode()
    before = Message.objects.filter(channel=channel).count()
    first, second = _meta(channel, body), _meta(channel, body)
    assert (first.status_code, second.status_code) == (200, 200)
    assert (first.json()["stored"], second.json()["duplicates"]) == (1, 1)
    assert Message.objects.filter(channel=channel).count() == before + 1


def test_a_flood_of_bad_signatures_is_throttled_without_spending_the_real_budget(
    tenants, settings, monkeypatch, one_rate_window
):
    channel = _channel(tenants, "A")
    settings.WEBHOOK_RATE_LIMIT_PER_MINUTE = 2
    monkeypatch.setattr(webhooks, "BAD_SIGNATURES_PER_MINUTE", 3)
    bad = [_simulator(channel, {}, secret="errado").status_code for _ in range(5)]
    good = [
        _simulator(channel, {"from": "5511977776666", "text": "oi", "id": f"g{i}"}).status_code
        for i in range(3)
    ]
    assert bad == [401, 401, 401, 429, 429]
    assert good == [200, 200, 429]


def test_a_declared_length_over_the_cap_is_refused_before_reading_the_body(tenants, settings):
    channel = _channel(tenants, "A")
    settings.WEBHOOK_MAX_BODY_BYTES = 1000

    class Unreadable(io.RawIOBase):
        def read(self, *args: Any) -> bytes:
            raise AssertionError("the body must not be read")

    response = Client().generic(
        "POST",
        f"/webhooks/simulator/{channel.pk}",
        data=b"",
        content_type="application/json",
        HTTP_X_SIMULATOR_SECRET=SECRET,
        CONTENT_LENGTH="5000",
        **{"wsgi.input": Unreadable()},
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"


def test_the_cap_never_exceeds_djangos_own_upload_limit(settings):
    settings.WEBHOOK_MAX_BODY_BYTES = 10_000_000
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    assert webhooks.body_cap() == 2048


def test_a_body_longer_than_its_declared_length_is_read_no_further_than_the_cap():
    class Request:
        META = {"CONTENT_LENGTH": "10"}

        def __init__(self) -> None:
            self.asked: list[int] = []

        def read(self, n: int) -> bytes:
            self.asked.append(n)
            return b"x" * n

    request = Request()
    assert webhooks.read_capped_body(request, 100) is None  # type: ignore[arg-type]
    assert request.asked == [101]
    request.META = {"CONTENT_LENGTH": "nope"}
    assert webhooks.read_capped_body(request, 100) is None  # type: ignore[arg-type]


def test_refusals_speak_the_error_envelope(tenants):
    channel = _channel(tenants, "A")
    put = Client().put(f"/webhooks/simulator/{channel.pk}", data=b"{}")
    unknown = Client().post(
        f"/webhooks/simulator/{uuid.uuid4()}", data=b"{}", content_type="application/json"
    )
    wrong_provider = Client().post(
        f"/webhooks/telegram/{channel.pk}", data=b"{}", content_type="application/json"
    )
    malformed = _simulator(channel, {"from": "5511977776666"})
    not_json = Client().post(
        f"/webhooks/simulator/{channel.pk}",
        data=b"\xff\xfe<not json>",
        content_type="application/json",
        HTTP_X_SIMULATOR_SECRET=SECRET,
    )
    results = {
        "put": (put.status_code, put.json()["error"]["code"]),
        "unknown": (unknown.status_code, unknown.json()["error"]["code"]),
        "provider": (wrong_provider.status_code, wrong_provider.json()["error"]["code"]),
        "malformed": (malformed.status_code, malformed.json()["error"]["code"]),
        "not_json": (not_json.status_code, "code" in not_json.json()["error"]),
    }
    assert results == {
        "put": (405, "method_not_allowed"),
        "unknown": (404, "channel_not_found"),
        "provider": (404, "channel_not_found"),
        "malformed": (400, "missing_field"),
        "not_json": (400, True),
    }
    assert put["Allow"] == "GET, POST"
