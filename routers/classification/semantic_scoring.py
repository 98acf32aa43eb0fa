"""How the semantic head scores a message: its knobs (``HeadConfig``), the items it is
built from, and the label scores of messages against those items (``Scorer``), with the
second encoder's fused re-rank scores. The head itself (``SemanticHead``, ``train_head``)
is in ``semantic.py``; its calibration in ``semantic_calibration.py``.

The items, from ``head_items``:

* per intent: its admin examples, its description, the sub-cases the description lists
  (``preprocess.description_fragments``), its name, and every labelled or accepted
  phrase of that intent; the description without what it says the intent does not cover
  (``preprocess.covered_part``: "...; não cobre medicamentos" names another intent's
  subject);
* for ``none``: the built-in anchors (greetings, thanks, spam, ...) and every phrase
  labelled ``none``.

An intent's score is ``(1 - nn_weight) * cos(message, centroid) + nn_weight * cos(message,
nearest item)`` plus ``lexical_weight`` times the lexical classifier's score (the two see
different things: the encoder paraphrases, the n-grams catch product names and typos).
The centroid and the lexical classifier read the admin's items only (examples, description,
its sub-cases, name); a learned phrase counts as a nearest item (``HeadConfig
.phrase_centroid_weight``, ``phrases_in_lexical``);
``none`` scores its nearest anchor plus ``none_bias``. An intent mapped to an archetype
(``archetypes.py``) also counts that archetype's phrases in its nearest item, each
``archetype_penalty`` lower (first encoder only).

Re-ranking fuses, per intent, ``z(first) + z(second) + lexical_z_weight * z(lexical)``,
each z-scored over the intents of that message (the encoders' cosines live on different
scales).

Pure: numpy and the lexical classifier; the vectors are passed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from conversation.llm.local_classifier import LocalClassifier

from .archetypes import ArchetypeItems
from .none_anchors import NONE_ANCHORS
from .phrase import Phrase
from .preprocess import covered_part, description_fragments
from .types import NONE_INTENT, IntentOption
from .word_overlap import WordOverlap


@dataclass(frozen=True)
class HeadConfig:
    """Scoring and calibration knobs; the defaults are the measured best (bench/router.py)."""

    nn_weight: float = 0.4
    lexical_weight: float = 0.5
    none_bias: float = -0.05
    # Prior of the calibration weights over [1, top, margin, is_none, word_margin]: a
    # logistic regression on the own scenarios' tuning part (929 messages, heads built from
    # the 3 examples; round 27, when ``word_margin`` joined). (A negative weight on ``top``
    # is not a bug: with the margin in the model, a high top score shared by two labels
    # means a close call.)
    prior: tuple[float, ...] = (0.161, -1.559, 17.118, 0.302, 0.377)
    # How strongly the prior holds: about this many cross-fitted points outweigh it.
    prior_strength: float = 100.0
    # Cross-fitting folds (each costs one more lexical training).
    folds: int = 3
    # A cross-fitted point's weight by where it came from: an admin's example reads
    # cleaner than a customer, and the anchors are generic, so both count less.
    example_weight: float = 0.5
    # The phrases a router learns are the messages it was unsure of (the LLM's verdicts it
    # accepted), harder than its traffic: at full weight they made the calibration shy
    # (see ``phrase_centroid_weight``).
    phrase_weight: float = 0.3
    anchor_weight: float = 0.25
    # Re-ranking with the second encoder. Below this first-stage confidence an intent
    # verdict is re-ranked: on the own scenarios' tuning parts 0.7 re-ranks a third of
    # the messages and loses no top-1 against re-ranking them all.
    rerank_gate: float = 0.7
    rerank_nn_weight: float = 0.4
    lexical_z_weight: float = 0.25
    # Prior of the re-rank calibration over [1, top, margin, agrees]: a logistic regression
    # on the messages re-ranked in the own scenarios' tuning parts (own_scenarios.json and
    # own_scenarios_r4.json, 105 messages, 60% right), ECE 0.05. (``agrees`` comes out
    # negative because agreement already shows in ``top`` and ``margin``.)
    rerank_prior: tuple[float, float, float, float] = (-1.01, 0.46, 0.57, -0.56)
    # The archetype phrase bank (archetypes.py): an intent that clearly is one archetype
    # borrows its phrases for the first encoder's nearest-item cosine, each counted
    # ``archetype_penalty`` lower than an item of the intent's own. Chosen on the own
    # scenarios' tuning parts (own_scenarios.json and _r4: top-1 0.805 -> 0.820, decided
    # at 0.9 0.44 -> 0.46 at precision 0.978 -> 0.987; _r6: top-1 0.864 -> 0.905). The
    # second encoder's re-rank does not use them (no better there, and it would embed the
    # bank with e5 too). Phrases under ``archetype_min_words`` words ("quanto custa?")
    # are left out: they pulled short follow-ups to another intent (same-subject kept in
    # context 0.90 -> 0.85 on the tuning pairs with them, 0.90 without).
    archetypes: bool = True
    archetype_min_cosine: float = 0.45
    archetype_min_margin: float = 0.03
    archetype_penalty: float = 0.05
    archetype_min_words: int = 4
    # Where a learned phrase counts. In an intent's centroid and in the lexical classifier a
    # router's learned phrases (long, unsure customer messages) pulled its intents together:
    # learning from the first 45% of the own scenarios' tuning streams (oracle labels, every
    # unsure message taught) took top-1 on the rest from 0.836 to 0.817 and the share decided
    # at 0.9 from 0.449 to 0.405. As nearest items only, with phrase_weight 0.3: top-1 0.848,
    # decided 0.439 at precision 0.983 (0.978 before any learning); a phrase weighing 0.15,
    # 0.3, 0.6 or 1.0 of an admin's item in the centroid: top-1 0.850, 0.842, 0.832, 0.812.
    phrase_centroid_weight: float = 0.0
    phrases_in_lexical: bool = False


DEFAULT_CONFIG = HeadConfig()


# --- the items a head is built from --------------------------------------------------

FIXED, EXAMPLE, PHRASE, ANCHOR = "fixed", "example", "phrase", "anchor"


@dataclass(frozen=True)
class Item:
    text: str
    label: int  # index into labels; len(intents) is "none"
    kind: str  # FIXED items (description, fragments, name) are never held out


def head_items(intents: Sequence[IntentOption], phrases: Sequence[Phrase]) -> list[Item]:
    """Every item of a head, labelled by intent index (``len(intents)``: ``none``)."""
    index = {o.name: i for i, o in enumerate(intents)}
    none = len(intents)
    items: list[Item] = []
    for i, o in enumerate(intents):
        fixed = [o.name.replace("_", " ").replace("-", " "), covered_part(o.description)]
        fixed += description_fragments(o.description)
        items += [Item(t, i, FIXED) for t in dict.fromkeys(fixed) if t]
        items += [Item(e.strip(), i, EXAMPLE) for e in o.examples if e.strip()]
    items += [Item(t, none, ANCHOR) for t in NONE_ANCHORS]
    for p in phrases:
        label = none if p.intent == NONE_INTENT else index.get(p.intent)
        if label is not None and p.text.strip():  # a phrase of a removed intent is stale
            items.append(Item(p.text.strip(), label, PHRASE))
    return items


class Similarity:
    """One encoder's view of a set of items: per intent the centroid (each item weighed as
    ``centroid_weights`` says) and the items (sorted by label), and the ``none`` anchors;
    optionally borrowed archetype phrases, which count in an intent's nearest item
    (``penalty`` lower) but not in its centroid."""

    def __init__(
        self,
        labels: np.ndarray,
        vectors: np.ndarray,
        n_intents: int,
        borrowed: ArchetypeItems | None = None,
        penalty: float = 0.0,
        centroid_weights: np.ndarray | None = None,
    ) -> None:
        order = np.argsort(labels, kind="stable")
        labels, matrix = labels[order], vectors[order]
        intent_rows = labels < n_intents
        self.item_matrix = matrix[intent_rows]
        self.item_labels = labels[intent_rows]
        none_rows = matrix[~intent_rows]
        self.none_matrix = none_rows if len(none_rows) else np.zeros((0, matrix.shape[1]))
        # Every intent has at least its name and description, so every label has rows.
        self.starts = np.searchsorted(self.item_labels, np.arange(n_intents))
        # ``centroid_weights``: each item's weight in its intent's centroid (default: all 1).
        weight = np.ones(len(labels)) if centroid_weights is None else centroid_weights[order]
        weight = np.where(intent_rows, weight, 0.0)
        centroids = np.stack(
            [
                (weight[labels == k, None] * matrix[labels == k]).sum(axis=0)
                for k in range(n_intents)
            ]
        )
        self.centroids = centroids / np.linalg.norm(centroids, axis=1, keepdims=True)
        self.borrowed = borrowed if borrowed is not None and len(borrowed.labels) else None
        self.penalty = penalty

    def intents(self, vectors: np.ndarray, nn_weight: float) -> np.ndarray:
        """(n, n_intents): the centroid cosine blended with the nearest item's."""
        nearest = np.maximum.reduceat(vectors @ self.item_matrix.T, self.starts, axis=1)
        if self.borrowed is not None:
            cos = vectors @ self.borrowed.vectors.T - self.penalty
            for k in np.unique(self.borrowed.labels):
                column = cos[:, self.borrowed.labels == k].max(axis=1)
                nearest[:, k] = np.maximum(nearest[:, k], column)
        return (1 - nn_weight) * (vectors @ self.centroids.T) + nn_weight * nearest

    def none(self, vectors: np.ndarray) -> np.ndarray:
        if not len(self.none_matrix):
            return np.full(len(vectors), -np.inf)
        return (vectors @ self.none_matrix.T).max(axis=1)


