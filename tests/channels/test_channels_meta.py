from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import respx

from conversation.channels.base import (
    ChannelConfig,
    OutsideServiceWindow,
    SendError,
    SignatureError,
    WebhookError,
)
from conversation.channels.meta import MetaAdapter, verify_subscription

from ._support import FIXED_NOW, FIXTURES, encode, load_fixture

CONFIG = ChannelConfig(provider="meta", external_id="106540352242922", api_token="EAAG-token")
SEND_URL = "https://graph.facebook.com/v21.0/106540352242922/messages"
OPEN_WINDOW = FIXED_NOW - timedelta(hours=2)
OK_RESPONSE = {
    "messaging_product": "whatsapp",
    "contacts": [{"input": "5511988887777", "wa_id": "5511988887777"}],
    "messages": [{"id": "wamid.HBgLNTUxMTk4ODg4Nzc3NxUCABEYEjk"}],
}

adapter = MetaAdapter()


def _signed_vector() -> tuple[bytes, str, str]:
    body = (FIXTURES / "meta" / "signed_webhook_body.raw.json").read_bytes()
    note = (FIXTURES / "meta" / "signed_webhook_test_vector.txt").read_text().splitlines()
    secret = next(line.split("=", 1)[1] for line in note if line.startswith("app_secret="))
    header = next(
        line.split(":", 1)[1].strip() for line in note if line.startswith("X-Hub-Signature-256:")
    )
    return body, secret, header


# -- signature ---------------------------------------------------------------------------


def test_verify_signature_accepts_the_real_signed_webhook():
    body, secret, header = _signed_vector()

    adapter.verify_signature(headers={"X-Hub-Signature-256": header}, body=body, secret=secret)


def test_verify_signature_rejects_the_real_body_with_one_flipped_byte():
    body, secret, header = _signed_vector()
    tampered = bytearray(body)
    tampered[100] ^= 0x01

    with pytest.raises(SignatureError):
        adapter.verify_signature(
            headers={"X-Hub-Signature-256": header}, body=bytes(tampered), secret=secret
        )


@pytest.mark.parametrize(
    ("header", "secret"),
    [
        pytest.param(lambda h: h.replace("sha256=", ""), None, id="no-scheme"),
        pytest.param(lambda h: h.replace("sha256=", "sha1="), None, id="other-scheme"),
        pytest.param(lambda h: h[:-1] + ("0" if h[-1] != "0" else "1"), None, id="bad-hex"),
        pytest.param(lambda h: "", None, id="missing"),
        pytest.param(lambda h: h, "0" * 32, id="wrong-secret"),
        pytest.param(lambda h: h, "", id="no-secret-configured"),
    ],
)
def test_verify_signature_rejects_bad_headers_and_secrets(header, secret):
    body, real_secret, real_header = _signed_vector()
    value = header(real_header)
    headers = {"X-Hub-Signature-256": value} if value else {}

    with pytest.raises(SignatureError):
        adapter.verify_signature(
            headers=headers, body=body, secret=real_secret if secret is None else secret
        )


def test_verify_signature_reads_the_header_case_insensitively():
    body, secret, header = _signed_vector()

    adapter.verify_signature(headers={"x-hub-signature-256": header}, body=body, secret=secret)


# -- inbound messages --------------------------------------------------------------------


def test_parse_the_real_signed_webhook_text_message():
    body, _, _ = _signed_vector()

    (message,) = adapter.parse_webhook(body).messages

    assert message.provider_message_id.startswith("wamid.HBgMOTcyNTQ0NDAxMjQzFQIAEhgg")
    assert message.from_phone == "972544401243"
    assert message.from_name == "PyWa Tests"
    assert message.body == "Hey there! I am using PyWa."
    assert message.kind == "text"
    assert message.from_me is False
    assert message.timestamp == datetime.fromtimestamp(1730231903, tz=UTC)


