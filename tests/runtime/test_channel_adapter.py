from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

import pytest

from conversation.runtime.channel_adapter import (
    ChannelAdapter,
    format_brl,
    format_msisdn,
    number_to_words,
    to_date,
    to_decimal,
    vocalize_brl,
)
from conversation.runtime.state import Channel


@pytest.mark.parametrize(
    ("n", "words"),
    [
        (0, "zero"),
        (1, "um"),
        (16, "dezesseis"),
        (21, "vinte e um"),
        (100, "cem"),
        (101, "cento e um"),
        (999, "novecentos e noventa e nove"),
        (1000, "mil"),
        (1100, "mil e cem"),
        (1234, "mil duzentos e trinta e quatro"),
        (2025, "dois mil e vinte e cinco"),
        (1_000_000, "um milhão"),
        (3_000_000_000, "três bilhões"),
    ],
)
def test_number_to_words(n: int, words: str) -> None:
    assert number_to_words(n) == words


def test_number_to_words_rejects_out_of_range() -> None:
    with pytest.raises(ValueError):
        number_to_words(-1)


@pytest.mark.parametrize(
    ("amount", "text", "voice"),
    [
        (
            Decimal("1234.5"),
            "R$ 1.234,50",
            "mil duzentos e trinta e quatro reais e cinquenta centavos",
        ),
        (Decimal("1.01"), "R$ 1,01", "um real e um centavo"),
        (Decimal("0.5"), "R$ 0,50", "cinquenta centavos"),
        (Decimal("0"), "R$ 0,00", "zero reais"),
        (Decimal("2000000"), "R$ 2.000.000,00", "dois milhões de reais"),
        (Decimal("-3"), "-R$ 3,00", "menos três reais"),
    ],
)
def test_currency_text_and_voice(amount: Decimal, text: str, voice: str) -> None:
    assert format_brl(amount) == text
    assert vocalize_brl(amount) == voice


@pytest.mark.parametrize("bad", ["abc", True, None, [1]])
def test_to_decimal_rejects_non_amounts(bad: object) -> None:
    with pytest.raises(ValueError):
        to_decimal(bad)


def test_to_date_accepts_dates_datetimes_and_iso_strings() -> None:
    assert to_date(datetime(2025, 3, 10, 8, 0)) == date(2025, 3, 10)
    assert to_date("2025-03-10T10:00:00") == date(2025, 3, 10)
    with pytest.raises(ValueError):
        to_date("10/03/2025")
    with pytest.raises(ValueError):
        to_date(20250310)


@pytest.mark.parametrize(
    ("digits", "formatted"),
    [("11987654321", "(11) 98765-4321"), ("1133334444", "(11) 3333-4444"), ("123", "123")],
)
def test_format_msisdn(digits: str, formatted: str) -> None:
    assert format_msisdn(digits) == formatted


def test_raw_format_is_the_same_on_both_channels() -> None:
    adapter = ChannelAdapter()
    assert adapter.format(42, "raw", Channel.VOICE) == adapter.format(42, "raw", Channel.TEXT)


def test_unknown_format_raises() -> None:
    with pytest.raises(ValueError):
        ChannelAdapter().format(1, "roman", Channel.TEXT)  # type: ignore[arg-type]


def test_line_final_is_spelled_only_on_voice() -> None:
    adapter = ChannelAdapter()
    assert adapter.line_final("11987654321", Channel.TEXT) == "4321"
    assert adapter.line_final("11987654321", Channel.VOICE) == "quatro três dois um"
