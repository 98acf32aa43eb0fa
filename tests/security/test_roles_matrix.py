"""Roles matrix: for every page and API endpoint (walked from the resolver, see
``routes.ROUTES``) and every method, each role below the minimum gets 403, each role at or
above it gets through (its own organization's objects: never 403, 404 or 5xx), anonymous
users are sent to the login page (pages) or get 401 (API), and methods a URL does not
serve never succeed."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.security.conftest import client_for
from tests.security.routes import ANY, METHODS, PUBLIC, RANK, ROLES, covered_routes, request
from tests.security.tenant_data import build_world

ROUTES = covered_routes()


def _allowed(minimum: str, role: str) -> bool:
    if minimum in (ANY, PUBLIC):
        return True
    return RANK[role] >= RANK[minimum]


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.name)
def test_each_role_may_do_exactly_what_the_table_says(db, route):
    rule = route.rule
    data = build_world(("A",))
    outcomes = {}
    for role in ROLES:
        for method in METHODS:
            minimum = rule.role_for(method)
            build = rule.query if method == "GET" else rule.body
            body = build(data, "A") if build else None
            response = request(
                client_for(data.user("A", role)), route, method, route.url(data, "A"), body
            )
            status = response.status_code
            outcomes[(role, method)] = status
            if minimum is None:
                # Public pages may redirect a logged-in user before looking at the method.
                served = (403, 405, 302) if PUBLIC in rule.methods.values() else (403, 405)
                assert status in served, f"{role} {method}: unserved method -> {status}"
            elif minimum == PUBLIC:
                assert status < 500
            elif _allowed(minimum, role):
                assert status not in (403, 404) and status < 500, (
                    f"{role} {method} {route.pattern}: allowed, got {status}"
                )
                if method != "GET":
                    data = build_world(("A",))  # the write may have changed or deleted rows
            else:
                assert status == 403, f"{role} {method} {route.pattern}: denied, got {status}"
    assert outcomes  # the loops ran


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.name)
def test_anonymous_users_are_sent_to_log_in(db, route):
    rule = route.rule
    data = build_world(("A",))
    for method, minimum in rule.methods.items():
        response = request(Client(), route, method, route.url(data, "A"), None)
        if minimum == PUBLIC:
            assert response.status_code < 500
        elif route.is_api:
            assert response.status_code == 401, f"{method} {route.pattern}"
            if response["Content-Type"].startswith("application/json"):
                assert response.json()["error"]["code"] == "unauthenticated"
        else:
            assert response.status_code == 302, f"{method} {route.pattern}"
            assert response["Location"].startswith("/accounts/login/")


def test_a_user_without_membership_reaches_no_tenant_page(db):
    from django.contrib.auth import get_user_model

    data = build_world(("A",))
    loner = get_user_model().objects.create_user(username="sem-org")
    client = client_for(loner)
    for route in ROUTES:
        for method, minimum in route.rule.methods.items():
            if minimum in (ANY, PUBLIC):
                continue
            response = request(client, route, method, route.url(data, "A"), None)
            assert response.status_code in (403, 404), f"{method} {route.pattern}"
