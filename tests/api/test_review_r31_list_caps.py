"""A replace body longer than the list's cap is refused before any item is looked at: a
constant number of queries however long the body (each member names an agent, one query
per item before; a 2 MB body holds some 20 000 members), and the old list stays."""

from __future__ import annotations

import json
from typing import Any

import pytest

from routers.models import RouterMember
from routers.services import MAX_MEMBERS
from tests.routers.factories import SUPORTE, make_router


@pytest.fixture(autouse=True)
def _fast_passwords(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.mark.parametrize("size", [MAX_MEMBERS + 1, 400])
def test_members_over_the_cap_are_refused_in_constant_queries(
    world, size, django_assert_max_num_queries
):
    router = make_router(world.channel_a, [(world.agent_a, SUPORTE)])
    client = world.client_for(world.admin)
    members = [
        {"agent_id": str(world.agent_a.pk), "intent_name": f"i{i}", "intent_description": "d"}
        for i in range(size)
    ]

    # session · user · membership · the router
    with django_assert_max_num_queries(4):
        response = client.put(
            f"/api/v1/ai/routers/{router.pk}/members",
            data=json.dumps({"members": members}),
            content_type="application/json",
        )

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error" and list(error["fields"]) == ["members"]
    assert f"No máximo {MAX_MEMBERS} intenções" in json.dumps(error["fields"], ensure_ascii=False)
    assert list(
        RouterMember.objects.filter(router=router).values_list("intent_name", flat=True)
    ) == ["suporte"]
