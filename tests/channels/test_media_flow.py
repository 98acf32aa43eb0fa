"""Media end to end: a signed webhook stores the file's reference truthfully, the page shows
it through our authenticated proxy (never the provider's URL or token), the proxy fetches
it once, and staff send a file by link through the outbox in the provider's format."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
import respx
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from accounts.models import AuditLog
from conversation.models import Message
from conversation.outbox.media import outbound_media_enqueue
from tests import factories

from ._media_support import (
    GRAPH,
    META_NUMBER,
    WAHA_URL,
    assert_matches_schema,
    meta_case,
    waha_media_event,
)
from ._support import encode
from ._webhooks import meta_post, waha_post

TOKEN = "EAAG-very-secret-token"
LOOKASIDE = "https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=65463453"


@pytest.fixture(autouse=True)
def _media_root(settings: Any, tmp_path: Any) -> None:
    settings.MEDIA_ROOT = str(tmp_path)


@pytest.fixture
def meta_channel(world: Any) -> Any:
    return factories.make_channel(
        world.org_a,
        "meta",
        name="Meta",
        external_id=META_NUMBER,
        api_token=TOKEN,
        webhook_secret="app-secret",
    )


@pytest.fixture
def waha_channel(world: Any) -> Any:
    return factories.make_channel(
        world.org_a,
        "waha",
        name="WAHA",
        external_id="default",
        api_base_url=WAHA_URL,
        api_token="waha-key",
        webhook_secret="hmac-key",
    )


def _receive_meta(channel: Any, case: str, message_id: str, capture: Any) -> Message:
    with capture(execute=False):  # store only: no turn runs here
        response = meta_post(channel, encode(meta_case(case, message_id=message_id)))
    assert response.status_code == 200
    return Message.objects.get(provider_message_id=message_id)


def _mock_graph_image(content: bytes = b"\xff\xd8jpeg") -> tuple[Any, Any]:
    info = respx.get(f"{GRAPH}/65463453").respond(
        200, json={"url": LOOKASIDE, "mime_type": "image/jpeg", "file_size": len(content)}
    )
    file = respx.get(LOOKASIDE).respond(
        200, content=content, headers={"Content-Type": "image/jpeg"}
    )
    return info, file


def test_meta_voice_note_is_stored_with_its_media_reference(
    world, meta_channel, django_capture_on_commit_callbacks
):
    message = _receive_meta(
        meta_channel, "voice", "wamid.VOICE1", django_capture_on_commit_callbacks
    )

    assert (message.kind, message.body) == ("audio", "[áudio]")
    assert (message.media_id, message.media_mime) == (
        "1234567890987654321",
        "audio/ogg; codecs=opus",
    )
    assert message.media_meta["voice"] is True
    assert not message.media_file  # fetched only when someone opens it


def test_meta_location_is_stored_with_coordinates_and_a_map_link(
    world, meta_channel, django_capture_on_commit_callbacks
):
    message = _receive_meta(
        meta_channel, "chosen_location", "wamid.LOC1", django_capture_on_commit_callbacks
    )

    assert message.kind == "location"
    assert message.media_meta["latitude"] == 37.4611978
    page = (
        world.client_for(world.viewer)
        .get(f"/conversas/{message.conversation_id}/")
        .content.decode()
    )
    assert "openstreetmap.org/?mlat=37.461198" in page


def test_waha_image_is_stored_with_its_file_url(
    world, waha_channel, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        response = waha_post(waha_channel, encode(waha_media_event(message_id="true_1@c.us_IMG")))

    assert response.status_code == 200
    message = Message.objects.get(provider_message_id="true_1@c.us_IMG")
    assert (message.kind, message.media_mime) == ("image", "image/jpeg")
    assert message.media_url.startswith("http://localhost:3000/api/files/")
    assert message.body == "Check this out (caption for the media)!"


@respx.mock
def test_the_page_links_the_proxy_and_the_proxy_serves_the_file_once(
    world, meta_channel, django_capture_on_commit_callbacks
):
    message = _receive_meta(meta_channel, "image", "wamid.IMG1", django_capture_on_commit_callbacks)
    info, file = _mock_graph_image()
    client = world.client_for(world.viewer)

    page = client.get(f"/conversas/{message.conversation_id}/").content.decode()
    proxy = f"/mensagens/{message.pk}/arquivo/"
    assert f'src="{proxy}"' in page
    assert TOKEN not in page and "lookaside" not in page

    first = client.get(proxy)
    second = client.get(proxy)

    for response in (first, second):
        assert response.status_code == 200
        assert response["Content-Type"] == "image/jpeg"
        assert response["X-Content-Type-Options"] == "nosniff"
        assert b"".join(response.streaming_content) == b"\xff\xd8jpeg"
        assert TOKEN not in str(response.headers)
    assert (info.call_count, file.call_count) == (1, 1)  # the stored copy serves the second
    message.refresh_from_db()
    assert message.media_file.name.endswith(".jpg")
    assert AuditLog.objects.filter(action="message.media_fetch").count() == 1


def test_the_proxy_is_404_for_another_organizations_message(
    world, meta_channel, django_capture_on_commit_callbacks
):
    message = _receive_meta(meta_channel, "image", "wamid.IMG2", django_capture_on_commit_callbacks)

    response = world.client_for(world.outsider).get(f"/mensagens/{message.pk}/arquivo/")

    assert response.status_code == 404


@respx.mock
def test_the_proxy_says_when_a_file_is_too_large(
    world, meta_channel, settings, django_capture_on_commit_callbacks
):
    settings.WHATSAPP_MEDIA_MAX_BYTES = 3
    message = _receive_meta(meta_channel, "image", "wamid.IMG3", django_capture_on_commit_callbacks)
    _mock_graph_image(b"0123456789")

    response = world.client_for(world.viewer).get(f"/mensagens/{message.pk}/arquivo/")

    assert response.status_code == 413
    assert "tamanho máximo" in response.content.decode()
    message.refresh_from_db()
    assert not message.media_file


@respx.mock
def test_a_document_that_could_render_is_served_as_an_attachment(
    world, waha_channel, django_capture_on_commit_callbacks
):
    event = waha_media_event(message_id="true_1@c.us_DOC")
    event["payload"]["media"].update(
        url="http://localhost:3000/api/files/x.html", mimetype="text/html", filename="a.html"
    )
    with django_capture_on_commit_callbacks(execute=False):
        waha_post(waha_channel, encode(event))
    route = respx.get(f"{WAHA_URL}/api/files/x.html").respond(200, content=b"<script>1</script>")
    message = Message.objects.get(provider_message_id="true_1@c.us_DOC")

    response = world.client_for(world.viewer).get(f"/mensagens/{message.pk}/arquivo/")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"].startswith("attachment")
    assert "sandbox" in response["Content-Security-Policy"]
    assert route.calls.last.request.headers["X-Api-Key"] == "waha-key"


def test_a_text_message_has_no_file_and_the_proxy_goes_back_to_the_page(world):
    conversation = factories.make_conversation(world.channel_a)
    message = Message.objects.create(
        organization=world.org_a,
        conversation=conversation,
        channel=world.channel_a,
        direction="inbound",
        sender_kind="customer",
        body="oi",
        status="received",
    )

    response = world.client_for(world.viewer).get(f"/mensagens/{message.pk}/arquivo/")

    assert response.status_code == 302
    assert response["Location"].endswith(f"/conversas/{conversation.pk}/#msg-{message.pk}")


# -- outbound ---------------------------------------------------------------------------------


@respx.mock
def test_staff_sends_a_document_by_link_through_the_outbox(
    world, meta_channel, django_capture_on_commit_callbacks
):
    route = respx.post(f"{GRAPH}/{META_NUMBER}/messages").respond(
        200, json={"messages": [{"id": "wamid.DOC-OUT"}]}
    )
    conversation = factories.make_conversation(meta_channel)
    conversation.customer_wrote_at = timezone.now()  # the 24-hour window is open
    conversation.save(update_fields=["customer_wrote_at"])
    client = world.client_for(world.agent)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/conversas/{conversation.pk}/arquivo/",
            {
                "kind": "document",
                "url": "https://files.example.com/fatura.pdf",
                "filename": "fatura-marco.pdf",
                "caption": "Sua fatura",
            },
        )

    assert response.status_code == 302
    message = Message.objects.get(direction="outbound")
    assert (message.kind, message.status, message.provider_message_id) == (
        "document",
        "sent",
        "wamid.DOC-OUT",
    )
    assert json.loads(route.calls.last.request.content)["document"] == {
        "link": "https://files.example.com/fatura.pdf",
        "caption": "Sua fatura",
        "filename": "fatura-marco.pdf",
    }
    assert AuditLog.objects.filter(action="message.media_send", actor=world.agent).exists()
    page = client.get(f"/conversas/{conversation.pk}/").content.decode()
    assert 'href="https://files.example.com/fatura.pdf"' in page


def test_a_viewer_cannot_send_a_file(world, meta_channel):
    conversation = factories.make_conversation(meta_channel)

    response = world.client_for(world.viewer).post(
        f"/conversas/{conversation.pk}/arquivo/",
        {"kind": "image", "url": "https://files.example.com/a.jpg"},
    )

    assert response.status_code == 403
    assert not Message.objects.exists()


def test_a_plain_http_link_is_refused_and_nothing_is_queued(world, meta_channel):
    conversation = factories.make_conversation(meta_channel)

    world.client_for(world.agent).post(
        f"/conversas/{conversation.pk}/arquivo/",
        {"kind": "image", "url": "http://files.example.com/a.jpg"},
    )

    assert not Message.objects.exists()


@respx.mock
def test_waha_image_goes_out_through_send_image(
    world, waha_channel, django_capture_on_commit_callbacks
):
    route = respx.post(f"{WAHA_URL}/api/sendImage").respond(201, json={"id": "true_x@c.us_OUT"})
    conversation = factories.make_conversation(waha_channel, phone="5511977776666")

    with django_capture_on_commit_callbacks(execute=True):
        outbound_media_enqueue(
            conversation=conversation,
            kind="image",
            url="https://files.example.com/a.png",
            caption="Segue",
            sender_kind="human",
            actor=world.agent,
        )

    body = json.loads(route.calls.last.request.content)
    assert body["chatId"] == "5511977776666@c.us"
    assert body["file"] == {"mimetype": "image/png", "url": "https://files.example.com/a.png"}
    assert Message.objects.get().status == "sent"


@respx.mock
def test_staff_uploads_a_pdf_and_meta_gets_it_uploaded_then_sent_by_id(
    world, meta_channel, django_capture_on_commit_callbacks
):
    upload = respx.post(f"{GRAPH}/{META_NUMBER}/media").respond(200, json={"id": "4490709327"})
    send = respx.post(f"{GRAPH}/{META_NUMBER}/messages").respond(
        200, json={"messages": [{"id": "wamid.UP"}]}
    )
    conversation = factories.make_conversation(meta_channel)
    conversation.customer_wrote_at = timezone.now()  # the 24-hour window is open
    conversation.save(update_fields=["customer_wrote_at"])
    pdf = SimpleUploadedFile("fatura.pdf", b"%PDF-1.4 fatura", content_type="application/pdf")
    client = world.client_for(world.agent)

    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"/conversas/{conversation.pk}/arquivo/",
            {"kind": "document", "file": pdf, "caption": "Sua fatura"},
        )

    form = upload.calls.last.request
    assert form.headers["Authorization"] == f"Bearer {TOKEN}"
    assert form.headers["Content-Type"].startswith("multipart/form-data")
    assert b'name="messaging_product"' in form.content and b"%PDF-1.4 fatura" in form.content
    assert json.loads(send.calls.last.request.content)["document"] == {
        "id": "4490709327",
        "caption": "Sua fatura",
        "filename": "fatura.pdf",
    }
    message = Message.objects.get()
    assert (message.status, message.media_url) == ("sent", "")
    served = client.get(f"/mensagens/{message.pk}/arquivo/")  # staff see what they sent
    assert b"".join(served.streaming_content) == b"%PDF-1.4 fatura"


@respx.mock
def test_an_uploaded_image_goes_to_waha_inline_as_base64(
    world, waha_channel, django_capture_on_commit_callbacks
):
    route = respx.post(f"{WAHA_URL}/api/sendImage").respond(201, json={"id": "true_x@c.us_B"})
    conversation = factories.make_conversation(waha_channel, phone="5511977776666")
    png = SimpleUploadedFile("foto.png", b"\x89PNG\r\n", content_type="image/png")

    with django_capture_on_commit_callbacks(execute=True):
        world.client_for(world.agent).post(
            f"/conversas/{conversation.pk}/arquivo/", {"kind": "image", "file": png}
        )

    body = json.loads(route.calls.last.request.content)
    assert_matches_schema(body, "MessageImageRequest")
    assert body["file"] == {
        "mimetype": "image/png",
        "filename": "foto.png",
        "data": base64.b64encode(b"\x89PNG\r\n").decode(),
    }


def test_an_upload_of_a_type_whatsapp_refuses_is_not_queued(world, meta_channel):
    conversation = factories.make_conversation(meta_channel)
    page = SimpleUploadedFile("x.html", b"<script></script>", content_type="text/html")

    world.client_for(world.agent).post(
        f"/conversas/{conversation.pk}/arquivo/", {"kind": "document", "file": page}
    )

    assert not Message.objects.exists()


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("voice", "<audio controls"),
        ("video", "<video controls"),
        ("document", "filename.pdf"),
        ("static_sticker", 'alt="figurinha"'),
    ],
)
def test_each_media_kind_renders_its_player_or_link_in_the_timeline(
    world, meta_channel, django_capture_on_commit_callbacks, case, expected
):
    message = _receive_meta(meta_channel, case, f"wamid.{case}", django_capture_on_commit_callbacks)

    page = world.client_for(world.viewer).get(f"/conversas/{message.conversation_id}/")

    html = page.content.decode()
    assert page.status_code == 200
    assert expected in html
    assert f"/mensagens/{message.pk}/arquivo/" in html
    assert message.media_id not in html  # the provider's id stays on the server
