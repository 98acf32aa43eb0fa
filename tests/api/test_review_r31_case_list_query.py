"""``GET /api/v1/ai/cases`` query parameters: any ``page`` a client can send is a 200 or
the 422 envelope (never a 500), and a bad query names every bad parameter in ``fields``,
the shape of every other ``validation_error`` of the API (DESIGN §8)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests import factories
from tests.cases.conftest import enable_cases, open_case

URL = "/api/v1/ai/cases"


@pytest.fixture(autouse=True)
def _fast_passwords(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def viewer_client(world: Any) -> Client:
    enable_cases(world.agent_a)
    open_case(factories.make_conversation(world.channel_a, phone="5511988887777"))
    # A server error is an answer here, not an exception in the test.
    client = Client(raise_request_exception=False)
    client.force_login(world.viewer)
    return client


# "²" and "١" are str.isdigit(); more than 4300 digits is past int()'s default limit.
@pytest.mark.parametrize("page", ["²", "¹²", "9" * 5000, "1e3", " ", "0x1"])
def test_a_page_number_no_int_reads_is_the_422_envelope_naming_page(viewer_client, page):
    response = viewer_client.get(URL, {"page": page})

    assert response.status_code in (200, 422), response.content[:200]
    if response.status_code == 422:
        error = response.json()["error"]
        assert error["code"] == "validation_error"
        assert list(error["fields"]) == ["page"]


def test_a_query_with_a_bad_filter_and_a_bad_page_names_both(viewer_client):
    response = viewer_client.get(URL, {"estado": "tudo", "resp": "eu", "page": "0"})

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert sorted(error["fields"]) == ["estado", "page", "resp"]


def test_absent_or_empty_parameters_keep_their_defaults(viewer_client):
    for query in ({}, {"estado": "", "resp": "", "page": ""}):
        response = viewer_client.get(URL, query)
        assert response.status_code == 200, response.content[:200]
        data = response.json()["data"]
        assert (len(data["cases"]), data["page"]) == (1, 1)
