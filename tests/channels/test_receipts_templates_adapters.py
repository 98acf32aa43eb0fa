"""Read receipts, typing and templates in the adapters, pure (no Django), against the
providers' request formats (respx at the HTTP level)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import respx

from conversation.channels.base import ChannelConfig, SendError, TemplateInfo
from conversation.channels.meta import MetaAdapter
from conversation.channels.meta_api import template_info
from conversation.channels.waha import WahaAdapter

from ._media_support import GRAPH, META_NUMBER, WAHA_URL, assert_matches_schema, load

META = ChannelConfig(
    provider="meta",
    external_id=META_NUMBER,
    api_token="EAAG-secret-token",
    extra={"business_account_id": "102290129340398"},
)
WAHA = ChannelConfig(
    provider="waha", external_id="default", api_base_url=WAHA_URL, api_token="waha-key"
)


@respx.mock
def test_meta_marks_read_with_the_typing_indicator():
    route = respx.post(f"{GRAPH}/{META_NUMBER}/messages").respond(200, json={"success": True})

    MetaAdapter().mark_read(META, to="5511988887777", message_id="wamid.IN1", typing=True)

    assert json.loads(route.calls.last.request.content) == {
        "messaging_product": "whatsapp",
        "status": "read",
        "message_id": "wamid.IN1",
        "typing_indicator": {"type": "text"},
    }
    assert route.calls.last.request.headers["Authorization"] == "Bearer EAAG-secret-token"


@respx.mock
def test_meta_stop_typing_makes_no_request():
    # Meta ends the indicator itself when the reply is sent.
    MetaAdapter().stop_typing(META, to="5511988887777")

    assert not respx.calls


@respx.mock
def test_waha_sends_seen_in_the_documented_shape_then_starts_typing():
    seen = respx.post(f"{WAHA_URL}/api/sendSeen").respond(201, json={})
    typing = respx.post(f"{WAHA_URL}/api/startTyping").respond(201, json={})

    WahaAdapter().mark_read(
        WAHA, to="11111111111", message_id="false_11111111111@c.us_A", typing=True
    )

    body = json.loads(seen.calls.last.request.content)
    documented = load("waha_sendSeen_request_body.json")
    assert {k: body[k] for k in documented} == documented  # session + chatId as in the docs
    assert body["messageIds"] == ["false_11111111111@c.us_A"]
    assert_matches_schema(body, "SendSeenRequest")
    start = json.loads(typing.calls.last.request.content)
    assert_matches_schema(start, "ChatRequest")
    assert start == {"session": "default", "chatId": "11111111111@c.us"}
    assert seen.calls.last.request.headers["X-Api-Key"] == "waha-key"


@respx.mock
def test_waha_stop_typing_posts_stop_typing():
    route = respx.post(f"{WAHA_URL}/api/stopTyping").respond(201, json={})

    WahaAdapter().stop_typing(WAHA, to="11111111111")

    assert json.loads(route.calls.last.request.content) == {
        "session": "default",
        "chatId": "11111111111@c.us",
    }


@respx.mock
def test_a_failing_receipt_raises_send_error_for_the_caller_to_swallow():
    respx.post(f"{WAHA_URL}/api/sendSeen").respond(500, json={"message": "boom"})

    with pytest.raises(SendError) as exc:
        WahaAdapter().mark_read(WAHA, to="11111111111", message_id="x", typing=True)
    assert exc.value.retryable is True


# -- templates --------------------------------------------------------------------------------

PAGE_1 = {
    "data": [
        {
            "name": "lembrete_caso",
            "language": "pt_BR",
            "status": "APPROVED",
            "category": "UTILITY",
            "components": [
                {"type": "HEADER", "format": "TEXT", "text": "Aviso"},
                {"type": "BODY", "text": "Olá {{1}}, seu caso {{2}} foi atualizado."},
            ],
            "id": "594425479261596",
        }
    ],
    "paging": {
        "cursors": {"before": "MAZDZD", "after": "MjQZD"},
        "next": f"{GRAPH}/102290129340398/message_templates?after=MjQZD",
    },
}
PAGE_2 = {
    "data": [
        {
            "name": "promo",
            "language": "en_US",
            "status": "REJECTED",
            "category": "MARKETING",
            "components": [{"type": "BODY", "text": "Hi {{name}}! {{name}}"}],
        },
        {"name": "", "language": "pt_BR"},
    ],
    "paging": {"cursors": {"before": "x", "after": "y"}},
}


@respx.mock
def test_meta_lists_templates_across_pages_with_their_languages_and_parameters():
    route = respx.get(f"{GRAPH}/102290129340398/message_templates").mock(
        side_effect=[
            respx.MockResponse(200, json=PAGE_1),
            respx.MockResponse(200, json=PAGE_2),
        ]
    )

    templates = MetaAdapter().list_templates(META)

    assert list(templates) == [
        TemplateInfo(
            name="lembrete_caso",
            language="pt_BR",
            status="APPROVED",
            category="UTILITY",
            body="Olá {{1}}, seu caso {{2}} foi atualizado.",
            parameters=2,
        ),
        TemplateInfo(
            name="promo",
            language="en_US",
            status="REJECTED",
            category="MARKETING",
            body="Hi {{name}}! {{name}}",
            parameters=1,  # a named parameter used twice is one parameter
        ),
    ]
    first = route.calls[0].request
    assert first.url.params["fields"] == "name,language,status,category,components"
    assert first.headers["Authorization"] == "Bearer EAAG-secret-token"
    assert route.calls[1].request.url.params["after"] == "MjQZD"


@respx.mock
def test_meta_template_paging_to_another_host_is_not_followed():
    page = dict(PAGE_1, paging={"next": "https://evil.example.com/steal"})
    respx.get(f"{GRAPH}/102290129340398/message_templates").respond(200, json=page)
    evil = respx.get("https://evil.example.com/steal").respond(200, json=PAGE_2)

    assert len(MetaAdapter().list_templates(META)) == 1
    assert not evil.called


def test_meta_templates_need_the_business_account_id():
    with pytest.raises(SendError) as exc:
        MetaAdapter().list_templates(replace(META, extra={}))
    assert exc.value.code == "invalid_config"


def test_waha_has_no_templates():
    with pytest.raises(SendError) as exc:
        WahaAdapter().list_templates(WAHA)
    assert exc.value.code == "unsupported"


@respx.mock
def test_meta_sends_a_template_in_its_own_language_with_every_parameter():
    route = respx.post(f"{GRAPH}/{META_NUMBER}/messages").respond(
        200, json={"messages": [{"id": "wamid.T1"}]}
    )

    MetaAdapter().send_template(
        META,
        to="5511988887777",
        template_name="lembrete_caso",
        language="en_US",
        parameters=["Ana", "#123"],
    )

    assert json.loads(route.calls.last.request.content)["template"] == {
        "name": "lembrete_caso",
        "language": {"code": "en_US"},
        "components": [
            {
                "type": "body",
                "parameters": [{"type": "text", "text": "Ana"}, {"type": "text", "text": "#123"}],
            }
        ],
    }


def test_template_info_skips_entries_without_a_name():
    assert template_info({"language": "pt_BR"}) is None
    assert template_info("x") is None
