"""The n-gram features of the learned promise stage: one walk over a sentence's tokens.

``promise_features`` cuts a folded text into sentences of tokens and gives each token its
class. The walk here reads a sentence's tokens once, in order, keeping the scopes (negation,
condition, instruction, habit) and the clause frame, and meets every feature of the sentence
(the list is in the ``promise_features`` docstring). It does one of two things with them:

* ``message_features``: build the feature strings ("b:vai te", "k:HUM FUT", "p:HUM<INF"),
  which training needs;
* ``sentence_scores``: add up their weights without building a string, through the weight
  table compiled once into nested look-ups (``"b:vai te"`` is ``bigram["vai"]["te"]``).
  Building the strings was about half of the stage's time.

One walk, so both readings meet the same features in the same order, and a sentence's score
is the same float as the sum of its strings' weights (``tests/cases/test_promise_ngrams.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .promise_features import (
    CLAUSE_MARK_INFO,
    CUSTOMER_FIRST,
    MAX_TOKENS,
    message_sentences,
    token_info,
)
from .promise_words import BUT, HEDGED_PROMISES, QUANTIFIERS

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
    bigram: _Table = {}
    frame2: _Table = {}
    frame3: _Trigram = {}
    pairs: dict[str, _Table] = {"p": {}, "qp": {}}
    unigrams: dict[str, dict[str, float]] = {"u": {}, "qu": {}}
    question = 0.0
    for feature, weight in weights.items():
        family, _, rest = feature.partition(":")
        parts = rest.split(" ")
        if feature == "q":
            question = weight
        elif family == "b" and len(parts) == 2:
            bigram.setdefault(parts[0], {})[parts[1]] = weight
        elif family == "k" and len(parts) == 2:
            frame2.setdefault(parts[0], {})[parts[1]] = weight
        elif family == "k" and len(parts) == 3:
            frame3.setdefault(parts[0], {}).setdefault(parts[1], {})[parts[2]] = weight
        elif family in pairs:
            earlier, _, label = rest.partition("<")
            pairs[family].setdefault(earlier, {})[label] = weight
        elif family in unigrams:
            unigrams[family][rest] = weight
        else:
            raise ValueError(f"unknown feature family or shape: {feature!r}")
    lefts: dict[str, dict[str, set[str]]] = {"b": {}, "k": {}}
    for feature in triggers:
        family, _, rest = feature.partition(":")
        parts = rest.split(" ")
        if family not in lefts or len(parts) != 2:
            raise ValueError(f"a trigger must be a word or frame bigram: {feature!r}")
        lefts[family].setdefault(parts[1], set()).add(parts[0])
    return CompiledWeights(
        bigram=bigram,
        frame2=frame2,
        frame3=frame3,
        pair=pairs["p"],
        question_pair=pairs["qp"],
        unigram=unigrams["u"],
        question_unigram=unigrams["qu"],
        question=question,
        bigram_triggers={word: frozenset(left) for word, left in lefts["b"].items()},
        frame_triggers={label: frozenset(left) for label, left in lefts["k"].items()},
    )


# Per token, what the walk needs of it, looked up once: the word as the bigrams see it, its
# class, whether the class is a key class, the scope it opens, whether it is a clause mark
# (which closes a scope), its bigram row as the left word, the left words that make a trigger
# with it, and its unigram weights (statement, question).
_Entry = tuple[
    str, str, bool, str | None, bool, dict[str, float] | None, frozenset[str] | None,
    float | None, float | None,
]  # fmt: skip
_ENTRIES_MAX = 50_000


def _entry(compiled: CompiledWeights, token: str) -> _Entry:
    entries = compiled.entries
    if len(entries) >= _ENTRIES_MAX:
        entries.clear()  # arbitrary text: keep the table bounded
    if token.isalnum():
        word = token
        label, key, opener = token_info(token)
        unigram = compiled.unigram.get(token)
        question_unigram = compiled.question_unigram.get(token)
    else:
        word = ","
        label, key, opener = CLAUSE_MARK_INFO
        unigram = question_unigram = None
    row = compiled.bigram.get(word)
    lefts = compiled.bigram_triggers.get(word)
    entry = (word, label, key, opener, word == ",", row, lefts, unigram, question_unigram)
    entries[token] = entry
    return entry


_EMPTY = CompiledWeights()  # the walk's token table when it only builds strings
_Emit = Callable[[str], None]


def message_features(folded: str) -> list[list[str]]:
    """The feature strings of every sentence of a folded text that has at least one word."""
    sentences: list[list[str]] = []
    for tokens, question in message_sentences(folded):
        features: list[str] = []
        emit = features.append
        for start in range(0, len(tokens), MAX_TOKENS):
            _walk(tokens[start : start + MAX_TOKENS], _EMPTY, 0.0, None, [], emit)
        if question:
            features.append("q")
            # A question changes what the clause frame means ("vao te ligar?" asks, not
            # promises): its pairs and unigrams are the question's own.
            features.extend([f"q{feature}" for feature in features if feature.startswith("p:")])
            features.extend([f"qu:{token}" for token in tokens if token.isalnum()])
        else:
            # Word unigrams: a verb or noun seen in training counts wherever it stands.
            features.extend([f"u:{token}" for token in tokens if token.isalnum()])
        sentences.append(features)
    return sentences


def sentence_scores(folded: str, compiled: CompiledWeights) -> list[tuple[float, bool]]:
    """(summed weight, carries a trigger) of every sentence of ``message_features(folded)``:
    the weights added in the order of the features."""
    scores: list[tuple[float, bool]] = []
    for tokens, question in message_sentences(folded):
        pairs: list[float] | None = [] if question else None
        unigrams: list[float] = []
        raw = 0.0
        trigger = False
        for start in range(0, len(tokens), MAX_TOKENS):
            window = tokens[start : start + MAX_TOKENS]
            raw, hit = _walk(window, compiled, raw, pairs, unigrams, None)
            trigger = trigger or hit
        if pairs is not None:
            raw += compiled.question
            for weight in pairs:
                raw += weight
        for weight in unigrams:
            raw += weight
        scores.append((raw, trigger))
    return scores


def _walk(
    tokens: list[str],
    compiled: CompiledWeights,
    raw: float,
    pairs: list[float] | None,
    unigrams: list[float],
    emit: _Emit | None,
) -> tuple[float, bool]:
    """Walk one window of a sentence (at most MAX_TOKENS tokens): ``emit`` each feature
    string, or (``emit`` None) return ``raw`` plus their weights and whether one is a trigger.

    Scoring, in a question, ``pairs`` collects the weights of the ``qp:`` twins of the pairs,
    which come after the window's features; ``unigrams`` collects the ``u:`` (or ``qu:``)
    weights, which come last. One pass with plain loops: this is the stage's hot path.
    """
    entries, pair, question_pair = compiled.entries, compiled.pair, compiled.question_pair
    trigger = False
    word1 = frame1 = "<s>"
    left_row = compiled.bigram.get("<s>")
    frame2_left = ""
    keys: list[str] = []
    scope = ""
    habit = hedge = False
    for token in tokens:
        word, label, key, opener, mark, row, lefts, unigram, question_unigram = entries.get(
            token
        ) or _entry(compiled, token)
        if mark:
            # Commas and dashes separate clauses ("A Fernanda, do financeiro, vai..."): one
            # token ",", which also closes a scope, but not a negated guarantee's.
            scope = "n_" if hedge else ""
        elif scope:
            label = scope + label
            if scope == "n_" and word in HEDGED_PROMISES:
                # "não consigo garantir que a Nanda, nossa cerimonialista, vai estar": what
                # is not guaranteed runs to the sentence's end or its "mas".
                hedge = True
        if hedge and word in BUT:
            hedge = False
            scope = ""
        if label == "HAB" and word not in QUANTIFIERS:
            habit = True
        elif habit:
            # What happens "normally", "as a rule": a description of the process, to the
            # sentence's end or its "mas" (commas do not close it).
            if word in BUT:
                habit = False
            elif key:
                label = "h_" + label
        if emit is not None:
            emit(f"b:{word1} {word}")
        else:
            if left_row is not None and (weight := left_row.get(word)) is not None:
                raw += weight
            if lefts is not None and not trigger:
                trigger = word1 in lefts
        if key:
            if label != frame1:
                # The clause frame: key classes only, in order, repeats collapsed.
                if emit is not None:
                    emit(f"k:{frame1} {label}")
                    if frame2_left:
                        emit(f"k:{frame2_left} {frame1} {label}")
                else:
                    raw, trigger = _frame_score(compiled, raw, trigger, frame2_left, frame1, label)
                frame2_left, frame1 = frame1, label
            if label not in keys:
                # Ordered pairs of key classes anywhere in the clause: "NAME ... vai ... INF"
                # also when a long apposition separates the subject from its verb.
                for earlier in keys:
                    if emit is not None:
                        emit(f"p:{earlier}<{label}")
                        continue
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
        elif word1 == "me" and word in CUSTOMER_FIRST:
            scope = "i_"
        weight = unigram if pairs is None else question_unigram
        if weight is not None:
            unigrams.append(weight)
        word1, left_row = word, row
    if emit is not None:
        emit(f"b:{word1} </s>")
        emit(f"k:{frame1} </s>")
        if frame2_left:
            emit(f"k:{frame2_left} {frame1} </s>")
        return raw, trigger
    if left_row is not None and (weight := left_row.get("</s>")) is not None:
        raw += weight
    if not trigger and (lefts := compiled.bigram_triggers.get("</s>")) is not None:
        trigger = word1 in lefts
    return _frame_score(compiled, raw, trigger, frame2_left, frame1, "</s>")


def _frame_score(
    compiled: CompiledWeights, raw: float, trigger: bool, left2: str, left: str, label: str
) -> tuple[float, bool]:
    """``raw`` plus the weights of ``k:{left} {label}`` and ``k:{left2} {left} {label}``."""
    row = compiled.frame2.get(left)
    if row is not None and (weight := row.get(label)) is not None:
        raw += weight
    if not trigger and (lefts := compiled.frame_triggers.get(label)) is not None:
        trigger = left in lefts
    if left2:
        rows = compiled.frame3.get(left2)
        row = rows.get(left) if rows is not None else None
        if row is not None and (weight := row.get(label)) is not None:
            raw += weight
    return raw, trigger
