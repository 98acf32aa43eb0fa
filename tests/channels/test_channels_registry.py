from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import httpx
import pytest

from conversation.channels import PROVIDERS, UnknownProviderError, get_adapter, transport
from conversation.channels.base import ChannelConfig, SendError, service_window_open
from conversation.channels.meta import MetaAdapter
from conversation.channels.simulator import SimulatorAdapter
from conversation.channels.waha import WahaAdapter

from ._support import FIXED_NOW


@pytest.mark.parametrize(
    ("provider", "cls", "enforces_window"),
    [
        ("waha", WahaAdapter, False),
        ("meta", MetaAdapter, True),
        ("simulator", SimulatorAdapter, False),
    ],
)
def test_get_adapter_returns_the_provider_adapter(provider, cls, enforces_window):
    adapter = get_adapter(provider)

    assert isinstance(adapter, cls)
    assert adapter.provider == provider
    assert adapter.enforces_service_window is enforces_window


def test_registry_lists_every_provider():
    assert set(PROVIDERS) == {"waha", "meta", "simulator"}


@pytest.mark.parametrize("provider", ["", "WAHA", "twilio", None])
def test_get_adapter_rejects_unknown_providers(provider):
    with pytest.raises(UnknownProviderError, match="unknown channel provider"):
        get_adapter(provider)


def test_unknown_provider_error_is_a_value_error():
    with pytest.raises(ValueError):
        get_adapter("telegram")


# -- the service window ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("last_inbound_at", "is_open"),
    [
        (None, False),
        (FIXED_NOW - timedelta(hours=24), False),
        (FIXED_NOW - timedelta(hours=24) + timedelta(seconds=1), True),
        (FIXED_NOW, True),
        (FIXED_NOW + timedelta(minutes=5), True),  # clock skew: the customer just wrote
        # Same instant in another zone: still 1 hour ago.
        ((FIXED_NOW - timedelta(hours=1)).astimezone(timezone(timedelta(hours=-3))), True),
    ],
)
def test_service_window_is_open_for_24_hours_after_the_last_inbound(last_inbound_at, is_open):
    assert service_window_open(last_inbound_at, FIXED_NOW) is is_open


def test_service_window_refuses_naive_datetimes():
    with pytest.raises(ValueError, match="timezone-aware"):
        service_window_open(datetime(2026, 3, 10, 11, 0), FIXED_NOW)


# -- the HTTP choke point ----------------------------------------------------------------


def test_build_client_uses_the_documented_timeouts():
    with transport.build_client() as client:
        timeout = client.timeout

    assert (timeout.connect, timeout.read) == (5.0, 15.0)


def test_adapters_send_through_the_patchable_client_factory(monkeypatch):
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(201, json={"id": "true_5511988887777@c.us_ABC"})

    monkeypatch.setattr(
        transport, "build_client", lambda: httpx.Client(transport=httpx.MockTransport(handler))
    )
    config = ChannelConfig(provider="waha", external_id="default", api_base_url="http://waha:3000")

    result = get_adapter("waha").send_text(
        config, to="5511988887777", body="Oi", last_inbound_at=None, now=datetime.now(UTC)
    )

    assert result.provider_message_id == "true_5511988887777@c.us_ABC"
    (request,) = seen
    assert str(request.url) == "http://waha:3000/api/sendText"
    assert "X-Api-Key" not in request.headers  # no key configured: none sent
    assert json.loads(request.content)["chatId"] == "5511988887777@c.us"


def test_invalid_api_url_is_a_permanent_configuration_error():
    config = ChannelConfig(provider="waha", external_id="default", api_base_url="ftp://waha")

    with pytest.raises(SendError) as caught:
        get_adapter("waha").send_text(
            config, to="5511988887777", body="Oi", last_inbound_at=None, now=FIXED_NOW
        )

    assert (caught.value.code, caught.value.retryable) == ("invalid_config", False)
