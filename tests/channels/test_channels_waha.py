from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime

import httpx
import pytest
import respx

from conversation.channels.base import ChannelConfig, SendError, SignatureError
from conversation.channels.waha import WahaAdapter

from ._support import FIXED_NOW, FIXTURES, encode, load_fixture

CONFIG = ChannelConfig(
    provider="waha",
    external_id="default",
    api_base_url="http://localhost:3000/",
    api_token="yoursecretkey",
)
SEND_URL = "http://localhost:3000/api/sendText"


@pytest.fixture
def adapter(fixed_clock) -> WahaAdapter:
    return WahaAdapter(clock=fixed_clock)


def _hmac_vector() -> tuple[bytes, str, str, str]:
    """(body, key, algorithm, expected header) from the docs' HMAC example."""
    lines = (FIXTURES / "waha" / "webhook_hmac_example.txt").read_text().splitlines()
    values = [line for line in lines if line and not line.startswith("#")]
    body, key, algorithm, signature = values
    return body.encode(), key, algorithm, signature


# -- signature ---------------------------------------------------------------------------


def test_verify_signature_accepts_the_documented_hmac_example(adapter):
    body, key, algorithm, signature = _hmac_vector()
    headers = {"X-Webhook-Hmac": signature, "X-Webhook-Hmac-Algorithm": algorithm}
    adapter.verify_signature(headers=headers, body=body, secret=key)


def test_verify_signature_reads_headers_case_insensitively(adapter):
    body, key, _, signature = _hmac_vector()
    adapter.verify_signature(headers={"x-webhook-hmac": signature}, body=body, secret=key)


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(lambda b, k, s: (b[:-2] + b"X}", k, s), id="flipped-body-byte"),
        pytest.param(lambda b, k, s: (b, "other-secret", s), id="wrong-secret"),
        pytest.param(lambda b, k, s: (b, k, ("0" if s[0] != "0" else "1") + s[1:]), id="bad-hex"),
        pytest.param(lambda b, k, s: (b, k, ""), id="missing-header"),
        pytest.param(lambda b, k, s: (b, "", s), id="no-secret-configured"),
        pytest.param(lambda b, k, s: (b, k, "ç" + s[1:]), id="non-ascii-header"),
    ],
)
def test_verify_signature_rejects_tampering_and_missing_parts(adapter, mutate):
    body, key, _, signature = _hmac_vector()
    body, key, signature = mutate(body, key, signature)
    headers = {"X-Webhook-Hmac": signature} if signature else {}
    with pytest.raises(SignatureError):
        adapter.verify_signature(headers=headers, body=body, secret=key)


def test_verify_signature_rejects_an_unexpected_algorithm(adapter):
    body, key, _, _ = _hmac_vector()
    sha256 = hmac.new(key.encode(), body, hashlib.sha256).hexdigest()
    headers = {"X-Webhook-Hmac": sha256, "X-Webhook-Hmac-Algorithm": "sha256"}
    with pytest.raises(SignatureError):
        adapter.verify_signature(headers=headers, body=body, secret=key)


# -- inbound messages --------------------------------------------------------------------


def test_parse_message_event_from_the_docs_marks_own_message_from_me(adapter):
    parsed = adapter.parse_webhook(encode(load_fixture("waha/event_message.jsonc")))

    assert parsed.statuses == ()
    (message,) = parsed.messages
    assert message.provider_message_id == "true_11111111111@c.us_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    assert message.from_me is True
    assert message.from_phone == "11111111111"
    assert message.body == "Hi there!"
    assert message.kind == "text"
    assert message.timestamp == datetime(2022, 11, 4, 11, 31, 25, tzinfo=UTC)


def test_parse_full_webjs_message_takes_no_name_from_our_own_message(adapter):
    parsed = adapter.parse_webhook(
        encode(load_fixture("waha/event_message_full_webjs_docs2023.json"))
    )

    (message,) = parsed.messages
    assert message.from_me is True
    assert message.from_name == ""  # notifyName is the business's own name here
    assert message.from_phone == "11111111111"


def test_parse_inbound_webjs_message_uses_notify_name(adapter):
    data = load_fixture("waha/event_message_full_webjs_docs2023.json")
    data["payload"]["fromMe"] = False
    data["payload"]["from"] = "5511988887777@c.us"

    (message,) = adapter.parse_webhook(encode(data)).messages

    assert message.from_me is False
    assert message.from_phone == "5511988887777"
    assert message.from_lid == ""
    assert message.from_name == "MyName"


