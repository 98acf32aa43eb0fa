"""The archetype phrase bank (routers/classification/archetypes.py): the shipped data, the
conservative intent -> archetype rule on hand-made vectors, and how borrowed phrases
enter an intent's score (no encoder needed)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from routers.classification.archetypes import (
    Archetype,
    ArchetypeItems,
    archetype_items,
    bank_vectors_of,
    load_bank,
    map_intents,
)
from routers.classification.semantic_scoring import Similarity

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "routing"


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=float)
    return v / np.linalg.norm(v)


def test_bank_has_distinct_archetypes_of_25_to_40_distinct_phrases() -> None:
    bank = load_bank()
    assert 15 <= len(bank) <= 40
    assert len({a.id for a in bank}) == len(bank)
    phrases = [p.strip().lower() for a in bank for p in a.phrases]
    assert len(set(phrases)) == len(phrases)
    for a in bank:
        assert a.description.strip()
        assert 25 <= len(a.phrases) <= 40, a.id


# Sets written blind after the bank that happen to hold one of its short, common phrases: a
# coincidence, not a copy (their writer read nothing of the project). Listed so that any other
# overlap still fails.
COINCIDENCES = {("own_scenarios_r30.json", "parcela em quantas vezes?")}


def test_bank_shares_no_message_with_the_own_scenarios() -> None:
    """The bank is written fresh: none of its phrases is a case of an evaluation set."""
    bank = {p.strip().lower() for a in load_bank() for p in a.phrases}
    for path in sorted(FIXTURES.glob("own_scenarios*.json")):
        for raw in json.loads(path.read_text(encoding="utf-8"))["scenarios"]:
            for key in ("tune", "heldout"):
                # some files are all held-out (r8, r10) or all tune (r9)
                texts = {str(t).strip().lower() for t, _ in raw.get(key, [])}
                shared = sorted(t for t in bank & texts if (path.name, t) not in COINCIDENCES)
                assert not shared, (path.name, key, shared)


ARCHETYPES = np.stack([unit(1, 0, 0, 0), unit(0, 1, 0, 0), unit(0, 0, 1, 0)])


def test_an_intent_near_one_archetype_maps_to_it() -> None:
    intents = np.stack([unit(0.9, 0.1, 0, 0.1), unit(0, 0.1, 1, 0)])
    assert map_intents(intents, ARCHETYPES, min_cosine=0.5, min_margin=0.1) == {0: 0, 1: 2}


def test_an_intent_far_from_every_archetype_maps_to_none() -> None:
    intents = np.stack([unit(0.2, 0.1, 0, 1)])  # best cosine ~0.19
    assert map_intents(intents, ARCHETYPES, min_cosine=0.5, min_margin=0.0) == {}


def test_an_intent_between_two_archetypes_maps_to_none() -> None:
    intents = np.stack([unit(1, 0.95, 0, 0)])  # 0.72 vs 0.69: no clear best
    assert map_intents(intents, ARCHETYPES, min_cosine=0.5, min_margin=0.05) == {}


def test_an_archetype_two_intents_match_goes_to_the_closer_one() -> None:
    intents = np.stack([unit(1, 0, 0, 0.6), unit(1, 0, 0, 0.2), unit(0, 1, 0, 0)])
    assert map_intents(intents, ARCHETYPES, min_cosine=0.5, min_margin=0.1) == {1: 0, 2: 1}


class ListEncoder:
    """Vectors looked up by text (a test double of an Encoder)."""

    name = "list"

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = table

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.table[t] for t in texts])


def test_borrowed_phrases_raise_only_their_intents_nearest_item() -> None:
    # two intents, each with one item; a borrowed phrase joins intent 1
    items = np.stack([unit(1, 0, 0), unit(0, 1, 0)])
    labels = np.array([0, 1])
    phrase = unit(0, 0, 1)
    borrowed = ArchetypeItems(vectors=phrase[None, :], labels=np.array([1]), mapped={1: 0})
    plain = Similarity(labels, items, 2)
    with_bank = Similarity(labels, items, 2, borrowed, penalty=0.1)
    message = unit(0, 0.2, 1)
    a = plain.intents(message[None, :], nn_weight=0.5)[0]
    b = with_bank.intents(message[None, :], nn_weight=0.5)[0]
    assert b[0] == pytest.approx(a[0])  # intent 0 untouched
    # intent 1: centroid cosine unchanged, nearest = max(own 0.196, phrase 0.981 - 0.1)
    cos_own = float(message @ items[1])
    expected = 0.5 * cos_own + 0.5 * (float(message @ phrase) - 0.1)
    assert b[1] == pytest.approx(expected)
    np.testing.assert_allclose(with_bank.centroids, plain.centroids)


def test_archetype_items_take_the_mapped_archetypes_long_phrases_only() -> None:
    bank = (
        Archetype(id="a", description="desc a", phrases=("um dois três", "curta")),
        Archetype(id="b", description="desc b", phrases=("outra frase longa aqui",)),
    )
    table = {
        "desc a": unit(1, 0, 0),
        "um dois três": unit(1, 0.1, 0),
        "curta": unit(1, 0, 0.1),
        "desc b": unit(0, 1, 0),
        "outra frase longa aqui": unit(0, 1, 0.1),
    }
    vectors = bank_vectors_of(bank, ListEncoder(table))
    intents = np.stack([unit(0, 0, 1), unit(1, 0, 0.05)])  # only intent 1 is near "a"
    got = archetype_items(intents, vectors, min_cosine=0.5, min_margin=0.1, min_words=2)
    assert dict(got.mapped) == {1: 0}
    assert got.labels.tolist() == [1]  # "curta" has one word
    np.testing.assert_allclose(got.vectors[0], unit(1, 0.1, 0), rtol=1e-6)
