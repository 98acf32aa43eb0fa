"""Tokens → money. A ``PriceBook`` holds every ``ModelPrice`` row (one query) and prices a
token count of one model on one day: the row of the model's name — or of the name its
snapshot carries ("claude-haiku-4-5-20251001", "claude-opus-4@20250514",
"claude-3-7-sonnet-latest") — newest effective date on or before the day. A newer version
is another model: "claude-opus-4" does not price "claude-opus-4-7". The offline model runs
here and costs nothing; a model nobody priced costs nothing and is reported as unpriced
(by name, so the staff can ask for its price), never guessed."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from analytics.models import ModelPrice

MILLION = Decimal(1_000_000)
ZERO = Decimal(0)
FREE_MODELS = frozenset({"offline"})  # the embedded model (conversation.llm.offline)
# What may follow a priced name in a model name: a snapshot of that model, not a version.
_SNAPSHOT = re.compile(r"-(?:\d{8}|latest)|@.+")


@dataclass(frozen=True)
class Price:
    model: str
    input_per_mtok: Decimal
    output_per_mtok: Decimal
    cache_write_per_mtok: Decimal
    cache_read_per_mtok: Decimal
    effective_date: dt.date


@dataclass(frozen=True)
class Tokens:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0


def tokens_cost(price: Price, tokens: Tokens) -> Decimal:
    """US$ of ``tokens`` at ``price`` (exact decimal; rounded only when shown)."""
    return (
        tokens.input * price.input_per_mtok
        + tokens.output * price.output_per_mtok
        + tokens.cache_read * price.cache_read_per_mtok
        + tokens.cache_write * price.cache_write_per_mtok
    ) / MILLION


class PriceBook:
    def __init__(self, prices: Iterable[Price]) -> None:
        by_model: dict[str, list[Price]] = {}
        for p in prices:
            by_model.setdefault(p.model, []).append(p)
        for rows in by_model.values():
            rows.sort(key=lambda p: p.effective_date, reverse=True)
        self._by_model = by_model
        # Longest name first: "claude-haiku-4-5" before "claude-haiku-4".
        self._models = sorted(by_model, key=len, reverse=True)
        self._memo: dict[tuple[str, dt.date], Price | None] = {}

    @classmethod
    def load(cls) -> PriceBook:
        return cls(
            Price(
                model=r.model,
                input_per_mtok=r.input_per_mtok,
                output_per_mtok=r.output_per_mtok,
                cache_write_per_mtok=r.cache_write_per_mtok,
                cache_read_per_mtok=r.cache_read_per_mtok,
                effective_date=r.effective_date,
            )
            for r in ModelPrice.objects.all()
        )

    def price(self, model: str, day: dt.date) -> Price | None:
        key = (model, day)
        if key not in self._memo:
            self._memo[key] = self._lookup(model, day)
        return self._memo[key]

    def _lookup(self, model: str, day: dt.date) -> Price | None:
        for name in self._models:
            if model == name or (
                model.startswith(name) and _SNAPSHOT.fullmatch(model, len(name)) is not None
            ):
                for p in self._by_model[name]:
                    if p.effective_date <= day:
                        return p
                return None  # priced only from a later date: not priced on this day
        return None

    def cost(self, model: str, day: dt.date, tokens: Tokens) -> Decimal | None:
        """US$, or None when the model has no price on ``day``."""
        if model in FREE_MODELS:
            return ZERO
        price = self.price(model, day)
        return None if price is None else tokens_cost(price, tokens)
