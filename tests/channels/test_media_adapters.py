"""Media in the adapters, pure (no Django): inbound payloads -> ``MediaRef``, files sent by
link and downloaded, in the providers' real wire formats (respx at the HTTP level)."""

from __future__ import annotations

import json
from datetime import timedelta

import httpx
import pytest
import respx
from hypothesis import given
from hypothesis import strategies as st

from conversation.channels.base import (
    ChannelConfig,
    MediaRef,
    OutboundMedia,
    OutsideServiceWindow,
    SendError,
)
from conversation.channels.media import columns_for, map_link, safe_filename, served_inline
from conversation.channels.meta import MetaAdapter
from conversation.channels.waha import WahaAdapter

from ._media_support import (
    GRAPH,
    META_NUMBER,
    WAHA_URL,
    assert_matches_schema,
    meta_case,
    waha_media_event,
)
from ._support import FIXED_NOW, encode

META = ChannelConfig(provider="meta", external_id=META_NUMBER, api_token="EAAG-secret-token")
WAHA = ChannelConfig(
    provider="waha", external_id="default", api_base_url=WAHA_URL, api_token="waha-key"
)
OPEN = FIXED_NOW - timedelta(hours=1)
CLOSED = FIXED_NOW - timedelta(hours=30)
SENT = {"messaging_product": "whatsapp", "messages": [{"id": "wamid.OUT1"}]}


def _meta_inbound(case: str) -> MediaRef | None:
    parsed = MetaAdapter().parse_webhook(encode(meta_case(case)))
    assert len(parsed.messages) == 1
    return parsed.messages[0].media


# -- inbound: Meta ----------------------------------------------------------------------------


def test_meta_image_keeps_its_media_id_mime_and_hash():
    media = _meta_inbound("image")

    assert media == MediaRef(
        kind="image", media_id="65463453", mime_type="image/jpeg", sha256="4654+8g="
    )


def test_meta_image_with_url_keeps_the_lookaside_url():
    media = _meta_inbound("media_with_url")

    assert media is not None
    assert media.url.startswith("https://lookaside.fbsbx.com/whatsapp_business/attachments/")


def test_meta_voice_note_is_audio_marked_as_voice():
    message = MetaAdapter().parse_webhook(encode(meta_case("voice"))).messages[0]

    assert message.kind == "audio"
    assert message.body == "[áudio]"  # what the model reads when there is no caption
    assert message.media is not None and message.media.voice is True
    assert message.media.mime_type == "audio/ogg; codecs=opus"


def test_meta_document_keeps_filename_caption_and_body_is_the_caption():
    message = MetaAdapter().parse_webhook(encode(meta_case("document"))).messages[0]

    assert message.body == "caption"
    assert message.media is not None
    assert (message.media.filename, message.media.caption) == ("filename.pdf", "caption")
    assert message.media.media_id == "1234567890987654321"


def test_meta_document_without_caption_tells_the_model_its_filename():
    body = meta_case("document")
    del body["entry"][0]["changes"][0]["value"]["messages"][0]["document"]["caption"]

    message = MetaAdapter().parse_webhook(encode(body)).messages[0]

    assert message.body == "[documento] filename.pdf"


def test_meta_sticker_and_video_are_media_of_their_kind():
    assert _meta_inbound("static_sticker").kind == "sticker"  # type: ignore[union-attr]
    video = _meta_inbound("video")
    assert video is not None and (video.kind, video.caption) == ("video", "caption")


def test_meta_location_keeps_coordinates_and_label():
    media = _meta_inbound("chosen_location")

    assert media is not None
    assert (media.latitude, media.longitude) == (37.4611978, -122.2164385)
    assert media.label == "Facebook HQ, 1 Hacker Way, Menlo Park, CA 94025"


def test_meta_media_id_longer_than_the_column_is_dropped_not_cut():
    body = meta_case("image")
    body["entry"][0]["changes"][0]["value"]["messages"][0]["image"]["id"] = "9" * 201

    media = MetaAdapter().parse_webhook(encode(body)).messages[0].media

    assert media is not None and media.media_id == ""


def test_meta_text_message_has_no_media():
    assert _meta_inbound("text") is None


# -- inbound: WAHA ----------------------------------------------------------------------------


def test_waha_media_event_keeps_url_mime_and_caption():
    parsed = WahaAdapter().parse_webhook(encode(waha_media_event()))

    message = parsed.messages[0]
    assert message.kind == "image"
    assert message.body == "Check this out (caption for the media)!"
    assert message.media == MediaRef(
        kind="image",
        url="http://localhost:3000/api/files/true_11111111111@c.us_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.jpg",
        mime_type="image/jpeg",
        caption="Check this out (caption for the media)!",
    )


