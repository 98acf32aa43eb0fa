"""Tokens → money (pure: no database)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from analytics.prices import Price, PriceBook, Tokens, tokens_cost

D = Decimal


def _price(model: str, day: dt.date, inp: str = "1") -> Price:
    return Price(model, D(inp), D("5"), D("1.25"), D("0.10"), day)


def test_the_cost_adds_each_token_kind_at_its_rate():
    price = _price("claude-haiku-4-5", dt.date(2025, 1, 1))
    tokens = Tokens(input=1000, output=200, cache_read=5000, cache_write=2000)
    # (1000·1 + 200·5 + 5000·0.10 + 2000·1.25) / 1e6
    assert tokens_cost(price, tokens) == D("0.005")


def test_the_longest_model_prefix_prices_a_dated_model_name():
    book = PriceBook(
        [
            _price("claude-sonnet-4", dt.date(2025, 1, 1), "9"),
            _price("claude-sonnet-4-5", dt.date(2025, 1, 1), "3"),
        ]
    )
    assert book.price("claude-sonnet-4-5-20250929", dt.date(2026, 1, 1)).input_per_mtok == D("3")
    assert book.price("claude-sonnet-4-20250514", dt.date(2026, 1, 1)).input_per_mtok == D("9")
    assert book.price("claude-sonnet-45", dt.date(2026, 1, 1)) is None  # not a prefix match
    assert book.cost("nobody-priced-me", dt.date(2026, 1, 1), Tokens(input=10)) is None
    assert book.cost("offline", dt.date(2026, 1, 1), Tokens(input=10)) == 0  # runs here


def test_a_newer_version_of_a_model_is_not_priced_as_the_older_one():
    # "claude-opus-4" was US$ 15 per million input tokens; a later Opus 4.x is another
    # model with its own price: unpriced (and said so) until the list has it.
    book = PriceBook([_price("claude-opus-4", dt.date(2025, 1, 1), "15")])
    day = dt.date(2026, 12, 1)
    assert book.price("claude-opus-4-7", day) is None
    assert book.price("claude-opus-4-8", day) is None
    assert book.price("claude-opus-4-20250514", day).input_per_mtok == D("15")
    assert book.price("claude-opus-4@20250514", day).input_per_mtok == D("15")
    assert book.price("claude-opus-4-latest", day).input_per_mtok == D("15")


def test_the_price_in_effect_on_the_calls_day_applies():
    book = PriceBook([_price("m", dt.date(2026, 1, 1), "1"), _price("m", dt.date(2026, 6, 1), "2")])
    assert book.price("m", dt.date(2025, 12, 31)) is None
    assert book.price("m", dt.date(2026, 5, 31)).input_per_mtok == D("1")
    assert book.price("m", dt.date(2026, 6, 1)).input_per_mtok == D("2")


@given(
    a=st.integers(min_value=0, max_value=10**9),
    b=st.integers(min_value=0, max_value=10**9),
)
def test_the_cost_of_two_calls_is_the_cost_of_their_tokens_together(a, b):
    price = _price("m", dt.date(2025, 1, 1))
    one = tokens_cost(price, Tokens(input=a, output=b))
    two = tokens_cost(price, Tokens(input=a)) + tokens_cost(price, Tokens(output=b))
    assert one == two
