"""The OpenAPI schema is complete, and schemathesis finds no server error in the API.

Schemathesis generates requests from the schema (bounded: ``MAX_EXAMPLES`` per
operation) and sends them through Django's WSGI application as an admin of organization
A, session and CSRF token included, with path parameters naming A's real rows so the
requests reach the handlers instead of stopping at a 404.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings

from tests.security.conftest import client_for
from tests.security.routes import KWARG_MODELS, ROUTES, product_routes
from tests.security.tenant_data import TenantData

MAX_EXAMPLES = 25
CSRF_SECRET = "A" * 32  # an unmasked token: cookie and header carry the same secret


def _raw_schema() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)  # type: ignore[no-any-return]


RAW_SCHEMA = _raw_schema()
schema = schemathesis.openapi.from_dict(RAW_SCHEMA)
WSGI_APP = WSGIHandler()


def _openapi_path(pattern: str) -> str:
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", pattern)


def test_every_api_url_and_method_is_in_the_schema():
    api = [r for r in product_routes() if r.is_api and r.name not in ("api-schema", "api-docs")]
    paths = RAW_SCHEMA["paths"]
    missing = []
    for route in api:
        path = _openapi_path(route.pattern)
        for method in ROUTES[route.name].methods:
            if method.lower() not in paths.get(path, {}):
                missing.append(f"{method} {path}")
    assert api, "the walk found the API"
    assert not missing, f"not in the OpenAPI schema: {missing}"


def test_the_schema_is_served_to_logged_in_users_only(tenants):
    from django.test import Client

    assert Client().get("/api/v1/schema/").status_code == 401
    response = client_for(tenants.user("A", "viewer")).get("/api/v1/schema/?format=json")
    assert response.status_code == 200
    assert set(response.json()["paths"]) == set(RAW_SCHEMA["paths"])


def _authenticate(tenants: TenantData) -> dict[str, Any]:
    client = client_for(tenants.user("A", "admin"))
    return {
        "cookies": {"sessionid": client.cookies["sessionid"].value, "csrftoken": CSRF_SECRET},
        "headers": {"X-CSRFToken": CSRF_SECRET},
    }


@pytest.fixture
def admin_session(tenants: TenantData) -> Any:
    # Like Django's test client: a request must not close the test's connection
    # (its transaction is the test's isolation).
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield tenants, _authenticate(tenants)
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
)
def test_the_api_answers_generated_requests_without_server_errors(case, admin_session):
    tenants, auth = admin_session
    for name in list(case.path_parameters or {}):
        if name in KWARG_MODELS:
            case.path_parameters[name] = str(tenants.row("A", KWARG_MODELS[name]).pk)
    response = case.call(app=WSGI_APP, cookies=auth["cookies"], headers=auth["headers"])
    assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.text}"
    if response.status_code >= 400:
        # Every error speaks the one envelope.
        error = response.json()["error"]
        assert error["code"] and error["message"]
