"""The routing quality loop, pure: score labelled phrases, build the confusion table, and
search the thresholds that would have routed them best. No database, no model calls (of
Django only gettext, for the pt-BR copy it writes): the run
(``services.quality_run_execute``) classifies each phrase once and hands the verdicts
here; ``quality_results`` is what the run stores.

A phrase's expected intent may be ``none``: it should match no intent, so the router's
abstention (the fallback agent, or the generic answer) is the right answer for it. Any
other abstention is a miss.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from routers.classification import NONE_INTENT

MAX_PHRASE_CHARS = 500
NONE_ALIASES = frozenset({NONE_INTENT, "nenhuma", "nenhum", "-"})
MIN_CONFIDENCE_GRID = tuple(round(0.30 + 0.05 * i, 2) for i in range(14))  # 0.30 .. 0.95
LOCAL_ACCEPT_GRID = tuple(round(0.50 + 0.05 * i, 2) for i in range(11))  # 0.50 .. 1.00
FEW_PHRASES = 20
MAX_ERRORS_SHOWN = 100

LlmStatus = Literal["ok", "failed", "skipped"]


@dataclass(frozen=True)
class PhraseVerdict:
    """Everything the run learned about one phrase: the local guess and, when the
    workspace has an LLM, the LLM's answer (asked for every phrase, so any local
    threshold can be replayed without calling the model again)."""

    text: str
    expected: str  # an intent name or "none"
    local_intent: str | None
    local_confidence: float
    llm_intent: str | None = None
    llm_confidence: float = 0.0
    llm_status: LlmStatus = "skipped"


@dataclass(frozen=True)
class Thresholds:
    min_confidence: float
    local_accept_threshold: float


def route(verdict: PhraseVerdict, t: Thresholds, *, has_llm: bool) -> tuple[str, str]:
    """(predicted intent or "none", stage) — the cascade's rule, replayed."""
    if has_llm and verdict.local_confidence < t.local_accept_threshold:
        if verdict.llm_status == "failed":
            return NONE_INTENT, "llm"
        intent, confidence, stage = verdict.llm_intent, verdict.llm_confidence, "llm"
    else:
        intent, confidence, stage = verdict.local_intent, verdict.local_confidence, "local"
    if intent is None or confidence < t.min_confidence:
        return NONE_INTENT, stage
    return intent, stage


@dataclass(frozen=True)
class Evaluation:
    correct: int
    total: int
    llm_calls: int  # phrases the cascade would send to the LLM
    confusion: dict[str, dict[str, int]]  # expected -> predicted -> count
    errors: tuple[dict[str, Any], ...]

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    @property
    def llm_share(self) -> float:
        return self.llm_calls / self.total if self.total else 0.0


def evaluate(verdicts: Sequence[PhraseVerdict], t: Thresholds, *, has_llm: bool) -> Evaluation:
    correct = llm_calls = 0
    confusion: dict[str, dict[str, int]] = {}
    errors: list[dict[str, Any]] = []
    for v in verdicts:
        predicted, stage = route(v, t, has_llm=has_llm)
        llm_calls += stage == "llm"
        row = confusion.setdefault(v.expected, {})
        row[predicted] = row.get(predicted, 0) + 1
        if predicted == v.expected:
            correct += 1
        else:
            errors.append(
                {
                    "text": v.text,
                    "expected": v.expected,
                    "predicted": predicted,
                    "stage": stage,
                    "confidence": round(
                        v.llm_confidence if stage == "llm" else v.local_confidence, 3
                    ),
                }
            )
    return Evaluation(correct, len(verdicts), llm_calls, confusion, tuple(errors))


@dataclass(frozen=True)
class Suggestion:
    thresholds: Thresholds
    evaluation: Evaluation
    current: Evaluation
    changed: bool
    explanation: str


def _pct(value: float) -> str:
    return f"{round(100 * value)}%"


def _num(value: float) -> str:
    return f"{value:.2f}".replace(".", ",")