def test_waha_media_download_error_is_kept_for_the_page():
    event = waha_media_event()
    event["payload"]["media"].update(url=None, error="Media download failed")

    media = WahaAdapter().parse_webhook(encode(event)).messages[0].media

    assert media is not None and (media.url, media.error) == ("", "Media download failed")


def test_waha_voice_note_is_audio_marked_as_voice():
    event = waha_media_event()
    event["payload"].update(body="", _data={"type": "ptt"})
    event["payload"]["media"].update(mimetype="audio/ogg; codecs=opus")

    message = WahaAdapter().parse_webhook(encode(event)).messages[0]

    assert (message.kind, message.body) == ("audio", "[áudio]")
    assert message.media is not None and message.media.voice is True


def test_waha_location_keeps_coordinates():
    event = waha_media_event()
    event["payload"].pop("media")
    event["payload"].update(
        hasMedia=False, location={"latitude": "-23.55", "longitude": "-46.63", "description": "Sé"}
    )

    media = WahaAdapter().parse_webhook(encode(event)).messages[0].media

    assert media is not None
    assert (media.kind, media.latitude, media.longitude, media.label) == (
        "location",
        -23.55,
        -46.63,
        "Sé",
    )


# -- values ---------------------------------------------------------------------------------


def test_columns_for_a_location_carry_coordinates_in_meta():
    cols = columns_for(MediaRef(kind="location", latitude=1.5, longitude=-2.25, label="Loja"))

    assert cols["media_meta"] == {"latitude": 1.5, "longitude": -2.25, "label": "Loja"}
    assert map_link(cols["media_meta"]).startswith("https://www.openstreetmap.org/?mlat=1.500000")


def test_only_pictures_audio_and_video_are_served_inline():
    assert served_inline("image/jpeg") and served_inline("audio/ogg; codecs=opus")
    assert not served_inline("text/html")
    assert not served_inline("image/svg+xml")  # scripts inside an SVG would run on our origin
    assert not served_inline("application/pdf")


@given(st.text(max_size=300))
def test_safe_filename_never_has_a_path_or_quote(name: str):
    cleaned = safe_filename(name, fallback="arquivo")

    assert cleaned and len(cleaned) <= 120
    assert not any(ch in cleaned for ch in '/\\"') and cleaned.isprintable()


# -- outbound: Meta -------------------------------------------------------------------------


@respx.mock
def test_meta_sends_an_image_by_link_in_the_cloud_api_format():
    route = respx.post(f"{GRAPH}/{META_NUMBER}/messages").respond(200, json=SENT)
    media = OutboundMedia(kind="image", url="https://cdn.example.com/a.jpg", caption="Sua foto")

    result = MetaAdapter().send_media(
        META, to="+55 11 98888-7777", media=media, last_inbound_at=OPEN, now=FIXED_NOW
    )

    assert result.provider_message_id == "wamid.OUT1"
    request = route.calls.last.request
    assert request.headers["Authorization"] == "Bearer EAAG-secret-token"
    assert json.loads(request.content) == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": "5511988887777",
        "type": "image",
        "image": {"link": "https://cdn.example.com/a.jpg", "caption": "Sua foto"},
    }


@respx.mock
def test_meta_sends_a_document_with_its_filename():
    route = respx.post(f"{GRAPH}/{META_NUMBER}/messages").respond(200, json=SENT)
    media = OutboundMedia(
        kind="document", url="https://cdn.example.com/f.pdf", filename="fatura-03.pdf"
    )

    MetaAdapter().send_media(
        META, to="5511988887777", media=media, last_inbound_at=OPEN, now=FIXED_NOW
    )

    body = json.loads(route.calls.last.request.content)
    assert body["type"] == "document"
    assert body["document"] == {
        "link": "https://cdn.example.com/f.pdf",
        "filename": "fatura-03.pdf",
    }


@respx.mock
def test_meta_file_outside_the_window_is_refused_before_any_request():
    route = respx.post(f"{GRAPH}/{META_NUMBER}/messages").respond(200, json=SENT)
    media = OutboundMedia(kind="document", url="https://cdn.example.com/f.pdf")

    with pytest.raises(OutsideServiceWindow):
        MetaAdapter().send_media(
            META, to="5511988887777", media=media, last_inbound_at=CLOSED, now=FIXED_NOW
        )
    assert not route.called


def test_meta_refuses_a_plain_http_link():
    media = OutboundMedia(kind="image", url="http://cdn.example.com/a.jpg")

    with pytest.raises(SendError) as exc:
        MetaAdapter().send_media(
            META, to="5511988887777", media=media, last_inbound_at=OPEN, now=FIXED_NOW
        )
    assert exc.value.code == "invalid_message"


# -- outbound: WAHA -------------------------------------------------------------------------