EXPECTED_MESSAGES = {
    # case: (kind, body, reply_to)
    "text": ("text", "Body Text", None),
    "image": ("image", "[imagem]", None),
    "media_with_url": ("image", "[imagem]", None),
    "video": ("video", "caption", None),
    "document": ("document", "caption", None),
    "audio": ("audio", "[áudio]", None),
    "voice": ("audio", "[áudio]", None),
    "static_sticker": ("sticker", "[figurinha]", None),
    "animated_sticker": ("sticker", "[figurinha]", None),
    "reaction": ("reaction", "[reação] \U0001f62e", "wamid.yzxyzx="),
    "unreaction_empty": ("reaction", "[reação removida]", "wamid.yzxyzx="),
    "unreaction_no_emoji": ("reaction", "[reação removida]", "wamid.yzxyzx="),
    "current_location": ("location", "[localização] 12.25089, 43.90539", None),
    "chosen_location": (
        "location",
        "[localização] Facebook HQ, 1 Hacker Way, Menlo Park, CA 94025",
        None,
    ),
    # A shared contact keeps its numbers; a cart order its items (someone to call, what was
    # bought: the agent reads the line).
    "contacts": (
        "contacts",
        "[contato] Chandler Bing (+1 555-555-5555), Monica (+1 666-666-6666), "
        "Rachel Green (+1 777-777-7777)",
        None,
    ),
    "order": ("order", "[pedido] 3× HAMBURGER, 2× FRENCH_FRIES, 2× SODA", None),
    "unsupported": ("unsupported", "[mensagem não suportada]", None),
    "unsupported_with_type": ("unsupported", "[mensagem não suportada]", None),
    "reply": ("text", "replied text", "wamid.xyzxyz=="),
    "forwarded": ("text", "forwarded text", None),
    "forwarded_many_times": ("text", "text forwarded many times", None),
    "interactive_message_with_err": ("interactive", "[resposta interativa]", "wamid.gvwegfretge=="),
    "referral": ("text", "BODY", None),
}
MESSAGE_CASES = load_fixture("meta/pywa_fixture_updates_message.json")


def test_every_real_message_case_has_an_expectation():
    assert set(MESSAGE_CASES) == set(EXPECTED_MESSAGES)


@pytest.mark.parametrize("case", sorted(EXPECTED_MESSAGES))
def test_parse_real_message_fixture(case):
    raw = MESSAGE_CASES[case]["entry"][0]["changes"][0]["value"]["messages"][0]

    parsed = adapter.parse_webhook(encode(MESSAGE_CASES[case]))

    assert parsed.statuses == ()
    (message,) = parsed.messages
    assert (message.kind, message.body, message.reply_to) == EXPECTED_MESSAGES[case]
    assert message.provider_message_id == raw["id"]
    assert message.from_phone == "972987654321"
    assert message.from_name == "Test Name"
    assert message.timestamp == datetime.fromtimestamp(int(raw["timestamp"]), tz=UTC)


@pytest.mark.parametrize(
    ("fixture", "case", "expected"),
    [
        ("callback_button", "button", ("interactive", "title", "wamid.xyzxyz")),
        ("callback_button", "quick_reply", ("button", "title", "wamid.xyzxyz==")),
        ("callback_selection", "callback", ("interactive", "title", "wamid.xyzxyz")),
        ("callback_selection", "description", ("interactive", "title", "wamid.xyzxyz")),
    ],
)
def test_parse_real_button_and_list_replies_use_the_chosen_title(fixture, case, expected):
    data = load_fixture(f"meta/pywa_fixture_updates_{fixture}.json")[case]

    (message,) = adapter.parse_webhook(encode(data)).messages

    assert (message.kind, message.body, message.reply_to) == expected


def test_parse_several_messages_and_entries_in_one_delivery():
    first, second = MESSAGE_CASES["text"], MESSAGE_CASES["reply"]
    combined = {"object": "whatsapp_business_account", "entry": first["entry"] + second["entry"]}

    parsed = adapter.parse_webhook(encode(combined))

    assert [m.body for m in parsed.messages] == ["Body Text", "replied text"]