def suggest_thresholds(
    verdicts: Sequence[PhraseVerdict], current: Thresholds, *, has_llm: bool
) -> Suggestion:
    """Grid-search the thresholds for the best accuracy. Ties go to the pair nearest the
    current one (don't move without a gain), then to the one asking the LLM least."""
    local_grid = LOCAL_ACCEPT_GRID if has_llm else (current.local_accept_threshold,)
    candidates = {current} | {Thresholds(m, t) for m in MIN_CONFIDENCE_GRID for t in local_grid}

    def rank(t: Thresholds) -> tuple[float, float, float]:
        e = evaluate(verdicts, t, has_llm=has_llm)
        distance = abs(t.min_confidence - current.min_confidence) + abs(
            t.local_accept_threshold - current.local_accept_threshold
        )
        return (-e.correct, round(distance, 6), e.llm_calls)

    best = min(
        sorted(candidates, key=lambda t: (t.min_confidence, t.local_accept_threshold)), key=rank
    )
    best_eval = evaluate(verdicts, best, has_llm=has_llm)
    current_eval = evaluate(verdicts, current, has_llm=has_llm)
    changed = best != current and best_eval.correct > current_eval.correct
    if not changed:
        best, best_eval = current, current_eval
    return Suggestion(
        thresholds=best,
        evaluation=best_eval,
        current=current_eval,
        changed=changed,
        explanation=_explain(best, best_eval, current, current_eval, has_llm=has_llm),
    )


def _explain(
    best: Thresholds,
    best_eval: Evaluation,
    current: Thresholds,
    current_eval: Evaluation,
    *,
    has_llm: bool,
) -> str:
    """The suggestion in pt-BR, through gettext (a run stores it in the language active
    when it finished: the task's, ``LANGUAGE_CODE``)."""
    n = best_eval.total
    if n == 0:
        return _("Ainda não há frases rotuladas: adicione algumas para medir o roteador.")
    settings = {
        "min": _num(current.min_confidence),
        "local": _num(current.local_accept_threshold),
    }
    parts: list[str] = []
    if best == current and current_eval.correct == n:
        parts.append(
            ngettext(
                "A configuração atual (confiança mínima %(min)s, limiar local %(local)s) "
                "acerta a única frase. Não há o que ajustar: quando aparecerem erros em "
                "conversas reais, rotule essas frases e meça de novo.",
                "A configuração atual (confiança mínima %(min)s, limiar local %(local)s) "
                "acerta todas as %(n)s frases. Não há o que ajustar: quando aparecerem erros "
                "em conversas reais, rotule essas frases e meça de novo.",
                n,
            )
            % {**settings, "n": n}
        )
    elif best == current:
        parts.append(
            ngettext(
                "A configuração atual (confiança mínima %(min)s, limiar local %(local)s) "
                "acerta %(correct)s de %(n)s frase (%(pct)s). Nenhum outro ajuste dos "
                "limiares acerta mais: para melhorar, revise as descrições e os exemplos das "
                "intenções que aparecem nos erros abaixo.",
                "A configuração atual (confiança mínima %(min)s, limiar local %(local)s) "
                "acerta %(correct)s de %(n)s frases (%(pct)s). Nenhum outro ajuste dos "
                "limiares acerta mais: para melhorar, revise as descrições e os exemplos das "
                "intenções que aparecem nos erros abaixo.",
                n,
            )
            % {
                **settings,
                "correct": current_eval.correct,
                "n": n,
                "pct": _pct(current_eval.accuracy),
            }
        )
    else:
        parts.append(
            ngettext(
                "Com confiança mínima %(best_min)s e limiar local %(best_local)s, "
                "%(correct)s de %(n)s frase (%(pct)s) iria para o lugar certo, contra "
                "%(current_correct)s (%(current_pct)s) com a configuração atual (%(min)s e "
                "%(local)s).",
                "Com confiança mínima %(best_min)s e limiar local %(best_local)s, "
                "%(correct)s de %(n)s frases (%(pct)s) iriam para o lugar certo, contra "
                "%(current_correct)s (%(current_pct)s) com a configuração atual (%(min)s e "
                "%(local)s).",
                n,
            )
            % {
                **settings,
                "best_min": _num(best.min_confidence),
                "best_local": _num(best.local_accept_threshold),
                "correct": best_eval.correct,
                "n": n,
                "pct": _pct(best_eval.accuracy),
                "current_correct": current_eval.correct,
                "current_pct": _pct(current_eval.accuracy),
            }
        )
        if best.min_confidence > current.min_confidence:
            parts.append(
                _(
                    "Subir a confiança mínima faz o roteador desistir das frases duvidosas: "
                    "elas vão para o agente de reserva em vez de um agente errado."
                )
            )
        elif best.min_confidence < current.min_confidence:
            parts.append(
                _(
                    "Baixar a confiança mínima deixa o roteador decidir frases que hoje iriam "
                    "para o agente de reserva, porque ele costuma acertá-las."
                )
            )
    if has_llm:
        parts.append(
            _(
                "O modelo de linguagem seria consultado em %(pct)s das frases; nas demais, o "
                "classificador local decide sozinho, sem custo."
            )
            % {"pct": _pct(best_eval.llm_share)}
        )
    else:
        parts.append(
            _(
                "Sem chave de API, só o classificador local decide: o limiar local não muda "
                "o resultado e fica como está."
            )
        )
    if n < FEW_PHRASES:
        parts.append(
            ngettext(
                "Com só %(n)s frase, trate a sugestão como um indício: rotule mais frases "
                "reais para ter uma medida firme.",
                "Com só %(n)s frases, trate a sugestão como um indício: rotule mais frases "
                "reais para ter uma medida firme.",
                n,
            )
            % {"n": n}
        )
    return " ".join(parts)


