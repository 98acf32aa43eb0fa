"""Cross-tenant matrix: an admin of organization A, on every page and API endpoint, gets
404 for organization B's objects and never sees B's data — with the tenant walls up
(PostgreSQL, application role) behind the ORM scoping."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.db.models import Count, F

from accounts import rls
from tests.security.conftest import client_for
from tests.security.routes import (
    KWARG_MODELS,
    METHODS,
    ROUTES,
    covered_routes,
    product_routes,
    request,
)
from tests.security.tenant_data import TenantData, marker

ROUTES_WITH_KWARGS = [r for r in covered_routes() if r.kwargs]
ROUTES_NAMING_IN_BODY = [
    r for r in covered_routes() if ROUTES[r.name].names_objects_in_body or ROUTES[r.name].query
]
READABLE = [r for r in covered_routes() if "GET" in ROUTES[r.name].methods]


def test_every_url_is_in_the_table():
    routes = product_routes()
    unnamed = [r.pattern for r in routes if not r.name]
    missing = sorted(r.name for r in routes if r.name and r.name not in ROUTES)
    stale = sorted(set(ROUTES) - {r.name for r in routes})
    assert not unnamed, f"name every URL: {unnamed}"
    assert not missing, f"add these URLs to tests/security/routes.py ROUTES: {missing}"
    assert not stale, f"these ROUTES entries match no URL any more: {stale}"


def test_every_url_kwarg_names_a_known_model():
    unknown = sorted({k for r in covered_routes() for k in r.kwargs} - set(KWARG_MODELS))
    assert not unknown, f"add to KWARG_MODELS in tests/security/routes.py: {unknown}"


def _counts(data: TenantData, tag: str) -> dict[str, int]:
    org = data.org(tag)
    return {
        m._meta.label: m._base_manager.filter(organization=org).count() for m in rls.tenant_models()
    }


def _cross_references() -> list[str]:
    """Rows whose foreign key points at another organization's row (must be none)."""
    found = []
    for model in rls.tenant_models():
        for f in model._meta.concrete_fields:
            remote = f.related_model if f.is_relation else None
            if remote is None or isinstance(remote, str) or not rls.is_tenant_model(remote):
                continue
            rows = (
                model._base_manager.exclude(**{f"{f.name}__isnull": True})
                .exclude(**{f"{f.name}__organization": F("organization")})
                .aggregate(n=Count("pk"))["n"]
            )
            if rows:
                found.append(f"{model._meta.label}.{f.name}: {rows}")
    return found


def _assert_no_leak(response: Any, data: TenantData) -> None:
    content = response.content.decode(errors="replace")
    assert marker("B") not in content
    for label, row in data.rows["B"].items():
        if isinstance(row.pk, uuid.UUID):  # integer ids are too short to grep for
            assert str(row.pk) not in content, f"{label} {row.pk} of B leaked"


@pytest.mark.parametrize("route", ROUTES_WITH_KWARGS, ids=lambda r: r.name)
def test_objects_of_another_organization_are_404_on_every_method(tenants, route):
    rule = ROUTES[route.name]
    client = client_for(tenants.user("A", "admin"))
    before = _counts(tenants, "B")
    # All kwargs from B, then each kwarg alone from B among A's objects.
    combos = [dict.fromkeys(route.kwargs, "B")]
    if len(route.kwargs) > 1:
        for k in route.kwargs:
            combos.append({**dict.fromkeys(route.kwargs, "A"), k: "B"})
    for tags in combos:
        url = route.url(tenants, tags)
        for method in METHODS:
            body = rule.body(tenants, "A") if rule.body and method != "GET" else None
            query = rule.query(tenants, "A") if rule.query and method == "GET" else body
            response = request(client, route, method, url, query)
            # A method the URL serves answers 404; another one may answer 405 before
            # looking anything up.
            allowed = (404,) if method in rule.methods else (404, 405)
            assert response.status_code in allowed, f"{method} {url} {tags}: {response.status_code}"
            _assert_no_leak(response, tenants)
    assert _counts(tenants, "B") == before
    assert _cross_references() == []


@pytest.mark.parametrize("route", ROUTES_NAMING_IN_BODY, ids=lambda r: r.name)
def test_objects_of_another_organization_named_in_a_request_change_nothing(tenants, route):
    rule = ROUTES[route.name]
    client = client_for(tenants.user("A", "admin"))
    url = route.url(tenants, "A")
    before_a, before_b = _counts(tenants, "A"), _counts(tenants, "B")
    for method, role in rule.methods.items():
        if role == "public" or method == "DELETE":
            continue
        build = rule.query if method == "GET" else rule.body
        if build is None:
            continue
        response = request(client, route, method, url, build(tenants, "B"))
        status = response.status_code
        # Reading B's object is a 404; writing with it is refused (404, 4xx, or the form
        # shown again / redirected with its error) — and the database says nothing changed.
        if method == "GET":
            assert status == 404, f"GET {url} naming B's objects -> {status}"
        else:
            assert status < 500 and status != 201, f"{method} {url} naming B's -> {status}"
        _assert_no_leak(response, tenants)
    assert _counts(tenants, "B") == before_b
    assert _cross_references() == []
    after_a = _counts(tenants, "A")
    assert after_a == before_a, {k: after_a[k] - before_a[k] for k in after_a}


@pytest.mark.parametrize("route", READABLE, ids=lambda r: r.name)
def test_pages_and_lists_never_show_another_organizations_rows(tenants, route):
    rule = ROUTES[route.name]
    if rule.methods["GET"] == "public":
        client = client_for(tenants.user("A", "admin"))
        client.logout()
    else:
        client = client_for(tenants.user("A", "admin"))
    query = rule.query(tenants, "A") if rule.query else None
    response = request(client, route, "GET", route.url(tenants, "A"), query)
    assert response.status_code in (200, 204, 302), response.status_code
    _assert_no_leak(response, tenants)


def test_the_list_pages_do_show_the_organizations_own_rows(tenants):
    client = client_for(tenants.user("A", "admin"))
    seen = 0
    for route in READABLE:
        if route.kwargs or ROUTES[route.name].methods["GET"] == "public":
            continue
        query = ROUTES[route.name].query
        response = request(
            client, route, "GET", route.url(tenants, "A"), query(tenants, "A") if query else None
        )
        seen += marker("A") in response.content.decode(errors="replace")
    assert seen >= 4  # the leak checks above look at pages that really render data
