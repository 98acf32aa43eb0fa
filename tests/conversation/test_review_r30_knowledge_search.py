"""Review r30, knowledge base search: what the agents' search_knowledge tool finds.

The oracle is DESIGN.md §6 ("Every query filters by organization") and the product's
promise on the knowledge page: agents consult *these* documents — the active ones
("Ativo (a IA pode consultar)") — and a customer's spelling (accents, punctuation, case)
must not hide an answer that is there.
"""

from __future__ import annotations

import pytest

from conversation import knowledge
from tests import factories


@pytest.fixture
def docs(world):
    factories.make_document(world.org_a, "Cartão de crédito", "Parcelamos em até 12 vezes.")
    factories.make_document(world.org_b, "Cartão da outra empresa", "Segredo da B: cartão.")
    off = factories.make_document(world.org_a, "Cartão antigo", "Política de cartão revogada.")
    off.is_active = False
    off.save()
    return world


@pytest.mark.parametrize(
    "query",
    ["cartão", "CARTAO", "cartao de credito?", "  cartão!!!  ", "Cartão... crédito; (12x)"],
)
def test_spelling_does_not_hide_the_answer_search(docs, query):
    hits = knowledge.search_knowledge(docs.org_a.pk, query)
    assert [h.title for h in hits] == ["Cartão de crédito"]


@pytest.mark.parametrize("query", ["", "   ", "\n\t", "?!*&|:()'\"", "de o a"])
def test_empty_or_meaningless_query_finds_nothing_search(docs, query):
    assert knowledge.search_knowledge(docs.org_a.pk, query) == []


def test_very_long_query_is_answered_search(docs):
    query = "quero saber do cartão " + "blá " * 5000
    hits = knowledge.search_knowledge(docs.org_a.pk, query)
    assert [h.title for h in hits] == ["Cartão de crédito"]


def test_other_org_and_inactive_documents_are_never_returned_search(docs):
    for query in ["cartão", "segredo", "revogada", "outra empresa"]:
        titles = {h.title for h in knowledge.search_knowledge(docs.org_a.pk, query, limit=10)}
        assert titles <= {"Cartão de crédito"}, query
