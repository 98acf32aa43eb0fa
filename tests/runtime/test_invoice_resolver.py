from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from conversation.runtime.invoice_resolver import InvoiceResolver
from conversation.runtime.item_matcher import FuzzyItemMatcher, ItemMatcherError

from .conftest import LINE_A, LINE_B, ScriptedMatcher


def names(items: Any) -> list[tuple[str, str]]:
    return [(i.canonical_name, i.msisdn) for i in items]


def test_fixture_covers_the_four_sections(invoice: dict[str, Any]) -> None:
    sections = {s for line, data in invoice.items() if line != "Fatura Resumo" for s in data}
    assert {
        "SVA Detalhe Total",
        "Itens Eventuais",
        "Serviços Contratados de Terceiros",
        "Serviços Bundle Inclusos",
    } <= sections


def test_strategic_item_in_third_party_section(invoice: dict[str, Any]) -> None:
    (item,) = InvoiceResolver().resolve_items(["HBO Max"], invoice)
    assert item.item_type == "estrategico" and item.tool_category == "vas_estrategico"
    assert item.section == "Serviços Contratados de Terceiros" and item.value == Decimal("34.90")


def test_strategic_name_wins_even_in_an_avulso_section() -> None:
    detail = {LINE_A: {"SVA Detalhe Total": [{"desc": "Netflix Mensal", "valor": "R$ 39,90"}]}}
    (item,) = InvoiceResolver().resolve_items(["netflix"], detail)
    assert item.item_type == "estrategico" and item.tool_category == "vas_estrategico"


def test_avulso_item_in_sva_detalhe_total(invoice: dict[str, Any]) -> None:
    (item,) = InvoiceResolver().resolve_items(["vod"], invoice)
    assert item.canonical_name == "Vivo Play VOD" and item.item_type == "avulso"
    assert item.tool_category == "cancelar_vas_avulso" and item.section == "SVA Detalhe Total"
    assert item.raw_entry["data_contratacao"] == "2025-01-15"


def test_avulso_item_in_itens_eventuais(invoice: dict[str, Any]) -> None:
    (item,) = InvoiceResolver().resolve_items(["jogo premium"], invoice)
    assert item.section == "Itens Eventuais" and item.tool_category == "cancelar_vas_avulso"


def test_bundle_item_goes_to_strategic_tool(invoice: dict[str, Any]) -> None:
    (item,) = InvoiceResolver().resolve_items(["netflix"], invoice)
    assert item.item_type == "bundle" and item.tool_category == "vas_estrategico"
    assert item.value == Decimal("0.00")


def test_mention_containing_the_description_matches_both_ways(invoice: dict[str, Any]) -> None:
    assert names(InvoiceResolver().resolve_items(["o hbo max da minha linha"], invoice)) == [
        ("HBO Max", LINE_A)
    ]


def test_dedupe_same_item_listed_in_two_rows_of_a_line() -> None:
    detail = {
        LINE_A: {
            "SVA Detalhe Total": [{"desc": "Tamboro", "valor": "R$ 12,90"}],
            "Itens Eventuais": [{"desc": "TAMBORO", "valor": "R$ 12,90"}],
        }
    }
    assert len(InvoiceResolver().resolve_items(["tamboro"], detail)) == 1


def test_same_item_on_two_lines_keeps_both_lines(invoice: dict[str, Any]) -> None:
    assert names(InvoiceResolver().resolve_items(["aya"], invoice)) == [
        ("Aya Ensina", LINE_A),
        ("Aya Ensina", LINE_B),
    ]


def test_msisdn_comes_from_the_matching_entry_not_the_holder(invoice: dict[str, Any]) -> None:
    (item,) = InvoiceResolver().resolve_items(["Revista Digital"], invoice)
    assert item.msisdn == LINE_B


def test_summary_and_unknown_sections_are_ignored(invoice: dict[str, Any]) -> None:
    assert InvoiceResolver().resolve_items(["Vivo Controle", "titular"], invoice) == []


