"""The learned promise stage's scoring path: the weight table compiled into nested look-ups.

``promise_features`` turns a sentence into feature strings ("b:vai te", "k:HUM FUT", ...),
which training needs. Scoring only needs the sum of their weights, and building the strings
was about half of the stage's time. ``CompiledWeights`` splits every weighted feature into its
parts once (``"b:vai te"`` becomes ``bigram["vai"]["te"]``), and ``sentence_scores`` walks the
tokens the way ``promise_features._window_features`` does, looking each part up without
building a string.

The two walks must agree exactly: same features, same order of addition, so the same float.
``tests/cases/test_promise_scoring.py`` checks that for arbitrary token streams (hypothesis)
and for every labelled message; change both together, or the test fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .promise_features import (
    _COMMA,
    _CUSTOMER_FIRST,
    _MAX_TOKENS,
    _TOKEN_INFO,
    _token_info,
    message_sentences,
)
from .promise_words import BUT, QUANTIFIERS

_Table = dict[str, dict[str, float]]
_Trigram = dict[str, dict[str, dict[str, float]]]


@dataclass(frozen=True)
class CompiledWeights:
    """A weight table (feature string -> weight) split by feature family and parts."""

    bigram: _Table = field(default_factory=dict)  # b:{left} {word}
    frame2: _Table = field(default_factory=dict)  # k:{left} {label}
    frame3: _Trigram = field(default_factory=dict)  # k:{left2} {left} {label}
    pair: _Table = field(default_factory=dict)  # p:{earlier}<{label}
    question_pair: _Table = field(default_factory=dict)  # qp:{earlier}<{label}
    unigram: dict[str, float] = field(default_factory=dict)  # u:{word}
    question_unigram: dict[str, float] = field(default_factory=dict)  # qu:{word}
    question: float = 0.0  # q
    # Sentences that carry one of these features get the commitment cue's reading:
    # b: triggers as word -> left words, k: triggers as label -> left labels.
    bigram_triggers: dict[str, frozenset[str]] = field(default_factory=dict)
    frame_triggers: dict[str, frozenset[str]] = field(default_factory=dict)
    entries: dict[str, _Entry] = field(default_factory=dict)  # token -> what the walk needs


def compile_weights(weights: Mapping[str, float], triggers: frozenset[str]) -> CompiledWeights:
    """Split ``weights`` (and the trigger features) by family; unknown families raise."""
    compiled = CompiledWeights()
    for feature, weight in weights.items():
        family, _, rest = feature.partition(":")
        if feature == "q":
            object.__setattr__(compiled, "question", weight)
        elif family in ("b", "k"):
            parts = rest.split(" ")
            if family == "b" and len(parts) == 2:
                compiled.bigram.setdefault(parts[0], {})[parts[1]] = weight
            elif family == "k" and len(parts) == 2:
                compiled.frame2.setdefault(parts[0], {})[parts[1]] = weight
            elif family == "k" and len(parts) == 3:
                left2, left, label = parts
                compiled.frame3.setdefault(left2, {}).setdefault(left, {})[label] = weight
            else:
                raise ValueError(f"unknown feature shape: {feature!r}")
        elif family in ("p", "qp"):
            earlier, _, label = rest.partition("<")
            table = compiled.pair if family == "p" else compiled.question_pair
            table.setdefault(earlier, {})[label] = weight
        elif family == "u":
            compiled.unigram[rest] = weight
        elif family == "qu":
            compiled.question_unigram[rest] = weight
        else:
            raise ValueError(f"unknown feature family: {feature!r}")
    bigram: dict[str, set[str]] = {}
    frame: dict[str, set[str]] = {}
    for feature in triggers:
        family, _, rest = feature.partition(":")
        parts = rest.split(" ")
        if family not in ("b", "k") or len(parts) != 2:
            raise ValueError(f"a trigger must be a word or frame bigram: {feature!r}")
        (bigram if family == "b" else frame).setdefault(parts[1], set()).add(parts[0])
    compiled.bigram_triggers.update((k, frozenset(v)) for k, v in bigram.items())
    compiled.frame_triggers.update((k, frozenset(v)) for k, v in frame.items())
    return compiled


# Per token, what the walk needs of it, looked up once: the word as the bigrams see it, its
# class, whether the class is a key class, the scope it opens, whether it is a clause mark
# (which closes a scope), its bigram row as the left word, the left words that make a trigger
# with it, and its unigram weights (statement, question).
_Entry = tuple[
    str, str, bool, str | None, bool, dict[str, float] | None, frozenset[str] | None,
    float | None, float | None,
]  # fmt: skip
_ENTRIES_MAX = 50_000
_CLAUSE_MARKS = (",", "\u2014", "\u2013", " - ")  # the non-word tokens of ``_PIECE``


def _entry(compiled: CompiledWeights, token: str) -> _Entry:
    entries = compiled.entries
    if len(entries) >= _ENTRIES_MAX:
        entries.clear()  # arbitrary text: keep the table bounded
    if token.isalnum():
        word = token
        label, key, opener = _TOKEN_INFO.get(token) or _token_info(token)
        unigram = compiled.unigram.get(token)
        question_unigram = compiled.question_unigram.get(token)
    else:
        word = ","
        label, key, opener = _COMMA
        unigram = question_unigram = None
    entry = (
        *(word, label, key, opener, word == ",", compiled.bigram.get(word)),
        *(compiled.bigram_triggers.get(word), unigram, question_unigram),
    )
    entries[token] = entry
    return entry


def sentence_scores(folded: str, compiled: CompiledWeights) -> list[tuple[float, bool]]:
    """(summed weight, carries a trigger) of every sentence of ``message_features(folded)``."""
    scores: list[tuple[float, bool]] = []
    for tokens, question in message_sentences(folded):
        pairs: list[float] | None = [] if question else None
        unigrams: list[float] = []
        raw = 0.0
        trigger = False
        for start in range(0, len(tokens), _MAX_TOKENS):
            window = tokens[start : start + _MAX_TOKENS]
            raw, hit = _window_score(window, compiled, raw, pairs, unigrams)
            trigger = trigger or hit
        if pairs is not None:
            raw += compiled.question
            for weight in pairs:
                raw += weight
        for weight in unigrams:
            raw += weight
        scores.append((raw, trigger))
    return scores


def _window_score(
    tokens: list[str],
    compiled: CompiledWeights,
    raw: float,
    pairs: list[float] | None,
    unigrams: list[float],
) -> tuple[float, bool]:
    """``raw`` plus the weights of ``_window_features(tokens)``, added in the same order.

    In a question, ``pairs`` collects the weights of the ``qp:`` twins of the pairs, which
    come after the window's features; ``unigrams`` collects the ``u:`` (or ``qu:``) weights,
    which come last. Mirrors ``_window_features`` line for line.
    """
    entries, frame2, frame3 = compiled.entries, compiled.frame2, compiled.frame3
    pair, question_pair = compiled.pair, compiled.question_pair
    frame_triggers = compiled.frame_triggers
    trigger = False
    word1 = frame1 = "<s>"
    left_row = compiled.bigram.get("<s>")
    frame2_left = ""
    keys: list[str] = []
    scope = ""
    habit = False
    for token in tokens:
        word, label, key, opener, mark, row, lefts, unigram, question_unigram = entries.get(
            token
        ) or _entry(compiled, token)
        if mark:
            scope = ""
        elif scope:
            label = scope + label
        if label == "HAB" and word not in QUANTIFIERS:
            habit = True
        elif habit:
            if word in BUT:
                habit = False
            elif key:
                label = "h_" + label
        if left_row is not None and (weight := left_row.get(word)) is not None:
            raw += weight
        if lefts is not None and not trigger:
            trigger = word1 in lefts
        if key:
            if label != frame1:
                frame_row = frame2.get(frame1)
                if frame_row is not None and (weight := frame_row.get(label)) is not None:
                    raw += weight
                if not trigger and (lefts := frame_triggers.get(label)) is not None:
                    trigger = frame1 in lefts
                if frame2_left:
                    rows = frame3.get(frame2_left)
                    frame_row = rows.get(frame1) if rows is not None else None
                    if frame_row is not None and (weight := frame_row.get(label)) is not None:
                        raw += weight
                frame2_left, frame1 = frame1, label
            if label not in keys:
                for earlier in keys:
                    pair_row = pair.get(earlier)
                    if pair_row is not None and (weight := pair_row.get(label)) is not None:
                        raw += weight
                    if pairs is not None:
                        pair_row = question_pair.get(earlier)
                        if pair_row is not None and (weight := pair_row.get(label)) is not None:
                            pairs.append(weight)
                keys.append(label)
        if opener is not None:
            scope = opener
        elif word1 == "me" and word in _CUSTOMER_FIRST:
            scope = "i_"
        weight = unigram if pairs is None else question_unigram
        if weight is not None:
            unigrams.append(weight)
        word1, left_row = word, row
    if left_row is not None and (weight := left_row.get("</s>")) is not None:
        raw += weight
    if not trigger and (lefts := compiled.bigram_triggers.get("</s>")) is not None:
        trigger = word1 in lefts
    frame_row = frame2.get(frame1)
    if frame_row is not None and (weight := frame_row.get("</s>")) is not None:
        raw += weight
    if not trigger and (lefts := frame_triggers.get("</s>")) is not None:
        trigger = frame1 in lefts
    if frame2_left:
        rows = frame3.get(frame2_left)
        frame_row = rows.get(frame1) if rows is not None else None
        if frame_row is not None and (weight := frame_row.get("</s>")) is not None:
            raw += weight
    return raw, trigger
