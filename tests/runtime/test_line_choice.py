"""Reading which line the customer means (issue 11 item 4): in an answer to "which line?"
and inside the request itself."""

from __future__ import annotations

from decimal import Decimal

import pytest

from conversation.runtime.line_choice import select_lines
from conversation.runtime.state import ResolvedInvoiceItem

OWN, OTHER, THIRD = "11987654321", "11912345678", "11955554444"


def aya(msisdn: str) -> ResolvedInvoiceItem:
    return ResolvedInvoiceItem(
        canonical_name="Aya Ensina",
        tool_category="cancelar_vas_avulso",
        item_type="avulso",
        msisdn=msisdn,
        value=Decimal("9.90"),
        section="SVA Detalhe Total",
    )


TWO = (aya(OWN), aya(OTHER))


def finals(items: tuple[ResolvedInvoiceItem, ...]) -> list[str]:
    return [i.msisdn[-4:] for i in items]


@pytest.mark.parametrize(
    "text",
    ["cancela o Aya Ensina das duas linhas", "nas duas linhas", "em todas as linhas", "ambas"],
)
def test_a_request_that_names_every_line_selects_every_line(text: str) -> None:
    picked = select_lines(text, TWO, own_msisdn=OWN, holder_msisdn=OWN, every=False)
    assert finals(picked) == ["4321", "5678"]


@pytest.mark.parametrize("text", ["cancela todos esses", "cancela os dois", "todos"])
def test_a_request_for_every_item_is_not_a_choice_of_lines(text: str) -> None:
    assert select_lines(text, TWO, own_msisdn=OWN, holder_msisdn=OWN, every=False) == ()


@pytest.mark.parametrize("text", ["a outra", "da outra linha", "o do outro número"])
def test_the_other_line_is_the_one_the_customer_does_not_write_from(text: str) -> None:
    assert finals(select_lines(text, TWO, own_msisdn=OWN, holder_msisdn=OWN)) == ["5678"]


def test_the_other_line_means_nothing_with_three_lines_or_from_a_line_not_listed() -> None:
    three = (*TWO, aya(THIRD))
    assert select_lines("a outra", three, own_msisdn=OWN, holder_msisdn=OWN) == ()
    assert select_lines("a outra", TWO, own_msisdn=THIRD, holder_msisdn=OWN) == ()