def test_parse_media_message_uses_caption_as_body(adapter):
    (message,) = adapter.parse_webhook(
        encode(load_fixture("waha/event_message_with_media.jsonc"))
    ).messages

    assert message.kind == "image"
    assert message.body == "Check this out (caption for the media)!"
    assert message.from_me is False


@pytest.mark.parametrize(
    ("mimetype", "kind", "body"),
    [
        ("image/jpeg", "image", "[imagem]"),
        ("audio/ogg; codecs=opus", "audio", "[áudio]"),
        ("video/mp4", "video", "[vídeo]"),
        ("application/pdf", "document", "[documento]"),
        ("image/webp", "sticker", "[figurinha]"),
    ],
)
def test_parse_media_without_caption_gets_a_placeholder_body(adapter, mimetype, kind, body):
    data = load_fixture("waha/event_message_with_media.jsonc")
    data["payload"]["body"] = ""
    data["payload"]["media"]["mimetype"] = mimetype

    (message,) = adapter.parse_webhook(encode(data)).messages

    assert (message.kind, message.body) == (kind, body)


def test_parse_webjs_voice_note_kind_comes_from_data_type(adapter):
    data = load_fixture("waha/event_message_with_media.jsonc")
    data["payload"].update(body="", media=None, _data={"type": "ptt"})

    (message,) = adapter.parse_webhook(encode(data)).messages

    assert (message.kind, message.body) == ("audio", "[áudio]")


def test_parse_reply_captures_the_quoted_message_id(adapter):
    (message,) = adapter.parse_webhook(
        encode(load_fixture("waha/event_message_with_replyTo.jsonc"))
    ).messages

    assert message.body == "Yes!"
    assert message.reply_to == "false_22222222@c.us_AAAAAAAAAAAAAAAAAAA"
    assert message.kind == "text"


def test_parse_location_message_describes_the_place(adapter):
    data = load_fixture("waha/event_message_with_replyTo.jsonc")
    data["payload"].update(
        body="/9j/4AAQSkZJRgABAQ==",  # WEBJS may put a base64 thumbnail here
        location={"latitude": "-23.55", "longitude": "-46.63", "live": False, "name": "Loja"},
    )

    (message,) = adapter.parse_webhook(encode(data)).messages

    assert (message.kind, message.body) == ("location", "[localização] Loja")


def test_parse_envelope_from_the_docs_with_a_message_payload(adapter):
    envelope = load_fixture("waha/event_envelope_structure.jsonc")
    envelope["payload"] = load_fixture("waha/event_message_with_replyTo.jsonc")["payload"]

    (message,) = adapter.parse_webhook(encode(envelope)).messages

    assert message.body == "Yes!"
    assert message.timestamp == datetime(2022, 11, 4, 11, 31, 25, tzinfo=UTC)


def test_parse_message_without_own_timestamp_uses_the_envelope_milliseconds(adapter):
    envelope = load_fixture("waha/event_envelope_structure.jsonc")
    payload = load_fixture("waha/event_message_with_replyTo.jsonc")["payload"]
    del payload["timestamp"]
    envelope["payload"] = payload

    (message,) = adapter.parse_webhook(encode(envelope)).messages

    assert message.timestamp == datetime.fromtimestamp(1741249702.485, tz=UTC)


def test_parse_message_any_event_is_parsed_like_message(adapter):
    data = load_fixture("waha/event_message_with_replyTo.jsonc")
    data["event"] = "message.any"

    (message,) = adapter.parse_webhook(encode(data)).messages

    assert message.from_phone == "11111111111"


# -- @lid senders ------------------------------------------------------------------------


def test_parse_lid_sender_prefers_the_phone_revealed_in_noweb_data(adapter):
    (message,) = adapter.parse_webhook(
        encode(load_fixture("waha/composed_message_lid_noweb_with_alt.json"))
    ).messages

    assert message.from_phone == "5511988887777"
    assert message.from_lid == "4639135154355@lid"
    assert message.from_name == "Cliente Teste"
    assert message.body == "Tudo indo. Sim"


def test_parse_lid_sender_without_a_phone_keeps_the_lid_as_stable_id(adapter):
    (message,) = adapter.parse_webhook(
        encode(load_fixture("waha/composed_message_lid_only.json"))
    ).messages

    assert message.from_phone == "4639135154355@lid"
    assert message.from_lid == "4639135154355@lid"


