"""Render values per channel: text keeps canonical notation, voice vocalizes it (pt-BR)."""

from __future__ import annotations

from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, Literal

from .state import Channel
from .textnorm import last_digits

ParameterFormat = Literal["currency_brl", "date_long", "protocol_digits", "msisdn_digits", "raw"]
PARAMETER_FORMATS: tuple[ParameterFormat, ...] = (
    "currency_brl",
    "date_long",
    "protocol_digits",
    "msisdn_digits",
    "raw",
)

# fmt: off
_UNITS = [
    "zero", "um", "dois", "três", "quatro", "cinco", "seis", "sete", "oito", "nove", "dez",
    "onze", "doze", "treze", "quatorze", "quinze", "dezesseis", "dezessete", "dezoito",
    "dezenove",
]
_TENS = [
    "_", "_", "vinte", "trinta", "quarenta", "cinquenta", "sessenta", "setenta", "oitenta",
    "noventa",
]
_HUNDREDS = [
    "_", "cento", "duzentos", "trezentos", "quatrocentos", "quinhentos", "seiscentos",
    "setecentos", "oitocentos", "novecentos",
]
_MONTHS = [
    "janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro",
    "outubro", "novembro", "dezembro",
]
# fmt: on
_CENT = Decimal("0.01")


def number_to_words(n: int) -> str:
    """Cardinal number in pt-BR words, 0 <= n < 10**12 ("dois mil e vinte e cinco")."""
    if not 0 <= n < 10**12:
        raise ValueError(f"number out of range: {n}")
    if n == 0:
        return "zero"
    groups = []  # (value, scale) from the largest scale down
    for scale, (singular, plural) in (
        (10**9, ("bilhão", "bilhões")),
        (10**6, ("milhão", "milhões")),
        (10**3, ("mil", "mil")),
    ):
        count, n = divmod(n, scale)
        if count:
            if scale == 10**3:
                groups.append("mil" if count == 1 else f"{_below_thousand(count)} mil")
            else:
                groups.append(f"{_below_thousand(count)} {singular if count == 1 else plural}")
    if n:
        # "mil e cem", "mil e vinte", but "mil duzentos e trinta"
        joiner = " e " if groups and (n < 100 or n % 100 == 0) else " "
        return (" ".join(groups) + joiner if groups else "") + _below_thousand(n)
    return " ".join(groups)


def _below_thousand(n: int) -> str:
    if n == 100:
        return "cem"
    hundreds, rest = divmod(n, 100)
    parts = [_HUNDREDS[hundreds]] if hundreds else []
    if rest:
        if rest < 20:
            parts.append(_UNITS[rest])
        else:
            tens, units = divmod(rest, 10)
            parts.append(_TENS[tens] + (f" e {_UNITS[units]}" if units else ""))
    return " e ".join(parts)


def to_decimal(value: Any) -> Decimal:
    if isinstance(value, Decimal):
        return value
    if isinstance(value, bool):
        raise ValueError("a boolean is not an amount")
    if isinstance(value, int | float):
        return Decimal(str(value))
    if isinstance(value, str):
        text = value.replace("R$", "").strip()
        if "," in text:
            text = text.replace(".", "").replace(",", ".")
        try:
            return Decimal(text)
        except InvalidOperation as exc:
            raise ValueError(f"not an amount: {value!r}") from exc
    raise ValueError(f"not an amount: {value!r}")


def format_brl(amount: Decimal) -> str:
    """``Decimal("1234.5")`` -> ``"R$ 1.234,50"``."""
    q = amount.quantize(_CENT, rounding=ROUND_HALF_UP)
    sign = "-" if q < 0 else ""
    whole, cents = f"{abs(q):.2f}".split(".")
    grouped = f"{int(whole):,}".replace(",", ".")
    return f"{sign}R$ {grouped},{cents}"


def vocalize_brl(amount: Decimal) -> str:
    q = amount.quantize(_CENT, rounding=ROUND_HALF_UP)
    if q < 0:
        return "menos " + vocalize_brl(-q)
    reais = int(q)
    cents = int((q - reais) * 100)
    parts = []
    if reais or not cents:
        unit = "real" if reais == 1 else "reais"
        # "um milhão de reais"
        de = " de" if reais >= 10**6 and reais % 10**6 == 0 else ""
        parts.append(f"{number_to_words(reais)}{de} {unit}")
    if cents:
        parts.append(f"{number_to_words(cents)} {'centavo' if cents == 1 else 'centavos'}")
    return " e ".join(parts)


def to_date(value: Any) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip()[:10])
        except ValueError as exc:
            raise ValueError(f"not an ISO date: {value!r}") from exc
    raise ValueError(f"not a date: {value!r}")


def format_date_long(d: date) -> str:
    return f"{d.day} de {_MONTHS[d.month - 1]} de {d.year}"


def vocalize_date(d: date) -> str:
    day = "primeiro" if d.day == 1 else number_to_words(d.day)
    return f"{day} de {_MONTHS[d.month - 1]} de {number_to_words(d.year)}"


def digits_of(value: Any) -> str:
    return "".join(ch for ch in str(value) if ch.isdigit())


def spell_digits(digits: str) -> str:
    return " ".join(_UNITS[int(ch)] for ch in digits)


def national_digits(digits: str) -> str:
    """Drop Brazil's country code: customers say and read their number without it."""
    return digits[2:] if len(digits) == 13 and digits.startswith("55") else digits


def format_msisdn(digits: str) -> str:
    """Brazilian line number: ``(11) 98765-4321``; other lengths stay as digits."""
    digits = national_digits(digits)
    if len(digits) == 11:
        return f"({digits[:2]}) {digits[2:7]}-{digits[7:]}"
    if len(digits) == 10:
        return f"({digits[:2]}) {digits[2:6]}-{digits[6:]}"
    return digits


class ChannelAdapter:
    """Turns typed parameter values into channel-appropriate text."""

    def format(self, value: Any, fmt: ParameterFormat, channel: Channel) -> str:
        voice = channel is Channel.VOICE
        if fmt == "currency_brl":
            amount = to_decimal(value)
            return vocalize_brl(amount) if voice else format_brl(amount)
        if fmt == "date_long":
            d = to_date(value)
            return vocalize_date(d) if voice else format_date_long(d)
        if fmt == "protocol_digits":
            digits = digits_of(value)
            return spell_digits(digits) if voice else digits
        if fmt == "msisdn_digits":
            digits = national_digits(digits_of(value))
            return spell_digits(digits) if voice else format_msisdn(digits)
        if fmt == "raw":
            return str(value)
        raise ValueError(f"unknown parameter format: {fmt!r}")

    def line_final(self, msisdn: str, channel: Channel) -> str:
        """The four final digits of a line; spelled out on voice ("quatro três dois um")."""
        final = last_digits(msisdn)
        return spell_digits(final) if channel is Channel.VOICE and final.isdigit() else final
