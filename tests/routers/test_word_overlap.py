"""The whole-word evidence of the semantic head's confidence (``word_overlap``): content
stems shared with each intent's admin texts, and the chosen intent's margin over the rest.
The oracle is the definition in the module's docstring, checked on hand-written texts and,
for the margin, for all count matrices."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from routers.classification.word_overlap import (
    MAX_MARGIN,
    WordOverlap,
    content_stems,
    overlap_margin,
)


def test_content_stems_fold_accents_drop_function_words_and_cut_to_five_letters() -> None:
    assert content_stems("Quero a SEGUNDA via do boleto, por favor") == {"segun", "via", "bolet"}
    assert content_stems("Não recebi a cobrança") == content_stems("nao recebi a cobranca")
    assert content_stems("oi, bom dia! tem como?") == frozenset()


def test_counts_are_the_stems_a_message_shares_with_each_intents_texts() -> None:
    overlap = WordOverlap(
        [
            ["segunda via do boleto", "Boletos e faturas em atraso"],
            ["agendar uma visita técnica", "o técnico não veio"],
        ]
    )
    counts = overlap.counts(["o boleto chegou com valor errado", "quando o técnico vem?", "oi"])
    assert counts.tolist() == [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    assert overlap.counts([]).shape == (0, 2)


def test_the_margin_is_the_chosen_intents_words_over_the_best_other() -> None:
    counts = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 0.0], [2.0, 5.0, 0.0]])
    choice = np.array([0, 0, 1, 3])  # the last row chose ``none`` (past the intents)
    assert overlap_margin(counts, choice).tolist() == [2.0, -1.0, 0.0, -3.0]


counts_matrices = st.integers(1, 6).flatmap(
    lambda k: st.lists(
        st.lists(st.integers(0, 12), min_size=k, max_size=k), min_size=1, max_size=8
    ).flatmap(
        lambda rows: st.tuples(
            st.just(np.array(rows, dtype=float)),
            st.lists(st.integers(0, k), min_size=len(rows), max_size=len(rows)),
        )
    )
)


@given(counts_matrices)
def test_the_margin_is_bounded_and_a_none_verdict_never_gains_from_words(
    case: tuple[np.ndarray, list[int]],
) -> None:
    counts, choice = case
    margin = overlap_margin(counts, np.array(choice))
    assert np.all(np.abs(margin) <= MAX_MARGIN)
    n_intents = counts.shape[1]
    for row, c in enumerate(choice):
        if c == n_intents:
            assert margin[row] <= 0.0
        elif counts[row, c] >= counts[row].max():
            assert margin[row] >= 0.0  # the intent sharing the most words is never behind


@given(counts_matrices, st.randoms(use_true_random=False))
def test_the_margin_does_not_depend_on_the_order_of_the_intents(
    case: tuple[np.ndarray, list[int]], rng: random.Random
) -> None:
    counts, choice = case
    k = counts.shape[1]
    order = list(range(k))
    rng.shuffle(order)
    where = {old: new for new, old in enumerate(order)}
    permuted = counts[:, order]
    moved = np.array([where.get(c, k) for c in choice])
    assert (
        overlap_margin(permuted, moved).tolist()
        == overlap_margin(counts, np.array(choice)).tolist()
    )
