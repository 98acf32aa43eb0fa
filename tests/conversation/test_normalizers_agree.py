"""The text normalizers agree where they serve the same keyword sets (issue 9, item 6).

Before the merge there were five folds/normalizers: ``conversation/text.py`` (the guards'
opt-out/opt-in keywords, handoff keywords, knowledge stopwords), ``conversation/llm/
offline.py`` (the offline model's rules), ``conversation/llm/local_classifier.py`` (the
classifier's featurizer), ``conversation/runtime/textnorm.py`` (item names of the runtime)
and ``cases/guardrail/normalize.py`` (the promise lexicon). The ``_before_*`` functions below
are frozen copies of the merged ones as they were (``git show`` of the commit before the
merge), so the shared implementation is held to the old behaviour for every input.

What remains separate, and why (each held by a property here):
- ``conversation.text.normalize`` has one option, ``underscore_is_space``: the offline model
  splits words at "_", the guards do not. They agree on every text without "_"; with one they
  legitimately differ (and merging either way would change what a turn does).
- ``conversation/runtime/textnorm.fold``: the runtime imports nothing outside its package
  (tests/runtime/test_governance.py) and lower-cases instead of case-folding; it equals the
  shared fold whenever those two agree.
- ``cases/guardrail/normalize.fold``: length-preserving (promise spans index the original
  text); it equals the shared fold on pt-BR text, the alphabet of the promise lexicon.
"""

from __future__ import annotations

import re
import unicodedata

from hypothesis import assume, given
from hypothesis import strategies as st

from cases.guardrail import lexicon
from cases.guardrail.normalize import fold as guardrail_fold
from conversation import text
from conversation.llm import local_classifier, offline
from conversation.llm.offline import reading
from conversation.llm.offline.replies import NO_RESULT_MARKERS
from conversation.runtime import textnorm

# --- frozen copies of the pre-merge implementations ------------------------------------

_SPACES = re.compile(r"\s+")
_PUNCT = re.compile(r"[^\w\s]")


def _before_guards_normalize(value: str) -> str:
    decomposed = unicodedata.normalize("NFKD", value.casefold())
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _SPACES.sub(" ", _PUNCT.sub(" ", stripped)).strip()


def _before_offline_normalize(value: str) -> str:
    decomposed = unicodedata.normalize("NFKD", value.casefold())
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^\w\s]|_", " ", stripped).split())


_STRETCH = re.compile(r"([^\W\d_])\1{2,}")
_WORD = re.compile(r"[a-z0-9]+")


def _before_classifier_normalize(value: str) -> str:
    folded = unicodedata.normalize("NFKD", value.casefold())
    plain = "".join(ch for ch in folded if not unicodedata.combining(ch))
    plain = _STRETCH.sub(r"\1", plain)
    abbreviations = local_classifier.ABBREVIATIONS
    return " ".join(abbreviations.get(w, w) for w in _WORD.findall(plain))


# --- the keyword sets the normalizers serve --------------------------------------------

OPT_OUT = ("parar", "sair", "stop", "descadastrar")  # conversation/turns/guards.py
OPT_IN = ("voltar",)
HANDOFF_KEYWORDS = ("falar com atendente", "quero um humano", "atendente")  # seed_demo + spec
OFFLINE_PHRASES = (
    "atendente",
    "humano",
    "falar com alguém",
    "pessoa de verdade",
    "quero uma pessoa",
    "oi",
    "olá",
    "bom dia",
    "e aí",
    "quero o reembolso",
    "cancelar o pedido",
    "liberar o acesso",
    "estorno",
    "dinheiro de volta",
    *NO_RESULT_MARKERS,
)
KEYWORDS = (*OPT_OUT, *OPT_IN, *HANDOFF_KEYWORDS, *OFFLINE_PHRASES)

PT_LETTERS = "abcdefghijklmnopqrstuvwxyzáàâãéêíóôõúüçABCDEFGHIJKLMNOPQRSTUVWXYZÁÀÂÃÉÊÍÓÔÕÚÜÇ"
pt_text = st.text(alphabet=PT_LETTERS + "0123456789 -/\n\t", max_size=60)
noise = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]),
    max_size=12,
)