@respx.mock
def test_waha_sends_an_image_through_send_image_in_the_openapi_format():
    route = respx.post(f"{WAHA_URL}/api/sendImage").respond(201, json={"id": "true_x_1"})
    media = OutboundMedia(kind="image", url="https://cdn.example.com/a.jpg", caption="Foto")

    result = WahaAdapter().send_media(
        WAHA, to="5511988887777", media=media, last_inbound_at=None, now=FIXED_NOW
    )

    assert result.provider_message_id == "true_x_1"
    request = route.calls.last.request
    assert request.headers["X-Api-Key"] == "waha-key"
    body = json.loads(request.content)
    assert_matches_schema(body, "MessageImageRequest")
    assert body == {
        "session": "default",
        "chatId": "5511988887777@c.us",
        "file": {"mimetype": "image/jpeg", "url": "https://cdn.example.com/a.jpg"},
        "caption": "Foto",
    }


@respx.mock
def test_waha_sends_a_document_through_send_file_with_a_guessed_mimetype():
    route = respx.post(f"{WAHA_URL}/api/sendFile").respond(201, json={"id": "true_x_2"})
    media = OutboundMedia(kind="document", url="https://cdn.example.com/f", filename="fatura.pdf")

    WahaAdapter().send_media(
        WAHA, to="5511988887777", media=media, last_inbound_at=None, now=FIXED_NOW
    )

    body = json.loads(route.calls.last.request.content)
    assert_matches_schema(body, "MessageFileRequest")
    assert body["file"] == {
        "mimetype": "application/pdf",
        "url": "https://cdn.example.com/f",
        "filename": "fatura.pdf",
    }


# -- downloads --------------------------------------------------------------------------------


@respx.mock
def test_meta_download_asks_the_graph_for_the_url_then_fetches_it_with_the_token():
    info = respx.get(f"{GRAPH}/65463453").respond(
        200,
        json={
            "messaging_product": "whatsapp",
            "url": "https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=65463453",
            "mime_type": "image/jpeg",
            "sha256": "4654+8g=",
            "file_size": "4",
            "id": "65463453",
        },
    )
    file = respx.get("https://lookaside.fbsbx.com/whatsapp_business/attachments/").respond(
        200, content=b"\xff\xd8\xff\xe0", headers={"Content-Type": "image/jpeg"}
    )

    download = MetaAdapter().fetch_media(
        META, media=MediaRef(kind="image", media_id="65463453"), max_bytes=1000
    )

    assert download.content == b"\xff\xd8\xff\xe0" and download.mime_type == "image/jpeg"
    assert info.calls.last.request.headers["Authorization"] == "Bearer EAAG-secret-token"
    assert file.calls.last.request.headers["Authorization"] == "Bearer EAAG-secret-token"


@respx.mock
def test_meta_download_refuses_a_file_over_the_cap_before_fetching_it():
    respx.get(f"{GRAPH}/1").respond(
        200, json={"url": "https://lookaside.fbsbx.com/x", "file_size": 5000}
    )
    file = respx.get("https://lookaside.fbsbx.com/x").respond(200, content=b"x" * 5000)

    with pytest.raises(SendError) as exc:
        MetaAdapter().fetch_media(META, media=MediaRef(kind="image", media_id="1"), max_bytes=100)

    assert exc.value.code == "too_large"
    assert not file.called


@respx.mock
def test_download_over_the_cap_without_a_declared_size_is_cut_off():
    respx.get(f"{WAHA_URL}/api/files/big.bin").mock(
        return_value=httpx.Response(200, content=b"x" * 5000)
    )

    with pytest.raises(SendError) as exc:
        WahaAdapter().fetch_media(
            WAHA,
            media=MediaRef(kind="document", url="http://localhost:3000/api/files/big.bin"),
            max_bytes=100,
        )
    assert exc.value.code == "too_large"


@respx.mock
def test_waha_file_is_fetched_from_the_channels_server_with_the_key():
    # The webhook names WAHA's idea of its own host (localhost:3000); ours is the channel's.
    route = respx.get(f"{WAHA_URL}/api/files/true_1.jpg").respond(
        200, content=b"jpeg", headers={"Content-Type": "image/jpeg"}
    )

    download = WahaAdapter().fetch_media(
        WAHA,
        media=MediaRef(kind="image", url="http://localhost:3000/api/files/true_1.jpg"),
        max_bytes=1000,
    )

    assert download.content == b"jpeg"
    assert route.calls.last.request.headers["X-Api-Key"] == "waha-key"


@respx.mock
def test_waha_file_on_another_host_is_fetched_without_the_key():
    route = respx.get("https://bucket.s3.amazonaws.com/f.ogg").respond(200, content=b"ogg")

    WahaAdapter().fetch_media(
        WAHA,
        media=MediaRef(kind="audio", url="https://bucket.s3.amazonaws.com/f.ogg"),
        max_bytes=1000,
    )

    assert "X-Api-Key" not in route.calls.last.request.headers