def test_blank_and_one_letter_mentions_match_nothing(invoice: dict[str, Any]) -> None:
    assert InvoiceResolver().resolve_items(["", " ", "a"], invoice) == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("R$ 1.234,50", Decimal("1234.50")),
        ("14,90", Decimal("14.90")),
        ("14.90", Decimal("14.90")),
        (14.9, Decimal("14.90")),
        (3, Decimal("3.00")),
        (Decimal("2.5"), Decimal("2.5")),
        ("grátis", None),
        ("", None),
        (None, None),
        (True, None),
        ([1], None),
        ("1,2,3", None),
    ],
)
def test_parse_money(raw: object, expected: Decimal | None) -> None:
    assert InvoiceResolver._parse_money(raw) == expected


def test_resolve_separates_resolved_ambiguous_and_not_found(invoice: dict[str, Any]) -> None:
    outcome = InvoiceResolver().resolve(["VOD", "aya", "xyzflix"], invoice)
    assert names(outcome.resolved) == [("Vivo Play VOD", LINE_A)]
    (amb,) = outcome.ambiguous
    assert amb.mention == "aya" and amb.is_ambiguous and len(amb.matches) == 2
    assert outcome.not_found == ("xyzflix",) and outcome.has_ambiguity


def test_resolve_two_distinct_names_for_one_mention_is_ambiguous() -> None:
    detail = {LINE_A: {"SVA Detalhe Total": [{"desc": "Aya Ensina"}, {"desc": "Aya Idiomas"}]}}
    outcome = InvoiceResolver().resolve(["aya"], detail)
    assert outcome.resolved == () and len(outcome.ambiguous[0].matches) == 2


def test_resolve_calls_matcher_only_on_a_miss(invoice: dict[str, Any]) -> None:
    matcher = ScriptedMatcher({"aia": ["Deezer Premium"]})
    outcome = InvoiceResolver(matcher=matcher).resolve(["HBO Max", "aia"], invoice)
    assert [call[0] for call in matcher.calls] == ["aia"]
    assert "Vivo Play VOD" in matcher.calls[0][1]
    assert names(outcome.resolved) == [("HBO Max", LINE_A), ("Deezer Premium", LINE_A)]


def test_resolve_matcher_returning_two_items_is_ambiguous(invoice: dict[str, Any]) -> None:
    matcher = ScriptedMatcher({"aia": ["Aya Ensina"]})  # Aya is on both lines
    outcome = InvoiceResolver(matcher=matcher).resolve(["aia"], invoice)
    assert outcome.has_ambiguity and outcome.resolved == ()


def test_resolve_matcher_error_degrades_to_not_found(invoice: dict[str, Any]) -> None:
    matcher = ScriptedMatcher({"aia": ItemMatcherError("timeout")})
    outcome = InvoiceResolver(matcher=matcher).resolve(["aia"], invoice)
    assert outcome.not_found == ("aia",) and outcome.resolved == ()


def test_resolve_without_matcher_is_deterministic(invoice: dict[str, Any]) -> None:
    resolver = InvoiceResolver()
    assert resolver.resolve(["aia"], invoice).not_found == ("aia",)
    assert resolver.resolve(["VOD"], invoice) == resolver.resolve(["VOD"], invoice)


def test_build_snapshot_lists_every_supported_item_of_every_line(invoice: dict[str, Any]) -> None:
    snapshot = InvoiceResolver().build_snapshot(invoice, LINE_A)
    assert len(snapshot) == 10
    assert {i.msisdn for i in snapshot} == {LINE_A, LINE_B}
    assert "Vivo Controle 25GB" not in {i.canonical_name for i in snapshot}


def test_fuzzy_matcher_tolerates_spelling() -> None:
    matcher = FuzzyItemMatcher()
    candidates = ["Aya Ensina", "HBO Max", "Tamboro"]
    assert matcher.match("aia", candidates) == ["Aya Ensina"]
    assert matcher.match("hbo mx", candidates) == ["HBO Max"]
    assert matcher.match("zz", candidates) == []
    with pytest.raises(ValueError):
        FuzzyItemMatcher(threshold=0)