def test_parse_system_notice_is_not_a_customer_message():
    data = load_fixture("meta/pywa_fixture_updates_system.json")["system"]

    assert adapter.parse_webhook(encode(data)).messages == ()


def test_parse_other_webhook_fields_are_ignored():
    data = load_fixture("meta/pywa_fixture_updates_message.json")["text"]
    data["entry"][0]["changes"][0]["field"] = "message_template_status_update"

    parsed = adapter.parse_webhook(encode(data))

    assert (parsed.messages, parsed.statuses) == ((), ())


def test_parse_rejects_a_non_whatsapp_object():
    with pytest.raises(WebhookError) as caught:
        adapter.parse_webhook(encode({"object": "page", "entry": []}))

    assert caught.value.code == "unsupported_object"


def test_parse_message_without_id_is_rejected_on_its_own():
    data = load_fixture("meta/pywa_fixture_updates_message.json")["text"]
    del data["entry"][0]["changes"][0]["value"]["messages"][0]["id"]

    parsed = adapter.parse_webhook(encode(data))

    assert parsed.messages == ()
    assert [(r.code, r.where) for r in parsed.rejected] == [
        ("missing_id", "entry[0].changes[0].value.messages[0]")
    ]


def _batch(*raw_messages: object, statuses: tuple[object, ...] = ()) -> dict[str, object]:
    data = load_fixture("meta/pywa_fixture_updates_message.json")["text"]
    value = data["entry"][0]["changes"][0]["value"]
    value["messages"] = list(raw_messages)
    if statuses:
        value["statuses"] = list(statuses)
    return data


def _text(message_id: object, sender: object = "5511988887777", body: str = "oi") -> dict:
    return {
        "from": sender,
        "id": message_id,
        "timestamp": "1697043223",
        "type": "text",
        "text": {"body": body},
    }


def test_parse_poison_messages_never_block_the_good_ones_of_the_same_body():
    parsed = adapter.parse_webhook(
        encode(
            _batch(
                _text("wamid.GOOD1"),
                _text("w" * 201),  # longer than the id column
                "not an object",
                _text("wamid.PHONE", sender="5" * 65),  # longer than the phone column
                _text("wamid.GOOD2"),
                statuses=({"id": "wamid.S", "status": "read", "timestamp": "never"},),
            )
        )
    )

    assert [m.provider_message_id for m in parsed.messages] == ["wamid.GOOD1", "wamid.GOOD2"]
    assert [r.code for r in parsed.rejected] == [
        "invalid_id",
        "invalid_payload",
        "invalid_sender",
        "invalid_timestamp",
    ]
    # The log keeps a bounded prefix of the id, never the customer's text.
    assert parsed.rejected[0].event_id == "w" * 80


def test_parse_ids_and_phones_at_the_column_limits_are_kept_whole():
    parsed = adapter.parse_webhook(encode(_batch(_text("w" * 200, sender="5" * 64))))

    (message,) = parsed.messages
    assert (len(message.provider_message_id), len(message.from_phone)) == (200, 64)


def test_parse_a_malformed_entry_or_change_is_rejected_alone():
    good = load_fixture("meta/pywa_fixture_updates_message.json")["text"]
    body = {
        "object": "whatsapp_business_account",
        "entry": [42, {"changes": [{"value": []}]}, {"changes": "x"}, *good["entry"]],
    }

    parsed = adapter.parse_webhook(encode(body))

    assert [m.body for m in parsed.messages] == ["Body Text"]
    assert [(r.where, r.code) for r in parsed.rejected] == [
        ("entry[0]", "invalid_payload"),
        ("entry[1].changes[0]", "invalid_payload"),
        ("entry[2]", "invalid_payload"),
    ]


