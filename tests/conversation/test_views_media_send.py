"""Files on the conversation page. Sending: the file is judged by what it is, not by the type
a browser (often a phone's) declares, and an image is an image WhatsApp accepts. Opening: a
stored file this server no longer has is a clear 404, not a server error."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from conversation.models import Message
from tests import factories

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
PDF = b"%PDF-1.7\n%fatura"


@pytest.fixture(autouse=True)
def _media_root(settings: Any, tmp_path: Any) -> None:
    settings.MEDIA_ROOT = str(tmp_path)


def _send(world: Any, channel: Any, kind: str, upload: SimpleUploadedFile) -> str:
    conversation = factories.make_conversation(channel)
    response = world.client_for(world.agent).post(
        f"/conversas/{conversation.pk}/arquivo/", {"kind": kind, "file": upload}, follow=True
    )
    return response.content.decode()


def test_a_pdf_sent_as_an_image_is_refused_with_a_clear_message(world):
    html = _send(
        world, world.channel_a, "image", SimpleUploadedFile("f.pdf", PDF, "application/pdf")
    )
    assert "JPEG ou PNG" in html
    assert not Message.objects.filter(kind="image").exists()


def test_a_page_declared_as_a_pdf_is_refused(world):
    page = SimpleUploadedFile("fatura.pdf", b"<html><script>x()</script>", "application/pdf")
    html = _send(world, world.channel_a, "document", page)
    assert "Tipo de arquivo não aceito" in html
    assert not Message.objects.filter(kind="document").exists()


def test_a_photo_a_phone_declares_as_octet_stream_is_sent_as_png(world):
    photo = SimpleUploadedFile("IMG_2040.png", PNG, "application/octet-stream")
    html = _send(world, world.channel_a, "image", photo)
    assert "Arquivo na fila de envio" in html
    message = Message.objects.get(kind="image")
    assert message.media_mime == "image/png"


def test_meta_refuses_images_over_five_megabytes_so_the_page_does(world):
    channel = factories.make_channel(world.org_a, "meta", external_id="1122334455667")
    big = SimpleUploadedFile("grande.png", PNG + b"\x00" * (5 * 1024 * 1024), "image/png")
    html = _send(world, channel, "image", big)
    assert "5 MB" in html
    assert not Message.objects.filter(kind="image").exists()


def test_a_stored_file_missing_from_storage_is_a_clear_404(world):
    conversation = factories.make_conversation(world.channel_a)
    message = factories.make_message(conversation, "", kind="image", media_mime="image/png")
    Message.objects.filter(pk=message.pk).update(media_file="messages/sumiu.png")

    response = world.client_for(world.viewer).get(f"/mensagens/{message.pk}/arquivo/")

    assert response.status_code == 404
    assert "não está mais guardado" in response.content.decode()
