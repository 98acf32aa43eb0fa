"""Error pages in pt-BR that render without a database, and one cap on request bodies that
is applied before a byte of the body is read."""

from __future__ import annotations

import io
from typing import Any
from unittest import mock

import pytest
from django.db import OperationalError
from django.db.backends.base.base import BaseDatabaseWrapper
from django.test import Client

MB = 1024 * 1024


@pytest.mark.django_db
def test_a_bad_request_answers_the_pt_br_page(settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["app.example.com"]
    response = Client().get("/accounts/login/", HTTP_HOST="outro.example")
    assert response.status_code == 400
    page = response.content.decode()
    assert 'lang="pt-BR"' in page
    assert "Erro 400" in page
    assert "Bad Request" not in page


@pytest.mark.django_db
def test_the_500_page_renders_in_pt_br_while_the_database_is_down(world: Any) -> None:
    client = world.client_for(world.admin)  # the session itself needs the database
    client.raise_request_exception = False
    from django.db import connection

    connection.close()
    down = OperationalError("the database is down")
    with mock.patch.object(BaseDatabaseWrapper, "ensure_connection", side_effect=down):
        response = client.get("/")
    assert response.status_code == 500
    page = response.content.decode()
    assert "Algo deu errado do nosso lado" in page
    assert 'lang="pt-BR"' in page


class _CountingBody(io.BytesIO):
    read_bytes = 0

    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        type(self).read_bytes += len(chunk)
        return chunk


def _multipart(size: int) -> tuple[bytes, str]:
    boundary = "limite"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    return head + b"x" * size + f"\r\n--{boundary}--\r\n".encode(), boundary


@pytest.mark.django_db
def test_a_50_mb_body_to_a_page_is_refused_before_it_is_read() -> None:
    body, boundary = _multipart(50 * MB)
    _CountingBody.read_bytes = 0
    response = Client().generic(
        "POST",
        "/accounts/login/",
        content_type=f"multipart/form-data; boundary={boundary}",
        **{"wsgi.input": _CountingBody(body), "CONTENT_LENGTH": str(len(body))},
    )
    assert response.status_code == 413
    assert _CountingBody.read_bytes == 0
    page = response.content.decode()
    assert "Erro 413" in page and 'lang="pt-BR"' in page


@pytest.mark.django_db
def test_a_50_mb_api_body_answers_the_api_envelope(world: Any) -> None:
    client = world.client_for(world.admin)
    response = client.generic(
        "POST",
        "/api/v1/ai/cases",
        content_type="application/json",
        **{"wsgi.input": io.BytesIO(b"{}"), "CONTENT_LENGTH": str(50 * MB)},
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"


def test_the_cap_leaves_room_for_the_largest_file_a_member_may_send(settings: Any) -> None:
    from config.settings.request_limits import max_body_bytes

    settings.WHATSAPP_MEDIA_MAX_BYTES = 16 * MB
    settings.REQUEST_MAX_BODY_BYTES = 0
    assert max_body_bytes() > 16 * MB
    settings.REQUEST_MAX_BODY_BYTES = 5 * MB
    assert max_body_bytes() == 5 * MB