def test_parse_nul_and_lone_surrogates_are_cleaned_from_every_string():
    # json.dumps writes both as \\u escapes, as a provider's JSON encoder would.
    body = json.dumps(_batch(_text("wamid.\u0000NUL", body="o\u0000i \ud83d!"))).encode()
    assert b"\\u0000" in body and b"\\ud83d" in body

    (message,) = adapter.parse_webhook(body).messages

    assert message.provider_message_id == "wamid.NUL"
    assert message.body == "oi \ufffd!"
    message.body.encode("utf-8")  # storable


def test_parse_a_type_longer_than_the_kind_column_is_unsupported():
    raw = _text("wamid.K")
    raw["type"] = "t" * 40

    (message,) = adapter.parse_webhook(encode(_batch(raw))).messages

    assert message.kind == "unsupported"


def test_parse_events_carry_the_phone_number_id_they_were_sent_to():
    data = _batch(_text("wamid.A"), statuses=({"id": "w", "status": "read", "timestamp": "1"},))
    data["entry"][0]["changes"][0]["value"]["metadata"]["phone_number_id"] = 1122334455667

    parsed = adapter.parse_webhook(encode(data))

    assert {e.channel_ref for e in (*parsed.messages, *parsed.statuses)} == {"1122334455667"}
    assert adapter.addresses_channel is True


# -- statuses ----------------------------------------------------------------------------

STATUS_CASES = load_fixture("meta/pywa_fixture_updates_message_status.json")
EXPECTED_STATUSES = {
    "sent": ("wamid.xyzxyz", "sent", 1698266945),
    "delivered": ("wamid.xyzxyz", "delivered", 1698266945),
    "read": ("wamid.xyzxyz", "read", 1689380458),
    "played": ("wamid.xyzxyz", "read", 1689380458),
    "failed": ("wamid.xyzxyz", "failed", 1689380458),
    "with_tracker": ("wamid.xyzxyz", "sent", 1698266945),
    "group": ("<WHATSAPP_MESSAGE_ID>", "read", 1698266945),
}


def test_every_real_status_case_has_an_expectation():
    assert set(STATUS_CASES) == set(EXPECTED_STATUSES)


@pytest.mark.parametrize("case", sorted(EXPECTED_STATUSES))
def test_parse_real_status_fixture(case):
    parsed = adapter.parse_webhook(encode(STATUS_CASES[case]))

    assert parsed.messages == ()
    (status,) = parsed.statuses
    message_id, expected, epoch = EXPECTED_STATUSES[case]
    assert (status.provider_message_id, status.status) == (message_id, expected)
    assert status.timestamp == datetime.fromtimestamp(epoch, tz=UTC)
    assert bool(status.error) is (expected == "failed")


def test_parse_failed_status_carries_code_title_and_details():
    (status,) = adapter.parse_webhook(encode(STATUS_CASES["failed"])).statuses

    assert status.error.startswith("130472: User's number is part of an experiment")
    assert "Failed to send message" in status.error


# -- subscription handshake --------------------------------------------------------------


def test_verify_subscription_echoes_the_challenge():
    query = {"hub.mode": "subscribe", "hub.verify_token": "s3cret", "hub.challenge": "1158201444"}

    assert verify_subscription(query, verify_token="s3cret") == "1158201444"


@pytest.mark.parametrize(
    ("query", "token", "error"),
    [
        (
            {"hub.mode": "subscribe", "hub.verify_token": "nope", "hub.challenge": "1"},
            "s3cret",
            SignatureError,
        ),
        (
            {"hub.mode": "unsubscribe", "hub.verify_token": "s3cret", "hub.challenge": "1"},
            "s3cret",
            SignatureError,
        ),
        ({"hub.mode": "subscribe", "hub.challenge": "1"}, "s3cret", SignatureError),
        (
            {"hub.mode": "subscribe", "hub.verify_token": "", "hub.challenge": "1"},
            "",
            SignatureError,
        ),
        ({"hub.mode": "subscribe", "hub.verify_token": "s3cret"}, "s3cret", WebhookError),
    ],
)
def test_verify_subscription_refuses_wrong_requests(query, token, error):
    with pytest.raises(error):
        verify_subscription(query, verify_token=token)


