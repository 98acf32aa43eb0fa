"""Tool inputs the offline model builds: always valid for the tool's declared JSON schema."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from conversation.text import trim

from ..base import ToolSpec
from ..schema_defaults import minimal_input
from .replies import HANDOFF_REASON_CODE, HANDOFF_REASON_TEXT

# Where ``send_message`` carries its text, by preference.
SEND_TEXT_FIELDS = ("text", "mensagem", "message")


def _properties(spec: ToolSpec) -> Mapping[str, Any]:
    props = spec.input_schema.get("properties")
    return props if isinstance(props, Mapping) else {}


def with_text(spec: ToolSpec, text: str, preferred: Sequence[str]) -> dict[str, Any]:
    """A valid input for ``spec`` carrying ``text`` in its main string field."""
    props = _properties(spec)
    field = next((f for f in preferred if f in props), None)
    if field is None:
        field = next(
            (k for k, v in props.items() if isinstance(v, Mapping) and v.get("type") == "string"),
            preferred[0],
        )
    return {**minimal_input(spec.input_schema), field: text}


def fill(spec: ToolSpec, values: Mapping[str, str]) -> dict[str, Any]:
    """A valid input for ``spec``: its minimal input with every declared field of ``values``
    (strings cut to the field's ``maxLength``)."""
    props = _properties(spec)
    tool_input = minimal_input(spec.input_schema)
    for key, value in values.items():
        field = props.get(key)
        if not isinstance(field, Mapping) or field.get("type") not in (None, "string"):
            continue
        limit = field.get("maxLength")
        tool_input[key] = trim(value, limit) if isinstance(limit, int) and limit > 1 else value
    return tool_input


def handoff_input(spec: ToolSpec) -> dict[str, Any]:
    props = _properties(spec)
    tool_input = minimal_input(spec.input_schema)
    # A schema that declares no properties gets the product's field names; otherwise only
    # declared fields are filled, so a closed schema stays valid.
    declared = set(props) if props else {"motivo_codigo", "motivo"}
    if "motivo_codigo" in declared:
        code_schema = props.get("motivo_codigo")
        enum = code_schema.get("enum") if isinstance(code_schema, Mapping) else None
        code = HANDOFF_REASON_CODE
        if isinstance(enum, list) and enum and code not in enum:
            code = enum[0]
        tool_input["motivo_codigo"] = code
    # The spec calls the free-text reason ``por_que`` (``reason`` legacy); the product's
    # schema says ``motivo``. Fill whichever the schema declares.
    for field in ("motivo", "por_que", "reason"):
        if field in declared:
            tool_input[field] = HANDOFF_REASON_TEXT
    return tool_input
