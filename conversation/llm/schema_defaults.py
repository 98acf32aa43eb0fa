"""Minimal values that satisfy a tool's JSON schema.

Used by the offline model to answer a forced tool call with a schema-valid "no opinion":
required properties only, the ``"none"`` enum value where one exists (else the first),
0 for numbers, empty strings and lists. Covers the JSON-schema subset tool schemas use
(type, properties, required, enum, const, anyOf/oneOf, minimum, minLength, minItems);
``$ref`` is not followed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def minimal_input(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The smallest object valid for an object schema: required properties only."""
    value = _minimal_value(schema, depth=0)
    return value if isinstance(value, dict) else {}


def _minimal_value(schema: object, *, depth: int) -> Any:
    if not isinstance(schema, Mapping) or depth > 8:
        return None
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return "none" if "none" in enum else enum[0]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return _minimal_value(options[0], depth=depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        if "null" in kind:
            return None
        kind = kind[0] if kind else None
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        required = schema.get("required")
        required = required if isinstance(required, list) else []
        return {
            name: _minimal_value(props.get(name, {}), depth=depth + 1)
            for name in required
            if isinstance(name, str)
        }
    if kind == "string":
        min_length = schema.get("minLength")
        return "-" * min_length if isinstance(min_length, int) and min_length > 0 else ""
    if kind in ("number", "integer"):
        minimum = schema.get("minimum")
        if isinstance(minimum, int | float) and not isinstance(minimum, bool) and minimum > 0:
            return minimum
        return 0
    if kind == "boolean":
        return False
    if kind == "array":
        min_items = schema.get("minItems")
        count = min_items if isinstance(min_items, int) and min_items > 0 else 0
        return [_minimal_value(schema.get("items", {}), depth=depth + 1) for _ in range(count)]
    return None
