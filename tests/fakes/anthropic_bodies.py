"""Response bodies in the real Messages API wire format, from the recorded exchanges in
tests/fixtures/anthropic, with only the tool name/input or the text swapped for ours."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TOOL_USE = "response_tool_use_haiku45_sdk.json"


def recorded(name: str, folder: str = "anthropic") -> dict[str, Any]:
    data = json.loads((FIXTURES / folder / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def tool_use_response(
    name: str, tool_input: dict[str, Any], *, base: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A recorded tool_use response (``base``, by default the SDK's) calling our tool."""
    body = copy.deepcopy(base or recorded(TOOL_USE))
    block = body["content"][0]
    block["name"], block["input"] = name, tool_input
    return body


def text_response(text: str = "Pronto.") -> dict[str, Any]:
    """The recorded response turned into a plain-text answer that ends the turn."""
    body = copy.deepcopy(recorded(TOOL_USE))
    body["content"] = [{"type": "text", "text": text}]
    body["stop_reason"] = "end_turn"
    return body
