"""The knowledge search hands the model the part of a long document that answers the
question, not the document's first lines."""

from __future__ import annotations

from conversation import knowledge
from conversation.knowledge import PASSAGE_CHARS
from tests import factories

INTRO = "A Loja Azul atende todo o Brasil desde 1998 com produtos de qualidade. " * 12
POLICY = (
    "Política de trocas\n"
    "O prazo de troca é de 30 dias corridos a partir do recebimento, com nota fiscal.\n"
)
SHIPPING = "Entregas\nO frete é grátis acima de R$ 200 para as capitais.\n"


def test_a_long_document_gives_the_passage_that_answers(world):
    body = f"{INTRO}\n\n{SHIPPING}\n{'Outras informações gerais da loja. ' * 10}\n\n{POLICY}"
    assert len(body) > 2 * PASSAGE_CHARS and body.index("30 dias") > PASSAGE_CHARS
    factories.make_document(world.org_a, "Manual do cliente", body)

    hits = knowledge.search_knowledge(world.org_a.pk, "qual o prazo de troca?")

    assert len(hits) == 1
    passage = hits[0].passage
    assert "30 dias corridos" in passage
    assert "Política de trocas" in passage  # the heading above the answer comes along
    assert len(passage) <= PASSAGE_CHARS


def test_a_short_document_is_given_whole_and_an_unmatched_long_one_from_its_start():
    assert knowledge.passage("Trocas em 7 dias.", "troca") == "Trocas em 7 dias."
    long_body = "palavra " * 200
    assert knowledge.passage(long_body, "inexistente") == long_body[:PASSAGE_CHARS].rstrip()


def test_one_huge_paragraph_is_cut_around_the_match():
    body = "x" * 3000 + " O prazo de troca é de 30 dias. " + "y" * 3000
    passage = knowledge.passage(body, "prazo de troca")
    assert "30 dias" in passage and len(passage) <= PASSAGE_CHARS
