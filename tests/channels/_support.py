"""Helpers shared by the channel adapter tests (pure Python: no Django, no network)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "whatsapp"
FIXED_NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def strip_jsonc(text: str) -> str:
    """Drop ``// comments`` (outside strings) and the docs' ``...`` placeholder lines."""
    out: list[str] = []
    in_string = escaped = False
    i = 0
    while i < len(text):
        ch = text[i]
        if in_string:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif text.startswith("//", i):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(ch)
        i += 1
    lines = [line for line in "".join(out).splitlines() if line.strip() != "..."]
    return "\n".join(lines)


def load_fixture(relative: str) -> Any:
    path = FIXTURES / relative
    text = path.read_text(encoding="utf-8")
    return json.loads(strip_jsonc(text) if path.suffix == ".jsonc" else text)


def encode(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode()