def test_parse_gows_lid_sender_uses_sender_alt_without_device_suffix(adapter):
    (message,) = adapter.parse_webhook(
        encode(load_fixture("waha/composed_message_any_gows_lid.json"))
    ).messages

    assert message.from_phone == "5521977776666"
    assert message.from_lid == "208800000000077@lid"
    assert message.from_name == "Cliente GOWS"
    assert message.reply_to == "A55C8FEA23D0DCFCCD804555305A8696"
    assert message.timestamp == datetime.fromtimestamp(1774983903, tz=UTC)


def test_parse_phone_sender_also_records_the_lid_alternative(adapter):
    data = load_fixture("waha/composed_message_lid_noweb_with_alt.json")
    key = data["payload"]["_data"]["key"]
    data["payload"]["from"], key["remoteJidAlt"] = "5511988887777@c.us", "4639135154355@lid"

    (message,) = adapter.parse_webhook(encode(data)).messages

    assert (message.from_phone, message.from_lid) == ("5511988887777", "4639135154355@lid")


# -- bounds, cleaning and the session ---------------------------------------------------


def test_parse_events_carry_the_session_they_came_from(adapter):
    message = load_fixture("waha/composed_message_any_gows_lid.json")
    ack = load_fixture("waha/event_message_ack.json")

    (inbound,) = adapter.parse_webhook(encode(message)).messages
    (status,) = adapter.parse_webhook(encode(ack)).statuses

    assert (inbound.channel_ref, status.channel_ref) == ("wapi", ack["session"])
    assert adapter.addresses_channel is True


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"id": "x" * 201}, "invalid_id"),
        ({"from": "1" * 70 + "@lid", "_data": {}}, "invalid_sender"),
        ({"from": "a b@lid", "_data": {}}, "invalid_sender"),
        ({"timestamp": "later"}, "invalid_timestamp"),
    ],
)
def test_parse_a_bad_message_event_is_rejected_with_its_code(adapter, change, code):
    data = load_fixture("waha/composed_message_any_gows_lid.json")
    data["payload"].update(change)

    parsed = adapter.parse_webhook(encode(data))

    assert parsed.accepted == 0
    assert [(r.code, r.where) for r in parsed.rejected] == [(code, "payload")]


def test_parse_raw_surrogate_bytes_and_nul_escapes_come_out_storable(adapter):
    data = load_fixture("waha/composed_message_any_gows_lid.json")
    data["payload"]["body"] = "SURROGATE NUL"
    data["payload"]["_data"]["Info"]["PushName"] = "Ana NUL"
    body = encode(data).replace(b"SURROGATE", b"\xed\xa0\x80").replace(b" NUL", b"\\u0000")

    (message,) = adapter.parse_webhook(body).messages

    assert (message.body, message.from_name) == ("\ufffd", "Ana")


def test_parse_a_quoted_id_too_long_to_be_ours_is_dropped(adapter):
    data = load_fixture("waha/composed_message_any_gows_lid.json")
    data["payload"]["replyTo"]["id"] = "r" * 300

    (message,) = adapter.parse_webhook(encode(data)).messages

    assert message.reply_to is None


# -- ignored events and chats ------------------------------------------------------------


@pytest.mark.parametrize(
    "chat", ["120363025246125486@g.us", "status@broadcast", "120363040000000000@newsletter"]
)
def test_parse_messages_outside_one_to_one_chats_are_ignored(adapter, chat):
    data = load_fixture("waha/event_message_with_replyTo.jsonc")
    data["payload"]["from"] = chat

    assert adapter.parse_webhook(encode(data)).messages == ()


def test_parse_webjs_system_notification_is_not_a_customer_message(adapter):
    data = load_fixture("waha/event_message_full_webjs_docs2023.json")
    data["payload"].update(fromMe=False, body="", _data={"type": "e2e_notification"})

    assert adapter.parse_webhook(encode(data)).messages == ()


@pytest.mark.parametrize("event", ["session.status", "presence.update", "message.reaction"])
def test_parse_other_events_are_acknowledged_and_ignored(adapter, event):
    parsed = adapter.parse_webhook(encode({"event": event, "session": "default", "payload": {}}))

    assert (parsed.messages, parsed.statuses) == ((), ())


# -- acks --------------------------------------------------------------------------------


def test_parse_ack_from_the_docs_becomes_a_read_status(adapter):
    parsed = adapter.parse_webhook(encode(load_fixture("waha/event_message_ack.json")))

    assert parsed.messages == ()
    (status,) = parsed.statuses
    assert status.provider_message_id == "true_11111111111@c.us_4CC5EDD64BC22EBA6D639F2AF571346C"
    assert status.status == "read"
    assert status.timestamp == FIXED_NOW  # the docs' example carries no timestamp at all
    assert status.error == ""