# -- outbound ----------------------------------------------------------------------------


def _send_text(**kwargs):
    params = {
        "to": "+55 11 98888-7777",
        "body": "Olá! Como posso ajudar?",
        "last_inbound_at": OPEN_WINDOW,
        "now": FIXED_NOW,
    }
    params.update(kwargs)
    config = params.pop("config", CONFIG)
    return adapter.send_text(config, **params)


def test_send_text_posts_the_cloud_api_request():
    with respx.mock:
        route = respx.post(SEND_URL).respond(200, json=OK_RESPONSE)
        result = _send_text()

    request = route.calls.last.request
    assert str(request.url) == SEND_URL
    assert request.headers["Authorization"] == "Bearer EAAG-token"
    assert request.headers["Content-Type"] == "application/json"
    assert json.loads(request.content) == {
        "messaging_product": "whatsapp",
        "to": "5511988887777",
        "type": "text",
        "text": {"body": "Olá! Como posso ajudar?"},
    }
    assert (result.provider_message_id, result.status) == (
        "wamid.HBgLNTUxMTk4ODg4Nzc3NxUCABEYEjk",
        "sent",
    )


def test_send_text_reply_quotes_the_message_and_honours_a_custom_base_url():
    config = ChannelConfig(
        provider="meta",
        external_id="42",
        api_token="t",
        api_base_url="https://graph.example.test/v22.0/",
    )
    with respx.mock:
        route = respx.post("https://graph.example.test/v22.0/42/messages").respond(
            200, json=OK_RESPONSE
        )
        _send_text(config=config, reply_to="wamid.abc")

    assert json.loads(route.calls.last.request.content)["context"] == {"message_id": "wamid.abc"}


@pytest.mark.parametrize(
    "last_inbound_at",
    [
        pytest.param(None, id="never-wrote"),
        pytest.param(FIXED_NOW - timedelta(hours=24), id="exactly-24h"),
        pytest.param(FIXED_NOW - timedelta(days=3), id="days-ago"),
    ],
)
def test_send_text_outside_the_window_is_refused_before_any_request(last_inbound_at):
    with respx.mock(assert_all_called=False) as router:
        route = router.post(SEND_URL).respond(200, json=OK_RESPONSE)
        with pytest.raises(OutsideServiceWindow) as caught:
            _send_text(last_inbound_at=last_inbound_at)

    assert not route.called
    assert router.calls.call_count == 0
    assert (caught.value.code, caught.value.retryable) == ("outside_service_window", False)


def test_send_text_just_inside_the_window_is_sent():
    with respx.mock:
        route = respx.post(SEND_URL).respond(200, json=OK_RESPONSE)
        _send_text(last_inbound_at=FIXED_NOW - timedelta(hours=23, minutes=59))

    assert route.called


def test_send_template_posts_name_language_and_body_parameters_without_a_window():
    with respx.mock:
        route = respx.post(SEND_URL).respond(200, json=OK_RESPONSE)
        result = adapter.send_template(
            CONFIG,
            to="5511988887777",
            template_name="retomada_atendimento",
            language="pt_BR",
            parameters=["Maria", "pedido 123"],
        )

    assert json.loads(route.calls.last.request.content) == {
        "messaging_product": "whatsapp",
        "to": "5511988887777",
        "type": "template",
        "template": {
            "name": "retomada_atendimento",
            "language": {"code": "pt_BR"},
            "components": [
                {
                    "type": "body",
                    "parameters": [
                        {"type": "text", "text": "Maria"},
                        {"type": "text", "text": "pedido 123"},
                    ],
                }
            ],
        },
    }
    assert result.provider_message_id == "wamid.HBgLNTUxMTk4ODg4Nzc3NxUCABEYEjk"