@st.composite
def messages(draw: st.DrawFn, *, underscores: bool = True) -> str:
    """WhatsApp-like text: keyword phrases (in any case, with or without accents) mixed with
    punctuation, emoji and arbitrary noise, so keyword decisions are exercised both ways."""
    parts = draw(
        st.lists(
            st.one_of(
                st.sampled_from(KEYWORDS).map(lambda k: k.upper() if len(k) % 2 else k),
                pt_text,
                noise,
                st.sampled_from(["!", "?", "...", ",", " ", "😀", "  ", "\n", "_", "*", "~"]),
            ),
            max_size=6,
        )
    )
    joined = "".join(parts)
    return joined if underscores else joined.replace("_", " ")


def _guards_decisions(normalized: str) -> tuple[object, ...]:
    haystack = f" {normalized} "
    return (
        normalized in OPT_OUT,
        normalized in OPT_IN,
        next((k for k in HANDOFF_KEYWORDS if f" {text.normalize(k)} " in haystack), None),
    )


def _offline_decisions(normalized: str) -> tuple[object, ...]:
    return (
        reading.asks_for_person(normalized),
        reading.is_greeting_only(normalized),
        reading.human_only_request(normalized),
        any(marker in normalized for marker in NO_RESULT_MARKERS),
    )


# --- the merged copies reproduce the old ones -------------------------------------------


@given(messages())
def test_shared_normalize_is_the_guards_copy_for_all_text(value: str) -> None:
    assert text.normalize(value) == _before_guards_normalize(value)


@given(messages())
def test_shared_normalize_with_underscores_is_the_offline_copy_for_all_text(value: str) -> None:
    expected = _before_offline_normalize(value)
    assert text.normalize(value, underscore_is_space=True) == expected
    assert offline.normalize(value) == expected


@given(st.one_of(messages(), noise))
def test_local_classifier_normalize_on_the_shared_fold_is_unchanged(value: str) -> None:
    assert local_classifier.normalize(value) == _before_classifier_normalize(value)


@given(st.one_of(messages(), noise))
def test_contains_keyword_finds_what_the_old_normalizer_found(value: str) -> None:
    haystack = f" {_before_guards_normalize(value)} "
    expected = next(
        (k for k in HANDOFF_KEYWORDS if f" {_before_guards_normalize(k)} " in haystack), None
    )
    assert text.contains_keyword(value, HANDOFF_KEYWORDS) == expected


# --- the two options agree on every keyword set, except at "_" --------------------------


@given(messages(underscores=False))
def test_both_options_decide_every_keyword_the_same_without_underscores(value: str) -> None:
    plain = text.normalize(value)
    split = text.normalize(value, underscore_is_space=True)
    assert plain == split
    assert _guards_decisions(plain) == _guards_decisions(split)
    assert _offline_decisions(plain) == _offline_decisions(split)


def test_keywords_normalize_the_same_under_both_options() -> None:
    for keyword in KEYWORDS:
        assert text.normalize(keyword) == text.normalize(keyword, underscore_is_space=True)
        assert text.normalize(text.normalize(keyword)) == text.normalize(keyword)


def test_underscore_is_where_the_options_legitimately_differ() -> None:
    # WhatsApp italics: the offline rules see the word, the guards keep today's exact match.
    assert reading.asks_for_person(offline.normalize("_quero um atendente_"))
    assert text.normalize("_parar_") == "_parar_" and "_parar_" not in OPT_OUT
    assert offline.normalize("_parar_") == "parar"


# --- the folds that stay separate agree on what they serve ------------------------------


@given(st.one_of(messages(), noise, pt_text))
def test_runtime_fold_is_the_shared_fold_where_lower_and_casefold_agree(value: str) -> None:
    assume(value.lower() == value.casefold())
    assert textnorm.fold(value) == " ".join(text.fold(value).split())


def test_runtime_fold_lowercases_where_the_shared_fold_casefolds() -> None:
    assert textnorm.fold("Straße") == "straße"
    assert text.fold("Straße") == "strasse"


@given(pt_text)
def test_guardrail_fold_is_the_shared_fold_on_pt_br_text(value: str) -> None:
    assert guardrail_fold(value) == text.fold(value)
    assert len(guardrail_fold(value)) == len(value)


def test_promise_lexicon_is_already_folded_for_both_folds() -> None:
    for noun in (*lexicon.HUM_CORE_NOUNS, *lexicon.HUM_EXT_NOUNS):
        assert guardrail_fold(noun) == noun == text.fold(noun)


def test_guardrail_fold_keeps_length_where_the_shared_fold_cannot() -> None:
    assert len(guardrail_fold("Straße ﬁm")) == len("Straße ﬁm")
    assert len(text.fold("Straße ﬁm")) > len("Straße ﬁm")
