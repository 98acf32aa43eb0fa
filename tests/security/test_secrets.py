"""Channel credentials and API keys never reach a page, an API response, a log line or an
audit diff; logs carry ids, never the customer's words."""

from __future__ import annotations

import json
import logging

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.logging import JsonFormatter, RequestIdFilter
from accounts.models import AuditLog
from accounts.services import MASK, mask_secrets
from conversation import dispatch
from conversation.models import ChannelSession, Message
from conversation.services import channel_create
from tests.security.conftest import client_for
from tests.security.routes import ROUTES, covered_routes, request
from tests.security.tenant_data import TenantData

API_TOKEN = "tok-SEGREDO-9f8e7d6c5b4a"
WEBHOOK_SECRET = "whs-SEGREDO-1a2b3c4d5e6f"
VERIFY_TOKEN = "vtk-SEGREDO-6f5e4d3c2b1a"
ANTHROPIC_KEY = "sk-ant-SEGREDO-0011223344"
CUSTOMER_TEXT = "meu cartao final 4321 PRIVADO"
SECRETS = (API_TOKEN, WEBHOOK_SECRET, VERIFY_TOKEN, ANTHROPIC_KEY)


@pytest.fixture
def secret_channel(tenants: TenantData) -> ChannelSession:
    channel = channel_create(
        organization=tenants.org("A"),
        name="Canal com segredo",
        provider="simulator",
        actor=tenants.user("A", "admin"),
        api_token=API_TOKEN,
        webhook_secret=WEBHOOK_SECRET,
        webhook_verify_token=VERIFY_TOKEN,
        api_base_url="https://waha.example",
        agent=tenants.row("A", "conversation.Agent"),
    )
    # The tenant rows point at this channel, so every page about them can show it.
    tenants.rows["A"]["conversation.ChannelSession"] = channel
    return channel


def _crawl(tenants: TenantData, client: Client) -> dict[str, str]:
    pages = {}
    for route in covered_routes():
        rule = ROUTES[route.name]
        if "GET" not in rule.methods:
            continue
        query = rule.query(tenants, "A") if rule.query else None
        response = request(client, route, "GET", route.url(tenants, "A"), query)
        pages[route.name] = response.content.decode(errors="replace")
    return pages


def test_no_page_or_api_response_shows_a_credential(tenants, secret_channel, settings):
    settings.ANTHROPIC_API_KEY = ANTHROPIC_KEY
    pages = _crawl(tenants, client_for(tenants.user("A", "admin")))
    assert len(pages) >= 20
    leaks = [(name, s) for name, page in pages.items() for s in SECRETS if s in page]
    assert not leaks, leaks
    assert any(secret_channel.name in page for page in pages.values())  # the channel is shown


def test_the_django_admin_shows_no_credential_either(tenants, secret_channel, settings):
    settings.ANTHROPIC_API_KEY = ANTHROPIC_KEY
    staff = tenants.user("A", "admin")
    get_user_model().objects.filter(pk=staff.pk).update(is_staff=True, is_superuser=True)
    client = client_for(staff)
    urls = [
        "/admin/conversation/channelsession/",
        f"/admin/conversation/channelsession/{secret_channel.pk}/change/",
        "/admin/accounts/auditlog/",
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        body = response.content.decode()
        assert not [s for s in SECRETS if s in body], url


def test_audit_diffs_mask_credentials(tenants, secret_channel):
    row = AuditLog.objects.get(action="channel.create", resource_id=str(secret_channel.pk))
    dumped = json.dumps(row.diff)
    assert all(secret not in dumped for secret in (API_TOKEN, WEBHOOK_SECRET, VERIFY_TOKEN))
    assert row.diff["api_token"] == MASK and row.diff["webhook_secret"] == MASK
    assert row.diff["webhook_verify_token"] == MASK


def test_masking_reaches_nested_and_listed_secrets():
    masked = mask_secrets(
        {"config": {"Authorization_Token": "x", "items": [{"client_secret": "y"}]}, "ok": 1}
    )
    assert masked == {
        "config": {"Authorization_Token": MASK, "items": [{"client_secret": MASK}]},
        "ok": 1,
    }


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.setFormatter(JsonFormatter())
        self.addFilter(RequestIdFilter())
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def test_logs_of_a_whole_turn_carry_ids_not_text_or_credentials(
    tenants, secret_channel, django_capture_on_commit_callbacks, settings
):
    settings.ANTHROPIC_API_KEY = ""  # the offline model answers: no network in tests
    handler = _Collect()
    root = logging.getLogger()
    previous_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            response = Client().post(
                f"/webhooks/simulator/{secret_channel.pk}",
                data=json.dumps({"from": "5511966665555", "text": CUSTOMER_TEXT, "id": "s-1"}),
                content_type="application/json",
                HTTP_X_SIMULATOR_SECRET=WEBHOOK_SECRET,
            )
        dispatch.run_delayed()
    finally:
        root.removeHandler(handler)
        root.setLevel(previous_level)
    assert response.status_code == 200
    message = Message.objects.get(provider_message_id="s-1")
    assert message.turn_id is not None  # the turn really ran
    text = "\n".join(handler.lines)
    assert str(message.pk) in text  # logs name the message by id...
    assert CUSTOMER_TEXT not in text  # ...never by its words
    assert not [s for s in SECRETS if s in text]
