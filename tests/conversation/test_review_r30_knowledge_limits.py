"""Review r30, knowledge base: document size.

A document with no size limit broke every search of its organization on PostgreSQL: one
body of ~1 MB of distinct words (a pasted catalogue of codes) makes ``to_tsvector`` fail with
"string is too long for tsvector", so the agents' search_knowledge tool errors on every turn
(DESIGN.md §10.4 spirit: a customer is never left without an answer because of one bad
row). The page must refuse an oversized body with a clear pt-BR error, keeping the text.
"""

from __future__ import annotations

import hashlib

from conversation import knowledge
from conversation.models import KnowledgeDocument
from tests import factories

LIMIT = 50_000


def _codes(chars: int) -> str:
    # Worst case for the full-text index: every word distinct.
    words = (hashlib.md5(str(i).encode()).hexdigest() for i in range(chars // 33 + 1))
    return " ".join(words)[:chars]


def test_oversized_body_is_refused_in_pt_br_limits(world):
    body = "Política de trocas. " + "x" * LIMIT
    response = world.client_for(world.manager).post(
        "/conhecimento/novo/", {"title": "Catálogo", "body": body, "is_active": "on"}
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "no máximo 50000 caracteres" in page
    assert "Política de trocas." in page  # the typed text stays in the form
    assert not KnowledgeDocument.objects.exists()


def test_largest_accepted_document_keeps_the_search_working_limits(world):
    response = world.client_for(world.manager).post(
        "/conhecimento/novo/", {"title": "Códigos", "body": _codes(LIMIT), "is_active": "on"}
    )
    assert response.status_code == 302
    factories.make_document(world.org_a, "Cartão de crédito", "Parcelamos em até 12 vezes.")
    hits = knowledge.search_knowledge(world.org_a.pk, "parcelamento no cartão")
    assert [h.title for h in hits] == ["Cartão de crédito"]
