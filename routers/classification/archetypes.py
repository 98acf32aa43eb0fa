"""The archetype phrase bank: what customers ask businesses on WhatsApp, by archetype.

Most businesses' intents are instances of a few dozen archetypes (a complaint about a
delivered order, availability of a product, price, scheduling, rescheduling, order
status, payment, opening hours and address, cancelling a plan, a technical problem,
refunds, a human attendant...). ``archetypes.json`` holds ~20 of them, each with a short
description and 30 customer-style phrases, written for this project (not taken from any
evaluation set).

An intent that clearly is one archetype (``map_intents``) gets that archetype's phrases
(those of at least ``HeadConfig.archetype_min_words`` words) as extra, weaker items of
its own: they take part in the intent's nearest-item cosine
with a penalty, never in its centroid, its lexical classifier or its calibration points
(``semantic_scoring.Similarity``). Three admin examples cover few of the ways customers
say a thing; thirty more of the same archetype cover more of them.

The mapping is conservative: the archetype whose centroid (description and phrases) is
closest to the intent's centroid, only if that cosine reaches ``min_cosine`` and leads
the runner-up by ``min_margin``; an archetype that is the best match of two intents of
one router goes to the closer one only (the other intent keeps its own items).

The bank's vectors are computed once per encoder and process (~650 sentences: the first
head trained in a process takes ~1 s longer with USE, ~17 s with e5 as the first encoder;
the re-rank encoder never embeds the bank) and kept (~1.3 MB).

Pure apart from that cache: numpy; the encoder is passed in.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from .encoder import Encoder
from .preprocess import expand_spelling

BANK_PATH = Path(__file__).with_name("archetypes.json")


@dataclass(frozen=True)
class Archetype:
    id: str
    description: str
    phrases: tuple[str, ...]


@cache
def load_bank() -> tuple[Archetype, ...]:
    data = json.loads(BANK_PATH.read_text(encoding="utf-8"))
    return tuple(
        Archetype(id=a["id"], description=a["description"], phrases=tuple(a["phrases"]))
        for a in data["archetypes"]
    )


@dataclass(frozen=True)
class BankVectors:
    """One encoder's view of the bank: every phrase's vector and its archetype's index,
    and per archetype the normalised centroid of its description and phrases."""

    phrases: np.ndarray  # (n_phrases, dim)
    owner: np.ndarray  # (n_phrases,) archetype index
    words: np.ndarray  # (n_phrases,) words per phrase
    centroids: np.ndarray  # (n_archetypes, dim)


@dataclass(frozen=True)
class ArchetypeItems:
    """The phrases a head borrows: their vectors and the intent index each one joins."""

    vectors: np.ndarray
    labels: np.ndarray
    mapped: Mapping[int, int]  # intent index -> archetype index


def bank_vectors_of(bank: tuple[Archetype, ...], encoder: Encoder) -> BankVectors:
    texts = [a.description for a in bank] + [p for a in bank for p in a.phrases]
    vectors = encoder.encode([expand_spelling(t) for t in texts])
    n = len(bank)
    owner = np.array([k for k, a in enumerate(bank) for _ in a.phrases], dtype=np.int64)
    phrases = vectors[n:]
    centroids = np.stack(
        [np.vstack([vectors[k : k + 1], phrases[owner == k]]).mean(axis=0) for k in range(n)]
    )
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    words = np.array([len(p.split()) for a in bank for p in a.phrases], dtype=np.int64)
    return BankVectors(phrases=phrases, owner=owner, words=words, centroids=centroids)


_lock = threading.Lock()
_by_encoder: weakref.WeakKeyDictionary[Any, BankVectors] = weakref.WeakKeyDictionary()


def bank_vectors(encoder: Encoder) -> BankVectors:
    """The shipped bank through ``encoder``, computed once per encoder object."""
    with _lock:
        try:
            found = _by_encoder.get(encoder)
        except TypeError:  # not weak-referenceable: compute every time
            return bank_vectors_of(load_bank(), encoder)
        if found is None:
            found = bank_vectors_of(load_bank(), encoder)
            _by_encoder[encoder] = found
        return found


def map_intents(
    intent_centroids: np.ndarray,
    archetype_centroids: np.ndarray,
    *,
    min_cosine: float,
    min_margin: float,
) -> dict[int, int]:
    """intent index -> archetype index, for the intents that clearly are one archetype
    (see the module's docstring); rows are unit vectors."""
    if len(archetype_centroids) == 0 or len(intent_centroids) == 0:
        return {}
    sims = intent_centroids @ archetype_centroids.T
    best: dict[int, int] = {}
    for i, row in enumerate(sims):
        order = np.argsort(-row, kind="stable")
        lead = row[order[0]] - (row[order[1]] if len(order) > 1 else -np.inf)
        if row[order[0]] >= min_cosine and lead >= min_margin:
            best[i] = int(order[0])
    claimed: dict[int, int] = {}  # archetype -> the closest intent claiming it
    for i, k in best.items():
        if k not in claimed or sims[i, k] > sims[claimed[k], k]:
            claimed[k] = i
    return {i: k for k, i in sorted(claimed.items(), key=lambda kv: kv[1])}


def archetype_items(
    intent_centroids: np.ndarray,
    bank: BankVectors,
    *,
    min_cosine: float,
    min_margin: float,
    min_words: int = 0,
) -> ArchetypeItems:
    mapped = map_intents(
        intent_centroids, bank.centroids, min_cosine=min_cosine, min_margin=min_margin
    )
    intent_of = {k: i for i, k in mapped.items()}
    rows = [
        j for j, k in enumerate(bank.owner) if int(k) in intent_of and bank.words[j] >= min_words
    ]
    return ArchetypeItems(
        vectors=bank.phrases[rows].reshape(len(rows), bank.phrases.shape[1]),
        labels=np.array([intent_of[int(bank.owner[j])] for j in rows], dtype=np.int64),
        mapped=mapped,
    )
