"""Measuring a local stage on labelled routing scenarios (bench/router.py and the tests).

The figures, as the routing issue defines them:

* top-1: among messages that have an intent, the share whose local label is it;
* routed offline: among the same messages, the share the resolver hands to the right agent
  when no model stands behind the local stage: the right label at ``min_confidence`` or
  above (a right label below it goes to the fallback, as spec Task 4 routes it);
* none rejected: among messages that fit no intent, the share the router does not
  route to an intent (the label is ``none``, or the intent is below ``min_confidence``,
  which the resolver sends to the fallback);
* decided locally: the share of all messages whose local confidence reaches the accept
  threshold (the cascade then skips the LLM), and the precision of those decisions
  (``none`` for a no-intent message counts as right);
* topic switches moved (to the right intent) and same-subject follow-ups kept;
* learning: stream the cases, let an oracle stand in for the LLM on every message the
  local stage does not decide, accept each of those verdicts as a phrase, and retrain.

Pure: a stage is anything with ``predict`` (``predict_many`` is used when present).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conversation.llm.local_classifier import LocalPrediction

from .local import LocalStage
from .phrase import Phrase
from .stickiness import context_text, should_switch
from .types import NONE_INTENT, IntentOption

Case = tuple[str, str | None]  # (message, intent or None for "fits no intent")
Pair = tuple[str, str, str, str]  # (first, first intent, second, second intent)


@dataclass(frozen=True)
class Scenario:
    id: str
    intents: tuple[IntentOption, ...]
    cases: tuple[Case, ...]
    pairs: tuple[Pair, ...] = ()


def scenario_from_json(
    obj: Mapping[str, Any], *, cases_key: str = "cases", pairs_key: str = "topic_switch"
) -> Scenario:
    """A scenario of routing_dev.json (or of the own fixtures, with their split keys)."""
    intents = tuple(
        IntentOption(
            name=m["intent_name"],
            description=m["intent_description"],
            examples=tuple(m["examples"]),
        )
        for m in obj["members"]
    )
    cases = tuple((str(t), g if g else None) for t, g in obj.get(cases_key, []))
    pairs = tuple((str(a), str(ai), str(b), str(bi)) for a, ai, b, bi in obj.get(pairs_key, []))
    return Scenario(id=str(obj["id"]), intents=intents, cases=cases, pairs=pairs)


def predict_all(stage: LocalStage, texts: Sequence[str]) -> list[LocalPrediction]:
    many = getattr(stage, "predict_many", None)
    if callable(many):
        return list(many(texts))
    return [stage.predict(t) for t in texts]


def _label(p: LocalPrediction) -> str:
    return p.label if p.label else NONE_INTENT


@dataclass(frozen=True)
class RoutingScore:
    top1: float
    none_rejected: float
    decided_share: float
    decided_precision: float | None  # None: nothing was decided locally
    in_scope: int
    no_intent: int
    routed_offline: float


def average(scores: Sequence[RoutingScore]) -> RoutingScore:
    """The scenarios' mean figures (the issue's targets are averages over scenarios); the
    decided precision over the scenarios that decided anything."""
    precisions = [s.decided_precision for s in scores if s.decided_precision is not None]
    return RoutingScore(
        top1=statistics.fmean(s.top1 for s in scores),
        none_rejected=statistics.fmean(s.none_rejected for s in scores),
        decided_share=statistics.fmean(s.decided_share for s in scores),
        decided_precision=statistics.fmean(precisions) if precisions else None,
        in_scope=sum(s.in_scope for s in scores),
        no_intent=sum(s.no_intent for s in scores),
        routed_offline=statistics.fmean(s.routed_offline for s in scores),
    )


def score_cases(
    stage: LocalStage,
    cases: Sequence[Case],
    *,
    accept_threshold: float,
    min_confidence: float,
) -> RoutingScore:
    predictions = predict_all(stage, [t for t, _ in cases])
    hits: list[bool] = []
    routed: list[bool] = []
    rejected: list[bool] = []
    decided: list[bool] = []
    for (_, gold), p in zip(cases, predictions, strict=True):
        label = _label(p)
        if gold is None:
            rejected.append(label == NONE_INTENT or p.confidence < min_confidence)
        else:
            hits.append(label == gold)
            routed.append(label == gold and p.confidence >= min_confidence)
        if p.confidence >= accept_threshold:
            decided.append(label == (gold or NONE_INTENT))
    return RoutingScore(
        top1=sum(hits) / len(hits) if hits else 0.0,
        none_rejected=sum(rejected) / len(rejected) if rejected else 0.0,
        decided_share=len(decided) / len(cases) if cases else 0.0,
        decided_precision=sum(decided) / len(decided) if decided else None,
        in_scope=len(hits),
        no_intent=len(rejected),
        routed_offline=sum(routed) / len(routed) if routed else 0.0,
    )


@dataclass(frozen=True)
class SwitchScore:
    moved: float  # clear switches moved to the right intent
    kept: float  # same-subject follow-ups that stayed
    switches: int
    follow_ups: int


def score_switches(
    stage: LocalStage,
    pairs: Sequence[Pair],
    *,
    min_confidence: float,
    use_context: bool,
) -> SwitchScore:
    """The conversation's subject is the first message's intent; does the second move it?"""
    alone = predict_all(stage, [b for _, _, b, _ in pairs])
    joined = predict_all(stage, [context_text(a, b) for a, _, b, _ in pairs]) if use_context else []
    moved: list[bool] = []
    kept: list[bool] = []
    for i, (_, first, text, second) in enumerate(pairs):
        context = joined[i] if use_context else None
        switch = should_switch(first, alone[i], context, min_confidence=min_confidence, text=text)
        now = alone[i].label if switch else first
        if second != first:
            moved.append(now == second)
        else:
            kept.append(now == first)
    return SwitchScore(
        moved=sum(moved) / len(moved) if moved else 0.0,
        kept=sum(kept) / len(kept) if kept else 0.0,
        switches=len(moved),
        follow_ups=len(kept),
    )


@dataclass(frozen=True)
class LearningPoint:
    seen: int  # messages streamed so far
    learned: int  # accepted suggestions (phrases) so far
    local_share: float  # of the streamed messages, the share decided locally
    local_precision: float | None  # and how many of those were right
    rest: RoutingScore | None  # the current stage on the messages not streamed yet
    # The stage before any learning on the same messages: what the learning bought.
    rest_without_learning: RoutingScore | None


def simulate_learning(
    train: Callable[[Sequence[Phrase]], LocalStage],
    cases: Sequence[Case],
    *,
    accept_threshold: float,
    min_confidence: float,
    checkpoints: Sequence[int] = (25, 50, 100),
    retrain_every: int = 5,
    seed: int = 0,
) -> list[LearningPoint]:
    """The cascade over a stream, with an oracle as the LLM and every suggestion accepted.

    A message the local stage decides (confidence at the accept threshold) teaches
    nothing; any other is answered by the oracle and becomes a phrase. The stage is
    retrained after every ``retrain_every`` phrases (and at each checkpoint), which
    keeps the bench bounded; in the product each acceptance retrains.
    """
    stream = list(cases)
    random.Random(seed).shuffle(stream)
    phrases: list[Phrase] = []
    stage = first = train(())
    pending = 0
    decided: list[bool] = []
    points: list[LearningPoint] = []
    marks = set(checkpoints)
    for n, (text, gold) in enumerate(stream, start=1):
        p = stage.predict(text)
        truth = gold or NONE_INTENT
        if p.confidence >= accept_threshold:
            decided.append(_label(p) == truth)
        else:
            phrases.append(Phrase(text=text, intent=truth))
            pending += 1
        if pending and (pending >= retrain_every or n in marks):
            stage, pending = train(tuple(phrases)), 0
        if n in marks:
            rest = stream[n:]
            learned_rest, first_rest = (
                score_cases(
                    s, rest, accept_threshold=accept_threshold, min_confidence=min_confidence
                )
                if rest
                else None
                for s in (stage, first)
            )
            points.append(
                LearningPoint(
                    seen=n,
                    learned=len(phrases),
                    local_share=len(decided) / n,
                    local_precision=sum(decided) / len(decided) if decided else None,
                    rest=learned_rest,
                    rest_without_learning=first_rest,
                )
            )
    return points
