"""The offline intent classifier: no network, no downloaded weights.

``LocalClassifier`` (few-shot TF-IDF over words and character n-grams) picks the intent
kind from the pt-BR examples in ``examples.py``; small, explicit extraction rules fill the
rest of ``INTENT_CLASSIFICATION_SCHEMA`` the way the LLM classifier would: the action
verbs, the items the customer names after the verb, the refined RAG queries and the
yes/no of a confirmation. A message that resembles no example well enough is
``unknown`` (the orchestrator answers it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from conversation.llm.local_classifier import LocalClassifier, get_or_train
from conversation.runtime.intent_extractor import IntentClassifierContext
from conversation.runtime.textnorm import fold

from .examples import (
    CONFIRMATION_NO,
    CONFIRMATION_YES,
    GREETING,
    HUMAN_REQUEST,
    INTENT_EXAMPLES,
)


def _wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Below this calibrated confidence the message is "unknown" (measured on the examples'
# paraphrases in tests/runtime_adapters/test_offline_classifier.py).
MIN_CONFIDENCE = 0.30

# Folded word -> the verb the classifier reports (the composer maps some to scripts).
_VERB_STEMS: tuple[tuple[str, str], ...] = (
    ("cancel", "cancelar"),
    ("remov", "cancelar"),
    ("exclu", "cancelar"),
    ("desativ", "cancelar"),
    ("descadastr", "cancelar"),
    ("tira", "cancelar"),
    ("tire", "cancelar"),
    ("tiro", "cancelar"),
    ("ressarc", "ressarcimento"),
    ("devol", "devolução"),
    ("reembols", "reembolso"),
    ("estorn", "estorno"),
    ("contest", "contestar"),
)
_WORD = re.compile(r"[\w+]+")
# "tirar uma dúvida" asks a question; it removes nothing.
_DOUBT = re.compile(r"\btira\w* (?:uma |umas |a |as |minha |minhas )?duvidas?\b")
_EM_DOBRO = re.compile(r"\bem dobro\b")
_NAO_QUERO_MAIS = re.compile(r"\bnao quero mais\b")
# Where a named item ends: "cancela o VOD que eu não pedi", "tira o HBO da minha conta".
_TERMINATOR = re.compile(
    r"\b(?:que|porque|pois|por|pra|para|pq|agora|hoje|j[aá]|obrigad[oa]|valeu|"
    r"da minha|na minha|do meu|no meu|da fatura|na fatura|da conta|na conta|"
    r"dessa|desta|nessa|nesta|deste|desse)\b",
    re.IGNORECASE,
)
_ITEM_SEPARATOR = re.compile(r"\s*(?:,|;|/|\be\b|\btamb[eé]m\b)\s*", re.IGNORECASE)
# Words dropped at the edges of a named item ("o", "esse serviço", "em dobro do").
_ITEM_FILLERS = _wordset(
    "o a os as um uma meu minha meus minhas esse essa esses essas este esta estes estas "
    "aquele aquela de do da dos das em no na dobro valor valores cobranca cobrancas "
    "servico servicos assinatura assinaturas pacote me mim pode voce favor tambem "
    "ai aqui ele ela eles elas isso isto tudo mais"
)
_GENERIC_MENTIONS = frozenset({"", "isso", "tudo", "tudo isso", "todos", "ele", "ela", "eles"})
# "nenhum deles" after the invoice was listed: every listed item (plural anaphora).
_PLURAL_ANAPHORA = (
    "nenhum deles",
    "nenhum desses",
    "nada disso",
    "todos esses",
    "esses todos",
    "todos eles",
    "todos os itens",
)
_SNAPSHOT_LINE = re.compile(r"^- (.+) \(linha final \w+\)$")
_QUESTION_SCAFFOLD = re.compile(
    r"\b(?:o que (?:[eé]|eh|significa|quer dizer)|o que seria|pra que serve|para que serve|"
    r"como funciona|[eé] o que exatamente|que (?:servi[cç]o|neg[oó]cio|coisa) [eé] (?:esse|essa)"
    r"|me explica)\b",
    re.IGNORECASE,
)
_CONCEPT_SEPARATOR = re.compile(r"\s*(?:,|;|\?|\be\b)\s*", re.IGNORECASE)
_CONCEPT_FILLERS = _wordset(
    "esse essa este esta isso um uma tal de do da o a os as tem tambem ai aqui aquele aquela "
    "servico negocio coisa exatamente me explica que e eh seria"
)


class OfflineIntentClassifier:
    """``IntentClassifierLLM`` without a model: ``LocalClassifier`` plus extraction rules."""

    uses_history = False

    def __init__(
        self,
        examples: Mapping[str, Sequence[str]] = INTENT_EXAMPLES,
        *,
        min_confidence: float = MIN_CONFIDENCE,
    ) -> None:
        self._model: LocalClassifier = get_or_train(examples)
        self._min_confidence = min_confidence

    def classify(
        self,
        user_text: str,
        *,
        context: IntentClassifierContext,
        callbacks: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        prediction = self._model.predict(user_text)
        label = prediction.label if prediction.confidence >= self._min_confidence else None
        verbs = action_verbs(user_text)
        items = mentioned_items(user_text, context) if verbs else []
        if verbs and label != CONFIRMATION_NO and not_asking_to_act(user_text):
            # "se eu cancelar o HBO, perco o desconto?", "não quero cancelar o Tamboro":
            # a verb and an item, but no request to act. Never an action the runtime would
            # confirm (a "sim" to that would cancel what the customer asked about); the
            # orchestrator answers it.
            return {"kind": "unknown"}
        if verbs and items and label not in {"action_request", CONFIRMATION_NO, HUMAN_REQUEST}:
            # An explicit verb and a named item outweigh a resemblance to other examples.
            label = "action_request"
        if label is None or label in {GREETING, HUMAN_REQUEST}:
            return {"kind": "unknown"}
        if label == "action_request" and not verbs:
            # Nothing to act on that the rules can name: the orchestrator reads it instead.
            return {"kind": "unknown"}
        if label == CONFIRMATION_YES:
            return {"kind": "confirmation_response", "affirmation": True}
        if label == CONFIRMATION_NO:
            out: dict[str, Any] = {"kind": "confirmation_response", "negation": True}
            if verbs:  # "não, cancela o tamboro": the runtime's rule 1.6 family
                out.update(requested_action=True, action_verbs=verbs, mentioned_items=items)
            return out
        if label == "action_request":
            return {
                "kind": "action_request",
                "requested_action": True,
                "action_verbs": verbs,
                "mentioned_items": items,
            }
        if label == "conceptual_question":
            return {"kind": "conceptual_question", "rag_query": rag_queries(user_text)}
        return {"kind": label}


# Asking what acting would mean, a condition, or a refusal: "se eu cancelar...", "dá multa?",
# "perco o desconto?", "o que acontece se...", "não quero cancelar", "cancelar não". (A
# polite question asks to act: "pode cancelar o HBO?".)
_NOT_A_REQUEST = re.compile(
    r"^\s*(?:e\s+)?se\b|\bse\s+eu\b|\b(?:d[aá]|tem|paga|pago|cobra|cobram)\s+multa\b"
    r"|\b(?:perco|perde|perderia|perder)\b|\bo\s+que\s+acontece\b"
    r"|\b(?:n[aã]o|nem)\s+(?:\w+\s+){0,2}?(?:cancel|tir|remov|exclu|desativ|suspend)\w*"
    r"|\b(?:cancel|tir|remov|exclu|desativ|suspend)\w*\s+(?:\w+\s+){0,3}?n[aã]o\s*[.!]*\s*$",
    re.IGNORECASE,
)


def not_asking_to_act(text: str) -> bool:
    """Whether the customer asks what acting would mean, sets a condition or refuses, rather
    than asks to act."""
    return _NOT_A_REQUEST.search(fold(text)) is not None


def action_verbs(text: str) -> list[str]:
    """The action verbs of ``text`` (deduplicated, in order), as the composer reads them."""
    folded = _DOUBT.sub(" ", fold(text))
    verbs: list[str] = []
    if _NAO_QUERO_MAIS.search(folded):
        verbs.append("cancelar")
    for word in _WORD.findall(folded):
        for stem, verb in _VERB_STEMS:
            if word.startswith(stem):
                if verb in {"ressarcimento", "devolução", "reembolso", "estorno"} and (
                    _EM_DOBRO.search(folded)
                ):
                    verb = "ressarcimento em dobro"
                verbs.append(verb)
                break
    return list(dict.fromkeys(verbs))


def mentioned_items(text: str, context: IntentClassifierContext) -> list[str]:
    """Items named after the first action verb ("cancela o VOD e o HBO Max" -> VOD, HBO Max)."""
    folded = fold(text)
    listed = _snapshot_names(context.invoice_snapshot_items)
    if listed and any(phrase in folded for phrase in _PLURAL_ANAPHORA):
        return listed
    start = _after_verb(text)
    if start is None:
        return []
    tail = text[start:]
    terminator = _TERMINATOR.search(tail)
    if terminator is not None:
        tail = tail[: terminator.start()]
    out: list[str] = []
    for segment in _ITEM_SEPARATOR.split(tail):
        item = _strip_words(segment, _ITEM_FILLERS)
        if fold(item) not in _GENERIC_MENTIONS and item not in out:
            out.append(item)
    return out


def rag_queries(text: str) -> list[str]:
    """One canonical query per concept: "o que é o tal de tamboro" -> "tamboro o que é"."""
    body = _QUESTION_SCAFFOLD.sub(" , ", text)
    out: list[str] = []
    for segment in _CONCEPT_SEPARATOR.split(body):
        concept = _strip_words(segment, _CONCEPT_FILLERS)
        if concept and fold(concept) not in _GENERIC_MENTIONS:
            query = f"{concept} o que é"
            if query not in out:
                out.append(query)
    return out


def _after_verb(text: str) -> int | None:
    """Character offset just after the first action verb (or "não quero mais")."""
    folded_words = [(m, fold(m.group())) for m in _WORD.finditer(text)]
    for i, (match, word) in enumerate(folded_words):
        if _DOUBT.match(" ".join(w for _, w in folded_words[i : i + 3])):
            continue
        if word == "quero" and i > 0 and folded_words[i - 1][1] == "nao":
            following = folded_words[i + 1] if i + 1 < len(folded_words) else None
            if following is not None and following[1] == "mais":
                return following[0].end()
            return match.end()
        if any(word.startswith(stem) for stem, _ in _VERB_STEMS):
            return match.end()
    return None


def _strip_words(segment: str, fillers: frozenset[str]) -> str:
    words = _WORD.findall(segment)
    while words and fold(words[0]) in fillers:
        words.pop(0)
    while words and fold(words[-1]) in fillers:
        words.pop()
    return " ".join(words)


def _snapshot_names(rendered: str) -> list[str]:
    names = []
    for line in rendered.splitlines():
        match = _SNAPSHOT_LINE.match(line.strip())
        if match and match.group(1) not in names:
            names.append(match.group(1))
    return names