def test_parse_ack_error_becomes_failed_with_envelope_time(adapter):
    (status,) = adapter.parse_webhook(
        encode(load_fixture("waha/composed_message_ack_error.json"))
    ).statuses

    assert status.status == "failed"
    assert status.error
    assert status.timestamp == datetime.fromtimestamp(1733300000.123, tz=UTC)


@pytest.mark.parametrize(
    ("ack", "ack_name", "expected"),
    [
        (1, "SERVER", "sent"),
        (2, "DEVICE", "delivered"),
        (4, "PLAYED", "read"),
        (None, "READ", "read"),
    ],
)
def test_parse_ack_levels_map_to_outbound_statuses(adapter, ack, ack_name, expected):
    data = load_fixture("waha/event_message_ack.json")
    data["payload"].update(ack=ack, ackName=ack_name)

    (status,) = adapter.parse_webhook(encode(data)).statuses

    assert status.status == expected


@pytest.mark.parametrize("change", [{"ack": 0, "ackName": "PENDING"}, {"fromMe": False}])
def test_parse_pending_acks_and_acks_of_customer_messages_are_ignored(adapter, change):
    data = load_fixture("waha/event_message_ack.json")
    data["payload"].update(change)

    assert adapter.parse_webhook(encode(data)).statuses == ()


# -- outbound ----------------------------------------------------------------------------


def _send(adapter: WahaAdapter, **kwargs):
    params = {"to": "12132132130", "body": "Hi there!", "last_inbound_at": None, "now": FIXED_NOW}
    params.update(kwargs)
    return adapter.send_text(CONFIG, **params)


def test_send_text_posts_the_documented_request(adapter):
    with respx.mock:
        route = respx.post(SEND_URL).respond(
            201, json={"id": "true_12132132130@c.us_3EB0ABC", "fromMe": True, "ack": 1}
        )
        result = _send(adapter)

    request = route.calls.last.request
    assert str(request.url) == SEND_URL
    assert request.headers["X-Api-Key"] == "yoursecretkey"
    assert request.headers["Accept"] == "application/json"
    assert request.headers["Content-Type"] == "application/json"
    assert json.loads(request.content) == load_fixture("waha/sendText_request_body.json")
    assert (result.provider_message_id, result.status) == ("true_12132132130@c.us_3EB0ABC", "sent")


def test_send_text_with_reply_to_matches_the_documented_body(adapter):
    with respx.mock:
        route = respx.post(SEND_URL).respond(201, json={"id": "true_x"})
        _send(
            adapter,
            to="+1 111-111-1111",
            body="Reply text",
            reply_to="false_11111111111@c.us_AAAAAAAAAAAAAAAAAAAA",
        )

    assert json.loads(route.calls.last.request.content) == load_fixture(
        "waha/sendText_reply_to_body.json"
    )


def test_send_text_to_a_lid_uses_the_lid_as_chat_id(adapter):
    with respx.mock:
        route = respx.post(SEND_URL).respond(201, json={"id": "true_4639135154355@lid_3EB0"})
        _send(adapter, to="4639135154355@lid")

    assert json.loads(route.calls.last.request.content)["chatId"] == "4639135154355@lid"


def test_send_text_ignores_the_service_window(adapter):
    assert adapter.enforces_service_window is False
    long_ago = datetime(2020, 1, 1, tzinfo=UTC)
    with respx.mock:
        route = respx.post(SEND_URL).respond(201, json={"id": "true_1"})
        _send(adapter, last_inbound_at=long_ago)

    assert route.called


@pytest.mark.parametrize(
    ("response_json", "expected_id"),
    [
        pytest.param(
            {"_data": {"id": {"_serialized": "true_62811111123123@c.us_3EB0378E606CA43FEF38D2"}}},
            "true_62811111123123@c.us_3EB0378E606CA43FEF38D2",
            id="webjs-raw",
        ),
        pytest.param(
            {"id": {"fromMe": True, "_serialized": "true_1@c.us_ABC"}},
            "true_1@c.us_ABC",
            id="webjs-id-object",
        ),
        pytest.param(
            {
                "key": {
                    "remoteJid": "111111111111@s.whatsapp.net",
                    "fromMe": True,
                    "id": "3EB08A6895830F110A5E4D",
                },
                "status": "PENDING",
            },
            "true_111111111111@c.us_3EB08A6895830F110A5E4D",
            id="noweb-key",
        ),
    ],
)
def test_send_text_reads_the_message_id_of_each_engine(adapter, response_json, expected_id):
    with respx.mock:
        respx.post(SEND_URL).respond(201, json=response_json)
        result = _send(adapter)

    assert result.provider_message_id == expected_id