def confusion_table(
    confusion: dict[str, dict[str, int]], intent_names: Iterable[str]
) -> dict[str, Any]:
    """Labels (the router's intents, then "none", then any stale label) and count rows."""
    labels = [n for n in intent_names if n != NONE_INTENT]
    seen = set(labels)
    extra = sorted({k for k in confusion} | {p for row in confusion.values() for p in row})
    labels += [x for x in extra if x not in seen and x != NONE_INTENT]
    labels.append(NONE_INTENT)
    rows = [
        {
            "expected": e,
            "cells": [
                {"label": p, "count": confusion.get(e, {}).get(p, 0), "hit": p == e} for p in labels
            ],
        }
        for e in labels
        if confusion.get(e)
    ]
    return {"labels": labels, "rows": rows}


def quality_results(
    verdicts: Sequence[PhraseVerdict],
    current: Thresholds,
    intent_names: Sequence[str],
    *,
    has_llm: bool,
) -> dict[str, Any]:
    """A finished run's stored results (``QualityRun.results``): the score at the router's
    current thresholds, the confusion table, the misses and the suggested thresholds."""
    evaluation = evaluate(verdicts, current, has_llm=has_llm)
    suggestion = suggest_thresholds(verdicts, current, has_llm=has_llm)
    return {
        "has_llm": has_llm,
        "total": evaluation.total,
        "correct": evaluation.correct,
        "accuracy": round(evaluation.accuracy, 4),
        "llm_share": round(evaluation.llm_share, 4),
        "thresholds": {
            "min_confidence": current.min_confidence,
            "local_accept_threshold": current.local_accept_threshold,
        },
        "confusion": confusion_table(evaluation.confusion, intent_names),
        "errors": list(evaluation.errors[:MAX_ERRORS_SHOWN]),
        "error_count": len(evaluation.errors),
        "suggestion": {
            "min_confidence": suggestion.thresholds.min_confidence,
            "local_accept_threshold": suggestion.thresholds.local_accept_threshold,
            "accuracy": round(suggestion.evaluation.accuracy, 4),
            "correct": suggestion.evaluation.correct,
            "changed": suggestion.changed,
            "explanation": suggestion.explanation,
        },
    }


@dataclass(frozen=True)
class ParsedLines:
    phrases: tuple[tuple[str, str], ...]  # (text, intent), last repeat of a text wins
    errors: tuple[str, ...]  # pt-BR through gettext, one per bad line


def parse_labelled_lines(text: str, intent_names: Iterable[str]) -> ParsedLines:
    """``frase;intenção`` per line. Blank lines and lines starting with ``#`` are skipped;
    the split is at the last ``;`` so a phrase may contain one."""
    canonical = {n.casefold(): n for n in intent_names}
    phrases: dict[str, str] = {}
    errors: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        phrase, sep, intent = line.rpartition(";")
        phrase, intent = phrase.strip(), intent.strip()
        if not sep or not phrase:
            errors.append(_("Linha %(n)s: use o formato frase;intenção.") % {"n": number})
            continue
        if len(phrase) > MAX_PHRASE_CHARS:
            errors.append(
                _("Linha %(n)s: a frase passa de %(max)s caracteres.")
                % {"n": number, "max": MAX_PHRASE_CHARS}
            )
            continue
        folded = intent.casefold()
        if folded in NONE_ALIASES:
            name = NONE_INTENT
        elif folded in canonical:
            name = canonical[folded]
        else:
            errors.append(
                _("Linha %(n)s: a intenção «%(intent)s» não existe neste roteador.")
                % {"n": number, "intent": intent}
            )
            continue
        phrases.pop(phrase, None)
        phrases[phrase] = name
    return ParsedLines(tuple(phrases.items()), tuple(errors))