def test_send_template_without_parameters_sends_no_components():
    with respx.mock:
        route = respx.post(SEND_URL).respond(200, json=OK_RESPONSE)
        adapter.send_template(
            CONFIG, to="5511988887777", template_name="hello_world", language="en_US", parameters=[]
        )

    sent = json.loads(route.calls.last.request.content)
    assert sent["template"] == {"name": "hello_world", "language": {"code": "en_US"}}


def _graph_error(code: int, message: str, details: str = "") -> dict:
    return {
        "error": {
            "message": message,
            "type": "OAuthException",
            "code": code,
            "error_data": {"messaging_product": "whatsapp", "details": details},
            "fbtrace_id": "A4O5a8RAgePwbcGSu",
        }
    }


@pytest.mark.parametrize(
    ("status", "body", "code", "retryable", "provider_code"),
    [
        (400, _graph_error(131026, "(#131026) Message undeliverable"), "rejected", False, "131026"),
        (400, _graph_error(100, "(#100) Invalid parameter"), "rejected", False, "100"),
        (401, _graph_error(190, "Error validating access token"), "auth_failed", False, "190"),
        (400, _graph_error(130429, "(#130429) Rate limit hit"), "rate_limited", True, "130429"),
        (
            400,
            _graph_error(131056, "(#131056) pair rate limit hit"),
            "rate_limited",
            True,
            "131056",
        ),
        (429, {}, "rate_limited", True, "429"),
        (500, _graph_error(131000, "Something went wrong"), "provider_unavailable", True, "131000"),
        (502, None, "provider_unavailable", True, "502"),
    ],
)
def test_send_text_graph_errors_map_to_send_error(status, body, code, retryable, provider_code):
    with respx.mock:
        if body is None:
            respx.post(SEND_URL).respond(status, text="Bad Gateway")
        else:
            respx.post(SEND_URL).respond(status, json=body)
        with pytest.raises(SendError) as caught:
            _send_text()

    error = caught.value
    assert (error.code, error.retryable, error.provider_code) == (code, retryable, provider_code)
    assert error.http_status == status
    if body:
        assert body["error"]["message"] in str(error)


def test_send_text_re_engagement_error_is_the_window_error():
    body = _graph_error(
        131047,
        "(#131047) Re-engagement message",
        "Message failed to send because more than 24 hours have passed since the customer last "
        "replied to this number.",
    )
    with respx.mock:
        respx.post(SEND_URL).respond(400, json=body)
        with pytest.raises(OutsideServiceWindow) as caught:
            _send_text()

    error = caught.value
    assert (error.code, error.retryable, error.provider_code) == (
        "outside_service_window",
        False,
        "131047",
    )
    assert "Re-engagement message" in str(error)
    assert "24 hours" in str(error)


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (httpx.ConnectTimeout, "timeout"),
        (httpx.ReadTimeout, "timeout"),
        (httpx.ConnectError, "connection_error"),
        (httpx.RemoteProtocolError, "connection_error"),
    ],
)
def test_send_text_network_failures_are_retryable(exc, code):
    with respx.mock:
        respx.post(SEND_URL).mock(side_effect=exc)
        with pytest.raises(SendError) as caught:
            _send_text()

    assert (caught.value.code, caught.value.retryable) == (code, True)


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"config": ChannelConfig(provider="meta", external_id="42")}, "invalid_config"),
        ({"to": "4639135154355@lid"}, "invalid_recipient"),
        ({"body": ""}, "invalid_message"),
    ],
)
def test_send_text_refuses_bad_input_without_calling_meta(kwargs, code):
    # respx is active with no route: any request would fail the test.
    with respx.mock, pytest.raises(SendError) as caught:
        _send_text(**kwargs)

    assert (caught.value.code, caught.value.retryable) == (code, False)
