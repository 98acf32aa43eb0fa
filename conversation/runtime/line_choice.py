"""Which line the customer means when an item is on several lines (family invoices).

The runtime asks naming the lines as the customer sees them (final digits, the holder's
name for the first line, by the billing system's convention) and reads the usual answers:
"da linha final 5678", "o da 5678", the full number, "das duas", "da minha linha", "a
outra", "do titular", "do dependente". The same reading narrows a request that names its
line ("cancela o Aya Ensina da linha final 5678", "... das duas linhas").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .state import ResolvedInvoiceItem
from .textnorm import join_pt, last_digits, words

SUMMARY_SECTION = "Fatura Resumo"
_EVERY = (
    "das duas",
    "as duas",
    "nas duas",
    "ambas",
    "ambos",
    "os dois",
    "dos dois",
    "das 2",
    "todas",
    "todos",
    "em todas",
    "de todas",
    "as tres",
    "das tres",
)
# The phrases of ``_EVERY`` that name lines even inside a request: "cancela o Aya Ensina das
# duas linhas" is every line, while "cancela todos esses" is every listed item.
_EVERY_LINE = (
    "das duas",
    "nas duas",
    "as duas",
    "ambas",
    "ambas as linhas",
    "todas as linhas",
    "em todas as linhas",
    "de todas as linhas",
    "os dois numeros",
    "nos dois numeros",
    "dos dois numeros",
    "das 2",
    "nas 2",
    "das tres",
    "nas tres",
)
# "a outra" when there are two lines and the customer writes from one of them.
_OTHER = ("a outra", "da outra", "na outra", "outra linha", "o outro numero", "do outro numero")
_OWN = (
    "minha linha",
    "meu numero",
    "a minha",
    "o meu",
    "da minha",
    "do meu",
    "meu celular",
    "essa linha",
    "desta linha",
    "deste numero",
    "dessa linha",
)
_HOLDER = ("titular",)
_DEPENDENT = ("dependente", "dependentes")
# Digits the customer typed, with the spaces/dashes of a written number removed.
_DIGIT_GAP = re.compile(r"(?<=\d)[\s.\-()]+(?=\d)")
_DIGITS = re.compile(r"\d{4,}")


def _digits(msisdn: str) -> str:
    return "".join(ch for ch in msisdn if ch.isdigit())


def typed_numbers(text: str) -> list[str]:
    """Runs of four or more digits ("final 5678", "(11) 91234-5678")."""
    return _DIGITS.findall(_DIGIT_GAP.sub("", text))


def select_lines(
    text: str,
    candidates: Sequence[ResolvedInvoiceItem],
    *,
    own_msisdn: str,
    holder_msisdn: str,
    every: bool = True,
) -> tuple[ResolvedInvoiceItem, ...]:
    """The candidates on the lines ``text`` names; empty when it names none of them.

    ``every=False`` when reading a request rather than an answer to "which line?":
    "cancela todos esses" means every listed item, not every line.
    """
    form = f" {' '.join(words(text))} "
    numbers = typed_numbers(text)
    all_lines = any(f" {w} " in form for w in (_EVERY if every else _EVERY_LINE))
    lines = {c.msisdn for c in candidates}
    other = (
        next(iter(lines - {own_msisdn}))
        if len(lines) == 2 and own_msisdn in lines and any(f" {w} " in form for w in _OTHER)
        else None
    )
    picked: list[ResolvedInvoiceItem] = []
    for item in candidates:
        line = _digits(item.msisdn)
        by_number = any(line.endswith(n) or n.endswith(line) for n in numbers if line)
        if (
            by_number
            or all_lines
            or item.msisdn == other
            or (item.msisdn == own_msisdn and any(f" {w} " in form for w in _OWN))
            or (item.msisdn == holder_msisdn and any(f" {w} " in form for w in _HOLDER))
            or (item.msisdn != holder_msisdn and any(f" {w} " in form for w in _DEPENDENT))
        ):
            picked.append(item)
    return tuple(picked)


def holder_line(invoice_detail: Mapping[str, Any]) -> str:
    """The account holder's line: the first line of the invoice (billing convention)."""
    for msisdn, sections in invoice_detail.items():
        if msisdn != SUMMARY_SECTION and isinstance(sections, Mapping):
            return str(msisdn)
    return ""


def holder_name(invoice_detail: Mapping[str, Any]) -> str:
    summary = invoice_detail.get(SUMMARY_SECTION)
    name = summary.get("titular") if isinstance(summary, Mapping) else None
    return name.strip() if isinstance(name, str) else ""


def describe_lines(items: Sequence[ResolvedInvoiceItem], invoice_detail: Mapping[str, Any]) -> str:
    """ "final 4321 (titular, Maria Souza) e final 5678" — the lines as the customer sees them."""
    holder = holder_line(invoice_detail)
    name = holder_name(invoice_detail)
    labels = []
    for msisdn in dict.fromkeys(i.msisdn for i in items):
        label = f"final {last_digits(msisdn)}"
        if msisdn == holder:
            label += f" (titular, {name})" if name else " (titular)"
        labels.append(label)
    return join_pt(labels)
