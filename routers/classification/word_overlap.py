"""Whole-word evidence for the semantic head's confidence: how many content words a message
shares with the winning intent's admin texts, against the best other intent.

The encoders see paraphrase; the lexical classifier's character n-grams see spelling. Neither
says how sure a verdict is when the message names the intent's own subject in its own words
("segunda via do boleto" against an intent whose examples say "boleto"), nor when it names
another intent's. The margin of shared content words (5-letter stems, stop words out) does:
as a fifth calibration feature (``semantic_calibration.label_features``) it ranks verdicts
better than the encoders' scores alone. Chosen on the own scenarios' tuning parts (the prior
refitted there); measured on sets it was not fitted on, heads from the 3 examples, the share
of messages that can be decided at precision 0.97 / 0.95 (the best confidence threshold):
held-out r8-r30 (7,356 messages) 0.332 / 0.427 -> 0.343 / 0.449; routing_dev (630) 0.235 /
0.292 -> 0.273 / 0.360; the demanding r31-r32 (1,310; paraphrases that share no words with
the examples by design) 0.098 / 0.122 -> 0.095 / 0.110. The n-gram classifier's own margin in
the same place moved nothing (0.332).

Pure: the stdlib, numpy and the shared text fold.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from conversation.text import fold

# Function words and the words every customer message has ("quero", "preciso", greetings):
# shared by every intent, they say nothing about which one.
STOP_WORDS = frozenset(
    (
        *("que", "com", "para", "por", "uma", "uns", "umas", "dos", "das", "nos", "nas"),
        *("pra", "pro", "vcs", "voce", "voces", "meu", "minha", "seu", "sua", "ele", "ela"),
        *("tem", "ter", "ser", "esta", "esse", "essa", "isso", "mas", "como", "quando"),
        *("onde", "qual", "quais", "mais", "muito", "ainda", "tambem", "tbm", "aqui", "ali"),
        *("nao", "sim", "sobre", "entre", "ate", "depois", "antes", "oi", "ola", "bom"),
        *("dia", "boa", "tarde", "noite", "obrigado", "obrigada", "favor", "pfv", "gostaria"),
        *("queria", "quero", "preciso", "fazer", "faz"),
    )
)
STEM_LENGTH = 5
# The margin is clipped: past three words the verdict is as sure as it gets from words.
MAX_MARGIN = 3.0
_WORD = re.compile(r"[a-z]{3,}")


def content_stems(text: str) -> frozenset[str]:
    """The 5-letter stems of a text's content words (folded, stop words out)."""
    return frozenset(
        word[:STEM_LENGTH] for word in _WORD.findall(fold(text)) if word not in STOP_WORDS
    )


class WordOverlap:
    """Per intent, the stems of its admin texts (examples, description, name)."""

    def __init__(self, texts_per_intent: Sequence[Sequence[str]]) -> None:
        self.stems = [
            frozenset().union(*(content_stems(t) for t in texts)) for texts in texts_per_intent
        ]

    def counts(self, texts: Sequence[str]) -> np.ndarray:
        """(n, n_intents): the content stems each message shares with each intent."""
        rows = [[len(content_stems(t) & s) for s in self.stems] for t in texts]
        return np.array(rows, dtype=float).reshape(len(texts), len(self.stems))


def overlap_margin(counts: np.ndarray, choice: np.ndarray) -> np.ndarray:
    """Per row, the shared stems of the chosen intent minus the best other intent's, clipped
    to +-``MAX_MARGIN``. A ``none`` verdict (a column past the intents) has no stems of its
    own: its margin is minus the best intent's, so a ``none`` that names an intent's subject
    is less sure."""
    rows = np.arange(len(counts))
    # ``none`` as one more column that shares no stem; counts are never negative, so a zero in
    # place of the chosen column leaves the best other's count as the row's maximum.
    padded = np.concatenate([counts, np.zeros((len(counts), 1))], axis=1)
    own = padded[rows, choice]
    padded[rows, choice] = 0.0
    return np.clip(own - padded.max(axis=1), -MAX_MARGIN, MAX_MARGIN)