def zscore(matrix: np.ndarray) -> np.ndarray:
    """Each row centred on its mean over the intents and divided by its spread."""
    spread = matrix.std(axis=1, keepdims=True)
    return (matrix - matrix.mean(axis=1, keepdims=True)) / np.where(spread > 1e-9, spread, 1.0)


class Scorer:
    """Label scores of messages against one set of items (a whole head, or a fold)."""

    def __init__(
        self,
        intents: Sequence[IntentOption],
        items: Sequence[Item],
        vectors: np.ndarray,
        config: HeadConfig,
        rerank_vectors: np.ndarray | None = None,
        borrowed: ArchetypeItems | None = None,
    ) -> None:
        self.n_intents = len(intents)
        self.config = config
        labels = np.array([it.label for it in items], dtype=np.int64)
        centroid_weights = np.array(
            [config.phrase_centroid_weight if it.kind == PHRASE else 1.0 for it in items]
        )
        self.first = Similarity(
            labels, vectors, self.n_intents, borrowed, config.archetype_penalty, centroid_weights
        )
        self.second = (
            None
            if rerank_vectors is None
            else Similarity(
                labels, rerank_vectors, self.n_intents, centroid_weights=centroid_weights
            )
        )
        lexical_items = (
            items if config.phrases_in_lexical else [it for it in items if it.kind != PHRASE]
        )
        self.lexical = LocalClassifier.train(
            {
                o.name: [it.text for it in lexical_items if it.label == k]
                for k, o in enumerate(intents)
            }
        )
        self.words = WordOverlap(
            [[it.text for it in lexical_items if it.label == k] for k in range(len(intents))]
        )
        self.names = [o.name for o in intents]

    def lexical_scores(self, texts: Sequence[str]) -> np.ndarray:
        return np.array(
            [[raw.get(n, 0.0) for n in self.names] for raw in map(self.lexical.raw_scores, texts)]
        ).reshape(len(texts), self.n_intents)

    def scores(self, vectors: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """(n, n_intents + 1): one column per intent, then ``none``."""
        return self.parts(vectors, texts)[0]

    def parts(self, vectors: np.ndarray, texts: Sequence[str]) -> tuple[np.ndarray, ...]:
        """The label scores, and the two things re-ranking reuses: the first encoder's
        intent similarities and the lexical scores."""
        cfg = self.config
        semantic = self.first.intents(vectors, cfg.nn_weight)
        lexical = self.lexical_scores(texts)
        none = self.first.none(vectors) + cfg.none_bias
        labels = np.concatenate([semantic + cfg.lexical_weight * lexical, none[:, None]], axis=1)
        return labels, semantic, lexical

    def rerank(
        self, semantic: np.ndarray, lexical: np.ndarray, second_vectors: np.ndarray
    ) -> np.ndarray:
        """(n, n_intents): the fused intent scores (z-scores, see the module's docstring)."""
        if self.second is None:
            raise ValueError("this scorer has no second encoder")
        cfg = self.config
        second = self.second.intents(second_vectors, cfg.rerank_nn_weight)
        return zscore(semantic) + zscore(second) + cfg.lexical_z_weight * zscore(lexical)
