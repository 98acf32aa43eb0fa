"""The OpenAPI schema describes the API's errors as they are answered (DESIGN §8): every
operation needs a login (401) and a role (403), and every error response of every
operation is the one envelope ``{"error": {"code", "message", "fields"?}}`` — a client
generated from the schema can read ``error.code`` of any refusal."""

from __future__ import annotations

from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def _operations(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{method.upper()} {path}", operation)
        for path, operations in schema["paths"].items()
        if path.startswith("/api/v1/ai/")
        for method, operation in operations.items()
    ]


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def test_every_operation_documents_the_login_and_the_role(schema):
    operations = _operations(schema)
    assert len(operations) >= 15
    missing = [
        f"{name} {code}"
        for name, operation in operations
        for code in ("401", "403")
        if code not in operation["responses"]
    ]
    assert not missing


def test_every_error_response_is_the_envelope(schema):
    wrong = []
    for name, operation in _operations(schema):
        for code, response in operation["responses"].items():
            if not code.startswith("4"):
                continue
            body = response.get("content", {}).get("application/json", {}).get("schema")
            if body is None:
                wrong.append(f"{name} {code}: no body")
                continue
            envelope = _resolve(schema, body)
            error = _resolve(schema, envelope.get("properties", {}).get("error", {}))
            if not {"code", "message"} <= set(error.get("required", ())):
                wrong.append(f"{name} {code}: not the error envelope")
    assert not wrong, "\n".join(wrong)


def test_an_operation_that_reads_input_documents_its_422(schema):
    missing = [
        name
        for name, operation in _operations(schema)
        if (
            operation.get("requestBody")
            or any(p["in"] == "query" for p in operation.get("parameters", []))
        )
        and "422" not in operation["responses"]
    ]
    assert not missing
