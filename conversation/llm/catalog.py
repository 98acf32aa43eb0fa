"""The Claude models an agent may run on, and their end of life — both read from the
installed Anthropic SDK, so upgrading the SDK updates the list and the warnings.

- ``anthropic_models()``: the ``Literal`` of ``anthropic.types.Model`` (newest first).
- ``end_of_life(model)``: the SDK's own deprecation table (``anthropic._data``: the dates it
  warns about on every call, e.g. ``claude-sonnet-4-5`` → 2026-11-30); None when the SDK
  names no date. The table is private to the SDK: if a release moves it, no model has a
  date rather than the page breaking.
- ``lifecycle(model, today)``: ``active``, ``near_eol`` (within ``NEAR_EOL_DAYS``) or
  ``past_eol``, for the agent page's warning and the select's labels.
- ``enabled_models(org_settings)``: ``settings["llm"]["enabled_models"]`` when the
  organization restricts its models (None: any model).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from functools import cache
from typing import Literal, get_args

NEAR_EOL_DAYS = 90
Status = Literal["active", "near_eol", "past_eol"]

_MONTHS = {
    m: i
    for i, m in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        start=1,
    )
}
_SDK_DATE = re.compile(r"^\s*([A-Za-z]+)\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\s*$")
_ISO_DATE = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})\s*$")


@dataclass(frozen=True)
class Lifecycle:
    model: str
    status: Status
    end_of_life: date | None = None

    @property
    def warns(self) -> bool:
        return self.status != "active"


@cache
def anthropic_models() -> tuple[str, ...]:
    """Every model name the SDK's ``Model`` type lists, in its order (newest first)."""
    try:
        from anthropic.types.model import Model
    except ImportError:  # pragma: no cover — the SDK is a pinned dependency
        return ()
    names: list[str] = []
    for arg in get_args(Model):
        names += [a for a in get_args(arg) if isinstance(a, str)]
    return tuple(dict.fromkeys(names))


def parse_sdk_date(text: str) -> date | None:
    """``"November 30th, 2026"`` (the SDK's wording) or ``2026-11-30``; None otherwise."""
    iso = _ISO_DATE.match(text or "")
    try:
        if iso:
            return date(int(iso[1]), int(iso[2]), int(iso[3]))
        found = _SDK_DATE.match(text or "")
        if found and found[1].lower() in _MONTHS:
            return date(int(found[3]), _MONTHS[found[1].lower()], int(found[2]))
    except ValueError:
        return None
    return None


@cache
def _deprecations() -> dict[str, date]:
    try:
        from anthropic._data import DEPRECATED_MODELS
    except ImportError:
        return {}
    out = {}
    for model, when in dict(DEPRECATED_MODELS).items():
        parsed = parse_sdk_date(str(when))
        if parsed is not None:
            out[str(model)] = parsed
    return out


def end_of_life(model: str) -> date | None:
    return _deprecations().get(model)


def lifecycle(model: str, today: date) -> Lifecycle:
    eol = end_of_life(model)
    if eol is None:
        return Lifecycle(model, "active")
    if eol <= today:
        return Lifecycle(model, "past_eol", eol)
    if (eol - today).days <= NEAR_EOL_DAYS:
        return Lifecycle(model, "near_eol", eol)
    return Lifecycle(model, "active", eol)


def enabled_models(org_settings: object) -> frozenset[str] | None:
    if not isinstance(org_settings, Mapping):
        return None
    llm = org_settings.get("llm")
    models = llm.get("enabled_models") if isinstance(llm, Mapping) else None
    if not isinstance(models, list):
        return None
    return frozenset(str(m) for m in models)


def choosable_models(
    org_settings: object, today: date, *, keep: str = ""
) -> list[tuple[str, Lifecycle]]:
    """The models an agent may be set to: the SDK's, within the organization's enabled
    list, without those past their end of life — plus ``keep`` (the agent's current model,
    so saving other fields never forces a model change)."""
    allowed = enabled_models(org_settings)
    out = []
    for model in anthropic_models():
        state = lifecycle(model, today)
        if model == keep or ((allowed is None or model in allowed) and state.status != "past_eol"):
            out.append((model, state))
    if keep and keep not in {m for m, _ in out}:
        out.insert(0, (keep, lifecycle(keep, today)))
    return out