def test_send_text_accepted_without_body_gets_a_unique_local_id(adapter):
    with respx.mock:
        respx.post(SEND_URL).respond(201, content=b"")
        first, second = _send(adapter), _send(adapter)

    assert first.provider_message_id.startswith("unknown-")
    assert first.provider_message_id != second.provider_message_id
    assert first.status == "sent"


@pytest.mark.parametrize(
    ("status", "response", "retryable", "code", "text"),
    [
        # A session that is not WORKING yet (starting, reconnecting, waiting for a QR scan):
        # WAHA's 422 as reported in devlikeapro/waha #1329 and #289. The message is fine.
        (
            422,
            {
                "json": {
                    "error": "Session status is not as expected. Try again later or restart "
                    "the session",
                    "session": "default",
                    "status": "STARTING",
                    "expected": ["WORKING"],
                }
            },
            True,
            "provider_unavailable",
            "Session status is not as expected",
        ),
        (
            422,
            {
                "json": {
                    "statusCode": 422,
                    "message": "The session under FAILED status. Please try to restart it.",
                    "error": "Unprocessable Entity",
                }
            },
            True,
            "provider_unavailable",
            "FAILED status",
        ),
        # Any other 422 is refused for good: WAHA Core asked for a second session (#834).
        (
            422,
            {
                "json": {
                    "statusCode": 422,
                    "message": "WAHA Core support only 'default' session. If you want to run "
                    "more then one WhatsApp account - please get WAHA PLUS version.",
                    "error": "Unprocessable Entity",
                }
            },
            False,
            "rejected",
            "only 'default' session",
        ),
        (
            400,
            {"json": {"statusCode": 400, "message": ["chatId must be a string"]}},
            False,
            "rejected",
            "chatId must be a string",
        ),
        (
            401,
            {"json": {"message": "Unauthorized", "statusCode": 401}},
            False,
            "auth_failed",
            "Unauthorized",
        ),
        (429, {"json": {}}, True, "rate_limited", "Too Many Requests"),
        (
            500,
            {"json": {"statusCode": 500, "exception": {"message": "boom"}}},
            True,
            "provider_unavailable",
            "boom",
        ),
        (503, {"text": "<html>down</html>"}, True, "provider_unavailable", "Service Unavailable"),
    ],
)
def test_send_text_http_errors_map_to_send_error(adapter, status, response, retryable, code, text):
    with respx.mock:
        respx.post(SEND_URL).respond(status, **response)
        with pytest.raises(SendError) as caught:
            _send(adapter)

    error = caught.value
    assert (error.retryable, error.code) == (retryable, code)
    assert (error.http_status, error.provider_code) == (status, str(status))
    assert text in str(error)


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (httpx.ConnectTimeout, "timeout"),
        (httpx.ReadTimeout, "timeout"),
        (httpx.ConnectError, "connection_error"),
    ],
)
def test_send_text_network_failures_are_retryable(adapter, exc, code):
    with respx.mock:
        respx.post(SEND_URL).mock(side_effect=exc)
        with pytest.raises(SendError) as caught:
            _send(adapter)

    assert (caught.value.retryable, caught.value.code) == (True, code)


@pytest.mark.parametrize(
    ("config", "kwargs", "code"),
    [
        (ChannelConfig(provider="waha", external_id="default"), {}, "invalid_config"),
        (CONFIG, {"to": "not-a-number"}, "invalid_recipient"),
        (CONFIG, {"body": "   "}, "invalid_message"),
    ],
)
def test_send_text_refuses_bad_input_without_calling_waha(adapter, config, kwargs, code):
    params = {"to": "5511988887777", "body": "Oi", "last_inbound_at": None, "now": FIXED_NOW}
    params.update(kwargs)
    # respx is active with no route: any request would fail the test.
    with respx.mock, pytest.raises(SendError) as caught:
        adapter.send_text(config, **params)

    assert (caught.value.code, caught.value.retryable) == (code, False)


def test_send_template_is_unsupported_on_waha(adapter):
    with respx.mock, pytest.raises(SendError) as caught:
        adapter.send_template(
            CONFIG, to="5511988887777", template_name="retomada", language="pt_BR", parameters=[]
        )

    assert (caught.value.code, caught.value.retryable) == ("unsupported", False)
