"""The learned stage and the model check of the promise detector (human-cases §6, issue 12).

The oracle is always a labelled corpus written by a person — never the detector's own
verdict: ``heldout_llm.json`` (written before the learned stage was tuned, never tuned on),
``heldout_r3.json`` and ``tests/fixtures/cases/heldout_r4.json`` (written before the round-3
and round-4 changes) and ``promise_dev.json`` (written for this project by someone else, only
ever measured). The floors sit slightly below what was measured (see
tests/fixtures/promises/SOURCE.md and tests/fixtures/cases/SOURCE.md).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cases.guardrail import (
    CASE_PROMISE_TEACHING_EN,
    CASE_PROMISE_TEACHING_PT,
    PROMISE_DETECTOR_VERSION,
    RULE_IDS,
    detect_human_promise,
)
from cases.guardrail.normalize import fold
from cases.guardrail.promise import (
    LEARNED_RULE_ID,
    PromiseStage,
    assess_promise,
    detect_rule_promise,
)
from cases.guardrail.promise_check import (
    MAX_CHECKED_CHARS,
    PROMISE_CHECK_PURPOSE,
    PROMISE_CHECK_TOOL,
    PROMISE_CHECK_TOOL_CHOICE,
    PROMISE_CHECK_TOOL_NAME,
    CheckOutcome,
    DecisionStage,
    PromiseCheckRequest,
    check_promise_with_model,
    decide_promise,
)
from cases.guardrail.promise_features import asks_to_accept, message_sentences, sentence_spans
from cases.guardrail.promise_learned import (
    BAND_MARGIN,
    CALIBRATION_PATH,
    Calibration,
    calibrate,
    choose_band_low,
    choose_cue_low,
    corpus_digest,
    learned_model,
    load_corpus,
    message_cue,
    out_of_fold_raw,
    train_model,
)
from cases.guardrail.promise_ngrams import message_features

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "promises"
CASES_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cases"

# Measured (bench/cases.py, detector ptbr-promise-6+lr-620e07850e72), local P / R: held-out
# 1.000 / 0.953, dev 0.982 / 0.900, round-3 0.980 / 0.980, round-4 0.962 / 1.000, round-4b
# 0.975 / 0.975, round-6 and 6b 1.000 / 1.000. Model check on [0.0509, 0.9) and on
# [0.0004, 0.0509) with the commitment cue: share 0.113 / 0.183 / 0.080 / 0.119 / 0.150 /
# 0.139 / 0.233 (these sets are half near misses: real traffic costs less); with an oracle
# answering the check, R 1.000 on all. Round 6b is left out of the share ceiling (0.233).
HELDOUT_PRECISION_FLOOR = 0.97
HELDOUT_RECALL_FLOOR = 0.90
R4_PRECISION_FLOOR = 0.94
R4_RECALL_FLOOR = 0.95
DEV_PRECISION_FLOOR = 0.96
DEV_RECALL_FLOOR = 0.85
MODEL_CHECK_SHARE_CEILING = 0.22
ORACLE_HELDOUT_RECALL_FLOOR = 1.0
ORACLE_DEV_RECALL_FLOOR = 1.0

Labelled = list[tuple[str, bool]]


def load_heldout() -> Labelled:
    data = json.loads((FIXTURES / "heldout_llm.json").read_text(encoding="utf-8"))
    return [(item["text"], bool(item["promise"])) for item in data["items"]]


def load_dev() -> Labelled:
    data = json.loads((FIXTURES / "promise_dev.json").read_text(encoding="utf-8"))
    return [(text, bool(label)) for text, label in data["items"]]


def load_heldout_r3() -> Labelled:
    data = json.loads((FIXTURES / "heldout_r3.json").read_text(encoding="utf-8"))
    return [(item["text"], bool(item["promise"])) for item in data["items"]]


def load_round_4(name: str) -> Labelled:
    data = json.loads((CASES_FIXTURES / name).read_text(encoding="utf-8"))
    return [(item["text"], bool(item["promise"])) for item in data["items"]]


HELDOUT = load_heldout()
DEV = load_dev()
HELDOUT_R3 = load_heldout_r3()
HELDOUT_R4 = load_round_4("heldout_r4.json")
HELDOUT_R5 = load_round_4("heldout_r5.json")
# Round 6: written before that round's changes (tests/fixtures/cases/SOURCE.md).
HELDOUT_R6 = load_round_4("heldout_r6.json")
HELDOUT_R6B = load_round_4("heldout_r6b.json")
# Round 7: written before that round's changes; measured by bench/cases.py, never trained on.
HELDOUT_R7 = load_round_4("heldout_r7.json")
# Round 8: written before that round's changes; measured by bench/cases.py, never trained on.
HELDOUT_R8 = load_round_4("heldout_r8.json")
# Round 9: written before that round's changes; measured by bench/cases.py, never trained on.
HELDOUT_R9 = load_round_4("heldout_r9.json")
# Round 10: written before that round's changes; measured by bench/cases.py, never trained on.
HELDOUT_R10 = load_round_4("heldout_r10.json")
# Round 11: r11 written blind before that round's changes; r11b written blind as a training
# batch that was judged (nested cross-validation) and kept as a measurement set instead.
HELDOUT_R11 = load_round_4("heldout_r11.json")
HELDOUT_R11B = load_round_4("heldout_r11b.json")
# Round 12: written blind before it was read; read once on detectors 8 and 9.
HELDOUT_R12 = load_round_4("heldout_r12.json")
HELDOUT_R13 = load_round_4("heldout_r13.json")
# Round 14: written blind, read once on the shipped detector (10), never tuned on.
HELDOUT_R14 = load_round_4("heldout_r14.json")
# Session 13: written blind (40 unusual businesses), read once on the shipped detector (10).
HELDOUT_R15 = load_round_4("heldout_r15.json")
# Session 13, from the dev set's whole label taxonomy: r17 and r18 were each read once on
# detector 10 and then used to fix the one leak each had (rules 11, features f10); r19 was
# read once, on detector 11.
HELDOUT_R17 = load_round_4("heldout_r17.json")
HELDOUT_R18 = load_round_4("heldout_r18.json")
HELDOUT_R19 = load_round_4("heldout_r19.json")
# Written blind in session 13, reserved unread, read once in session 14 on detector 12 (one
# promise reached no case with the check on: the fix it led to is tuned on it).
HELDOUT_R20 = load_round_4("heldout_r20.json")
# Session 14: written blind, read once on detector 13 (two promises reached no case with the
# check on; the fix they led to is tuned on it).
HELDOUT_R21 = load_round_4("heldout_r21.json")
# Session 14: written blind in LLM style, read once on detector 15, never tuned on.
HELDOUT_R22 = load_round_4("heldout_r22.json")
# Written blind in session 14, reserved unread, read once in round 15 on detector 15 (two
# promises reached no case with the check on: the fix they led to is tuned on it).
HELDOUT_R23 = load_round_4("heldout_r23.json")
# Round 15: written blind, read once on the first version of detector 16 (three promises
# reached no case with the check on; the business's own trucks, "no nosso caminhão", then
# joined the cue: tuned on it). r24, written with it, was read once on detector 18 (two
# promises with no case with the check on; detector 19 is tuned on it).
HELDOUT_R24 = load_round_4("heldout_r24.json")
HELDOUT_R25 = load_round_4("heldout_r25.json")
# Round 15, written blind with the policy only (no list of hard kinds): r26 was read once, on
# detector 19, and never tuned on; r27 was reserved unread until round 16, which read it once
# on detector 19 (local 0.978 / 0.88, share 0.14; one promise with no case with the check on).
HELDOUT_R26 = load_round_4("heldout_r26.json")
HELDOUT_R27 = load_round_4("heldout_r27.json")
# Round 16, written blind with the policy only, read once at the end of round 16 on detector
# 20 (local 0.96 / 0.96, share 0.18, no promise with no case with the check on); rules 21 came
# from its one local miss by a trade.
HELDOUT_R29 = load_round_4("heldout_r29.json")
# Round 16, written blind with the policy only; reserved unread until round 17, which read it
# once on detector 21 (local 1.0 / 0.86, share 0.12, one promise with no case with the check
# on: a moving truck "chega aí por volta das 8h"); rules 22 came from its misses.
HELDOUT_R30 = load_round_4("heldout_r30.json")
# Round 17, written blind with the policy only, read once on detector 24 (local 0.959 / 0.94,
# share 0.19, one promise with no case with the check on); detector 25 came from its misses.
HELDOUT_R31 = load_round_4("heldout_r31.json")
# Round 17, written blind with the policy only, read once in round 17 on detector 22 (local
# 0.941 / 0.96, share 0.14, no promise with no case with the check on); detector 23 came from
# its misses.
HELDOUT_R32 = load_round_4("heldout_r32.json")
# Round 17, written blind with the policy only, read once at the start of round 18 on detector
# 25 (local 1.0 / 0.88, share 0.21, three promises with no case with the check on); detector
# 26 came from its misses.
HELDOUT_R33 = load_round_4("heldout_r33.json")
# Round 17, written blind with the policy only, read once at the end of round 17 on the shipped
# detector 25 and never tuned on (local 0.979 / 0.94, share 0.15, no promise with no case with
# the check on).
HELDOUT_R34 = load_round_4("heldout_r34.json")
# Round 18, written blind with the policy only, read once at the end of round 18 on detector 27
# (local 0.917 / 0.88, share 0.18, no promise with no case with the check on); detector 28 took
# its two outside-party false positives to the check.
HELDOUT_R35 = load_round_4("heldout_r35.json")
# Round 18, written blind for the physical world (people and vehicles of the business at a time
# ahead) and split by a hash: rules 27 came from the tune half; the other was only measured.
FIELD_R18 = load_round_4("field_r18_tune.json") + load_round_4("field_r18_heldout.json")
# Round 18, written blind with the policy only; read once at the start of round 19 on detector
# 36 (local 0.978 / 0.90, share 0.21, one promise with no case with the check on); detector 37
# came from it.
HELDOUT_R36 = load_round_4("heldout_r36.json")
# Round 18, written blind with the policy only, read once at its end on detector 29 (local
# 0.92 / 0.92, share 0.22, no promise with no case with the check on); detector 30 took its
# airline false positive to the check.
HELDOUT_R37 = load_round_4("heldout_r37.json")
# Round 18, written blind with the policy only, read once at its end on detector 32 (local
# 0.911 / 0.82, share 0.27, no promise with no case with the check on); 33 took the policy's
# own "ligue para ..., que eles vão te ajudar" to the check.
HELDOUT_R38 = load_round_4("heldout_r38.json")
# Round 18, written blind with the policy only, read once at its very end on detector 34
# (local 0.953 / 0.82, share 0.26, one promise with no case with the check on: the business's
# pet taxi at a clock time only); detector 35 sends such visits to the check.
HELDOUT_R39 = load_round_4("heldout_r39.json")
# Round 19, written blind with the policy only (one business per message), read once on
# detector 41, never tuned on before (local 0.98 / 0.96, share 0.18, no promise with no case
# with the check on).
HELDOUT_R40 = load_round_4("heldout_r40.json")
# Round 19, written blind with the policy only, mainstream businesses; read once on detector
# 45, the one the round ships, never tuned on (local 0.98 / 0.98, share 0.18, no promise with
# no case with the check on).
HELDOUT_R41 = load_round_4("heldout_r41.json")
# Round 20, written blind with the policy only (longer LLM-style replies, the promise in the
# middle or at the end of the message).
HELDOUT_R42 = load_round_4("heldout_r42.json")
# Round 21, written blind with the policy only (short, medium and long replies, unusual
# businesses); read once on detector 46 (local 0.94 / 0.94, share 0.21, no promise with no
# case with the check on); detector 47 came from it.
HELDOUT_R43 = load_round_4("heldout_r43.json")
# Round 21, written blind with the policy only (mainstream high-volume businesses); read once
# on detector 47 (local 0.907 / 0.98, a rule false positive, share 0.17, no promise with no
# case with the check on); detector 48 came from it.
HELDOUT_R44 = load_round_4("heldout_r44.json")
# Round 22, written blind with the policy only (B2B and mid-size businesses in an LLM's tone);
# read once on detector 48 (local 0.962 / 1.0, share 0.17, no promise with no case with the
# check on or off).
HELDOUT_R45 = load_round_4("heldout_r45.json")
# Round 22, written blind with the policy only (small informal businesses, warm WhatsApp tone);
# read once on detector 49 (local 0.904 / 0.94, share 0.25, three promises out with the check
# off, none with it on); detector 50 came from it.
HELDOUT_R46 = load_round_4("heldout_r46.json")
# Round 23, written blind with the policy only (health, travel, utility and public-facing
# services); read once on detector 51 (local 0.98 / 0.98, share 0.21, one promise out with no
# case with the check on: a bus company's own bus); detector 52 came from it.
HELDOUT_R47 = load_round_4("heldout_r47.json")
# Round 23, written blind with the policy only (retail, financial, insurance, real-estate,
# automotive, furniture, food and home services); read once on detector 52 (local 1.0 / 0.98,
# share 0.15, one promise out with the check off, none with it on); never tuned on.
HELDOUT_R48 = load_round_4("heldout_r48.json")
# Round 24, written blind with the policy only (education, events, beauty, pet, telecom,
# courier, small-business software and renovation); read once on detector 52 (local 0.962 /
# 1.0, share 0.14, no promise out with no case); never tuned on.
HELDOUT_R49 = load_round_4("heldout_r49.json")
# r50: round 25's blind set from the policy only (a clinic, a fintech, an insurance broker, a
# car repair shop, a real-estate agency, a travel agency, a restaurant and a utility); read
# once on detector 52 (local 0.98 / 0.98, share 0.14, one promise out with the check off,
# none with it on); never tuned on.
HELDOUT_R50 = load_round_4("heldout_r50.json")
# r51: round 26's blind set from the policy only (a dental clinic chain, pest control, a
# laundry, a moving company, a funeral plan, a coworking space, an electronics marketplace
# seller and a veterinary hospital); read once on detector 52 (local 0.98 / 0.98, share 0.07,
# one promise out with the check off, none with it on); never tuned on.
HELDOUT_R51 = load_round_4("heldout_r51.json")
# r52: round 26's last blind set from the policy only (home care, a parking operator, alarm
# monitoring, a bridal shop, a car-audio installer, a school bus, a hearing-aid clinic and scrap
# collection), reserved unread for round 27; read once on detector 53 (local 1.0 / 0.94, share
# 0.12, three promises out with the check off, one with it on: a security agent "a caminho");
# detector 54 came from it (seen).
HELDOUT_R52 = load_round_4("heldout_r52.json")
# r53: round 27's blind set from the policy only (sofa cleaning, dumpster rental, a craft
# brewery, an aquarium store, a drywall contractor, drone filming, a photography studio and a
# dog walker); read once on detector 54 (local 0.98 / 0.98, share 0.10, one promise out with
# the check off, none with it on); never tuned on.
HELDOUT_R53 = load_round_4("heldout_r53.json")
# r54: round 27's last blind set from the policy only (solar water heaters, a swimming and judo
# club, a print shop, a tyre shop, a cake maker, private ambulances, exchange travel and condo
# laundry machines), reserved unread for round 28; read once on detector 54 (local 0.96 / 0.98,
# share 0.11, one promise out with the check off, none with it on); never tuned on.
HELDOUT_R54 = load_round_4("heldout_r54.json")
# r55: round 28's blind set from the policy only (pharmacy delivery, a vet lab, fibre internet,
# a driving school, rentals, furniture assembly, a dental clinic and an event venue); read once
# on detector 55 (local 0.979 / 0.92, share 0.12, four promises out with the check off, one
# with it on: the business's truck "a caminho"); detector 56 came from it (seen).
HELDOUT_R55 = load_round_4("heldout_r55.json")
# r56: round 28's last blind set from the policy only (a locksmith, a home-collection lab,
# coworking, a car wash, physiotherapy, gas and water, pest control, wedding photography),
# reserved unread for round 29; read once on detector 56 (local 0.979 / 0.94, share 0.12, three
# promises out with the check off, one with it on: the business's van "tá indo pro seu
# endereço"); detector 57 came from it (seen).
HELDOUT_R56 = load_round_4("heldout_r56.json")
# r57: round 29's last blind set from the policy only (hearing aids, a marina, bike repair,
# translation, solar panel cleaning, piano tuning, pet cremation, tailoring), reserved unread
# for round 30; read once on detector 57 (local 0.957 / 0.90, share 0.14, five promises out
# with the check off, none with it on); detector 58 came from it (seen).
HELDOUT_R57 = load_round_4("heldout_r57.json")
# r58: round 30's last blind set from the policy only (a piano workshop, a glass shop,
# self-storage, a tailor, elevator maintenance, organic baskets, a print shop, an accounting
# office), reserved unread for round 31; read once on detector 59 (local 0.953 / 0.82, share
# 0.18, nine promises out with the check off, three with it on); detector 60 came from it (seen).
HELDOUT_R58 = load_round_4("heldout_r58.json")
# r59: written blind in round 31 from the policy only (a funeral home, school vans, a dog
# walker, a hardware store, a dermatology clinic, beach rentals, a cake shop, a motorcycle
# dealer); read once on detector 60 (local 0.98 / 0.98, share 0.20, one promise out with the
# check off, none with it on). Never tuned on: only its aggregates were read.
HELDOUT_R59 = load_round_4("heldout_r59.json")
# Round 26's tuning probes (read freely; detector 53 came from them): the dev set's kinds of
# promise and of near miss, from the policy only.
PROBE_R26A = load_round_4("probe_r26a.json")
PROBE_R26B = load_round_4("probe_r26b.json")
TRAINING = [(row.text, row.promise) for row in load_corpus()]
EVERY_LABELLED = (
    HELDOUT + DEV + HELDOUT_R3 + HELDOUT_R4 + HELDOUT_R5 + HELDOUT_R6 + HELDOUT_R6B + TRAINING
)


def precision_recall(
    items: Labelled, verdict: Callable[[str, bool], bool]
) -> tuple[float, float, list[str]]:
    true_pos = false_pos = false_neg = 0
    mistakes = []
    for text, label in items:
        found = verdict(text, label)
        true_pos += found and label
        false_pos += found and not label
        false_neg += label and not found
        if found != label:
            mistakes.append(f"{'false positive' if found else 'false negative'}: {text}")
    return true_pos / (true_pos + false_pos), true_pos / (true_pos + false_neg), mistakes


def local(text: str, _label: bool) -> bool:
    return detect_human_promise(text) is not None


def with_oracle_check(text: str, label: bool) -> bool:
    """The whole detector, with the labelled answer standing in for the model."""

    def oracle(_request: PromiseCheckRequest) -> dict[str, object]:
        return {"promise": label, "who_acts": "team_or_person" if label else "nobody"}

    return decide_promise(text, oracle).promise


# --- the measurement sets ---------------------------------------------------------------------


def test_measurement_sets_share_no_message_with_the_training_corpus() -> None:
    training = {fold(text).strip() for text, _ in TRAINING}
    assert not {fold(text).strip() for text, _ in HELDOUT} & training
    assert not {fold(text).strip() for text, _ in DEV} & training
    assert not {fold(text).strip() for text, _ in HELDOUT_R3} & training
    assert not {fold(text).strip() for text, _ in HELDOUT_R4} & training
    assert not {fold(text).strip() for text, _ in HELDOUT_R5} & training
    assert not {fold(text).strip() for text, _ in HELDOUT_R6 + HELDOUT_R6B} & training
    assert not {fold(text).strip() for text, _ in HELDOUT_R7} & training
    assert len(HELDOUT_R7) == 68 and sum(label for _, label in HELDOUT_R7) == 34
    assert not {fold(text).strip() for text, _ in HELDOUT_R8} & training
    assert len(HELDOUT_R8) == 72 and sum(label for _, label in HELDOUT_R8) == 36
    assert not {fold(text).strip() for text, _ in HELDOUT_R9} & training
    assert len(HELDOUT_R9) == 80 and sum(label for _, label in HELDOUT_R9) == 40
    assert not {fold(text).strip() for text, _ in HELDOUT_R10} & training
    assert len(HELDOUT_R10) == 80 and sum(label for _, label in HELDOUT_R10) == 40
    assert not {fold(text).strip() for text, _ in HELDOUT_R11 + HELDOUT_R11B} & training
    assert len(HELDOUT_R11) == 80 and sum(label for _, label in HELDOUT_R11) == 40
    assert len(HELDOUT_R11B) == 240 and sum(label for _, label in HELDOUT_R11B) == 120
    assert not {fold(text).strip() for text, _ in HELDOUT_R12} & training
    assert len(HELDOUT_R12) == 80 and sum(label for _, label in HELDOUT_R12) == 40
    assert not {fold(text).strip() for text, _ in HELDOUT_R13} & training
    assert len(HELDOUT_R13) == 80 and sum(label for _, label in HELDOUT_R13) == 40
    assert not {fold(text).strip() for text, _ in HELDOUT_R14} & training
    assert len(HELDOUT_R14) == 80 and sum(label for _, label in HELDOUT_R14) == 40
    assert not {fold(text).strip() for text, _ in HELDOUT_R15} & training
    assert len(HELDOUT_R15) == 80 and sum(label for _, label in HELDOUT_R15) == 40
    later_sets = [HELDOUT_R17, HELDOUT_R18, HELDOUT_R19, HELDOUT_R20, HELDOUT_R21]
    later_sets += [HELDOUT_R22, HELDOUT_R23, HELDOUT_R24, HELDOUT_R25, HELDOUT_R26, HELDOUT_R27]
    later_sets += [HELDOUT_R29, HELDOUT_R30, HELDOUT_R31, HELDOUT_R32, HELDOUT_R33, HELDOUT_R34]
    later_sets += [HELDOUT_R35, HELDOUT_R36, HELDOUT_R37, HELDOUT_R38, HELDOUT_R39, HELDOUT_R40]
    later_sets += [HELDOUT_R41, HELDOUT_R42, HELDOUT_R43, HELDOUT_R44, HELDOUT_R45, HELDOUT_R46]
    later_sets += [HELDOUT_R47, HELDOUT_R48, HELDOUT_R49, HELDOUT_R50, HELDOUT_R51]
    later_sets += [HELDOUT_R52, HELDOUT_R53, HELDOUT_R54, HELDOUT_R55, HELDOUT_R56, HELDOUT_R57]
    later_sets += [HELDOUT_R58, HELDOUT_R59]
    assert not {fold(text).strip() for text, _ in FIELD_R18} & training
    assert len(FIELD_R18) == 240 and sum(label for _, label in FIELD_R18) == 120
    for later in later_sets:
        assert not {fold(text).strip() for text, _ in later} & training
        assert len(later) == 100 and sum(label for _, label in later) == 50
    assert len(HELDOUT_R6) == 72 and sum(label for _, label in HELDOUT_R6) == 36
    assert len(HELDOUT_R6B) == 60 and sum(label for _, label in HELDOUT_R6B) == 30
    assert len(HELDOUT_R3) == 100 and sum(label for _, label in HELDOUT_R3) == 50
    assert len(HELDOUT_R4) == 101 and sum(label for _, label in HELDOUT_R4) == 50
    assert len(HELDOUT_R5) == 80 and sum(label for _, label in HELDOUT_R5) == 40
    assert len(HELDOUT) >= 150 and len(DEV) == 120
    assert sum(label for _, label in HELDOUT) >= 70
    assert sum(not label for _, label in HELDOUT) >= 70


def test_training_corpus_is_large_balanced_and_mostly_written_in_llm_style() -> None:
    rows = [json.loads(line) for line in CALIBRATION_PATH.with_name("promise_train.jsonl").open()]
    llm_style = [row for row in rows if row["source"] == "llm-style"]
    assert len(llm_style) >= 400
    assert 0.4 <= sum(row["promise"] for row in rows) / len(rows) <= 0.6
    assert len({row["text"] for row in rows}) == len(rows)


def test_local_stages_keep_precision_and_recall_on_the_heldout_set() -> None:
    precision, recall, mistakes = precision_recall(HELDOUT, local)
    assert precision >= HELDOUT_PRECISION_FLOOR, mistakes
    assert recall >= HELDOUT_RECALL_FLOOR, mistakes


def test_local_stages_keep_precision_and_recall_on_the_round_3_heldout_set() -> None:
    precision, recall, mistakes = precision_recall(HELDOUT_R3, local)
    assert precision >= HELDOUT_PRECISION_FLOOR, mistakes
    assert recall >= HELDOUT_RECALL_FLOOR, mistakes


@pytest.mark.parametrize(
    "items",
    [HELDOUT_R4, HELDOUT_R5, HELDOUT_R6, HELDOUT_R6B],
    ids=["heldout_r4", "heldout_r5", "heldout_r6", "heldout_r6b"],
)
def test_local_stages_keep_precision_and_recall_on_the_round_4_heldout_sets(
    items: Labelled,
) -> None:
    precision, recall, mistakes = precision_recall(items, local)
    assert precision >= R4_PRECISION_FLOOR, mistakes
    assert recall >= R4_RECALL_FLOOR, mistakes


def test_local_stages_keep_precision_and_recall_on_the_dev_set() -> None:
    precision, recall, mistakes = precision_recall(DEV, local)
    assert precision >= DEV_PRECISION_FLOOR, mistakes
    assert recall >= DEV_RECALL_FLOOR, mistakes


def test_learned_stage_adds_recall_the_rules_alone_do_not_have() -> None:
    _, rules_recall, _ = precision_recall(HELDOUT, lambda t, _: detect_rule_promise(t) is not None)
    _, local_recall, _ = precision_recall(HELDOUT, local)
    assert local_recall >= rules_recall + 0.3


@pytest.mark.parametrize(
    ("name", "items"),
    [
        ("heldout", HELDOUT),
        ("dev", DEV),
        ("heldout_r3", HELDOUT_R3),
        ("heldout_r4", HELDOUT_R4),
        ("heldout_r5", HELDOUT_R5),
        ("heldout_r6", HELDOUT_R6),
    ],
)
def test_only_a_bounded_share_of_messages_reaches_the_model_check(
    name: str, items: Labelled
) -> None:
    share = sum(assess_promise(text).uncertain for text, _ in items) / len(items)
    assert share <= MODEL_CHECK_SHARE_CEILING, name


@pytest.mark.parametrize(
    ("items", "floor"),
    [
        (HELDOUT, ORACLE_HELDOUT_RECALL_FLOOR),
        (DEV, ORACLE_DEV_RECALL_FLOOR),
        (HELDOUT_R3, ORACLE_HELDOUT_RECALL_FLOOR),
        (HELDOUT_R4, ORACLE_HELDOUT_RECALL_FLOOR),
        (HELDOUT_R5, ORACLE_HELDOUT_RECALL_FLOOR),
        (HELDOUT_R6, ORACLE_HELDOUT_RECALL_FLOOR),
        (HELDOUT_R6B, ORACLE_HELDOUT_RECALL_FLOOR),
    ],
)
def test_a_model_check_on_the_uncertain_band_lifts_recall(items: Labelled, floor: float) -> None:
    precision, recall, mistakes = precision_recall(items, with_oracle_check)
    assert recall >= floor, mistakes
    assert precision >= 0.96, mistakes


@pytest.mark.parametrize(
    ("items", "share_ceiling"),
    [
        (HELDOUT_R11, MODEL_CHECK_SHARE_CEILING),
        (HELDOUT_R11B, MODEL_CHECK_SHARE_CEILING),
        (HELDOUT_R12, MODEL_CHECK_SHARE_CEILING),
        # r13's share was 0.237 on detector 9 and 0.225 on f9 when first read: its ceiling
        # catches a regression there, it is not the product's target (0.15).
        (HELDOUT_R13, 0.24),
        (HELDOUT_R14, MODEL_CHECK_SHARE_CEILING),
        (HELDOUT_R15, MODEL_CHECK_SHARE_CEILING),
        (HELDOUT_R17, MODEL_CHECK_SHARE_CEILING),
        (HELDOUT_R18, MODEL_CHECK_SHARE_CEILING),
        (HELDOUT_R19, MODEL_CHECK_SHARE_CEILING),
        # r20's share was 0.16 when first read and 0.18 with the fix its one leak led to.
        (HELDOUT_R20, 0.19),
        # r21 led to detector 14; r22 was read once, on detector 15.
        (HELDOUT_R21, 0.18),
        (HELDOUT_R22, MODEL_CHECK_SHARE_CEILING),
        # r23 (0.14 first read) led to detector 16; 0.17 on it, 0.20 with features f15 (three
        # LLM-style near misses that open on "Entendo", no gerund any more, reach the band);
        # 0.21 with f19 (the model retrained: "O Detran é que marca a data" enters the band).
        (HELDOUT_R23, 0.21),
        # r24 (0.22 first read, on detector 18) led to detector 19.
        (HELDOUT_R24, 0.25),
        # r26: read once on detector 19 (local 1.0 / 0.98, share 0.17).
        (HELDOUT_R26, MODEL_CHECK_SHARE_CEILING),
        # r27: read once on detector 19 (0.14, one promise with no case), then rules 20.
        (HELDOUT_R27, MODEL_CHECK_SHARE_CEILING),
        (HELDOUT_R29, MODEL_CHECK_SHARE_CEILING),
        (HELDOUT_R30, MODEL_CHECK_SHARE_CEILING),
        (HELDOUT_R32, MODEL_CHECK_SHARE_CEILING),
        # r31 (0.19 first read, on detector 24) led to detector 25 (0.17).
        (HELDOUT_R31, 0.2),
        (HELDOUT_R34, MODEL_CHECK_SHARE_CEILING),
        # r35: read once on detector 27 (0.18); 0.19 on 28, 0.17 on 29.
        (HELDOUT_R35, 0.19),
        # r37: read once on detector 29 (0.22); 0.24 on 32 (its false positives go to the check).
        (HELDOUT_R37, 0.25),
        # r38: read once on detector 32 (0.27), 0.24 on 34: the hardest near misses so far.
        (HELDOUT_R38, 0.29),
        # r39: read once on detector 34 (0.26), 0.28 on 36.
        (HELDOUT_R39, 0.28),
        # r36: read once on detector 36 (0.21, one promise with no case); 37 came from it.
        (HELDOUT_R36, 0.21),
        # r40: read once on detector 41 (0.18).
        (HELDOUT_R40, 0.18),
        # r41: read once on detector 45 (0.18).
        (HELDOUT_R41, 0.18),
        # r42: read once on detector 45 (0.26), 0.27 on 46 (its false positives go to the check).
        (HELDOUT_R42, 0.27),
        # r43: read once on detector 46 (0.21), 0.20 on 47.
        (HELDOUT_R43, 0.21),
        # r44: read once on detector 47 (0.17), 0.20 on 48 (its false positives go to the check).
        (HELDOUT_R44, 0.2),
        # r45: read once on detector 48 (0.17), 0.16 on 49 (a habit's "quando" clause goes
        # to the check, automatic and outside-only sentences leave it).
        (HELDOUT_R45, 0.17),
        # r46: read once on detector 49 (0.25), 0.25 on 50.
        (HELDOUT_R46, 0.25),
        # r47: read once on detector 51 (0.21, one promise with no case); 52 came from it.
        (HELDOUT_R47, 0.21),
        # r48: read once on detector 52 (0.15); never tuned on.
        (HELDOUT_R48, 0.16),
        # r49: read once on detector 52 (0.14); never tuned on.
        (HELDOUT_R49, 0.15),
        # r50: read once on detector 52 (0.14); never tuned on.
        (HELDOUT_R50, 0.15),
        # r51: read once on detector 52 (0.07); never tuned on.
        (HELDOUT_R51, 0.08),
        # r52: read once on detector 53 (0.12), 0.11 on 54 (seen).
        (HELDOUT_R52, 0.13),
        # r53: read once on detector 54 (0.10); never tuned on.
        (HELDOUT_R53, 0.11),
        # r54: read once on detector 54 (0.11); never tuned on.
        (HELDOUT_R54, 0.12),
        # r55: read once on detector 55 (0.12, one promise with no case); 56 came from it.
        (HELDOUT_R55, 0.13),
        # r56: read once on detector 56 (0.12, one promise with no case); 57 came from it.
        (HELDOUT_R56, 0.13),
        # r57: read once on detector 57 (0.14, no promise out with the check on); 58: 0.08.
        (HELDOUT_R57, 0.10),
        # r59: read once on detector 60 (0.20); never tuned on.
        (HELDOUT_R59, 0.21),
        # Round 26's probes: 0.092 and 0.075 on detector 52, 0.10 and 0.075 on 53 (seen).
        (PROBE_R26A, 0.11),
        (PROBE_R26B, 0.09),
    ],
    ids=[
        *("heldout_r11", "heldout_r11b", "heldout_r12", "heldout_r13", "heldout_r14"),
        *("heldout_r15", "heldout_r17", "heldout_r18", "heldout_r19", "heldout_r20"),
        *("heldout_r21", "heldout_r22", "heldout_r23", "heldout_r24", "heldout_r26"),
        *("heldout_r27", "heldout_r29", "heldout_r30", "heldout_r32", "heldout_r31"),
        *("heldout_r34", "heldout_r35", "heldout_r37", "heldout_r38", "heldout_r39"),
        *("heldout_r36", "heldout_r40", "heldout_r41", "heldout_r42", "heldout_r43"),
        *("heldout_r44", "heldout_r45", "heldout_r46", "heldout_r47"),
        *("heldout_r48", "heldout_r49", "heldout_r50", "heldout_r51", "heldout_r52"),
        *("heldout_r53", "heldout_r54", "heldout_r55", "heldout_r56", "heldout_r57"),
        *("heldout_r59", "probe_r26a", "probe_r26b"),
    ],
)
def test_no_promise_of_the_round_11_and_later_sets_escapes_both_the_local_stages_and_the_check(
    items: Labelled, share_ceiling: float
) -> None:
    # Every labelled promise is found locally or sent to the check (an oracle here); the
    # near misses' precision is the detector's weak side on these sets (0.93 locally).
    precision, recall, mistakes = precision_recall(items, with_oracle_check)
    assert recall == 1.0, mistakes
    assert precision >= 0.94, mistakes
    share = sum(assess_promise(text).uncertain for text, _ in items) / len(items)
    assert share <= share_ceiling


# Sets that let one promise out with no case even with the check on; a second would be a
# regression.
# r25: its writer labels every delivery on the business's own vehicle a promise; the cue reads
# "no nosso caminhão" and "na próxima van" but not a truck named by its kind with no "our" ("o
# pipa de 10 mil litros já saiu da base"). Precision with a perfect check was 0.961 before
# features f14 and 0.942 with them (an instruction, "o senhor deve ligar para 0800 ... que
# está no chaveiro", lost the negation scope Portuguese "no" had opened by mistake); f14 was
# kept for the corpus (nested CV misses 196 -> 171, share 0.175 -> 0.167).
# r33: its first reading (detector 25) let three out; rules 26 caught two. The third, a porter
# named only by "Seu" ("o Seu Dito leva as malas até o carro na hora da saída", 0.02), has no
# day ahead and no word of the business.
# r58: its first reading (detector 59) let three out; detector 60 caught two. The third closes
# a deal and then states the remedy in the present with no time ("Então tá fechado: a gente
# reimprime as 200 etiquetas ... e você não paga nada por isso", 0.005): "a gente troca" with no
# day is as often the business's policy ("se vier com defeito, a gente troca"). Share 0.18 on
# 59, 0.16 on 60.
@pytest.mark.parametrize(
    ("items", "share_ceiling"),
    [(HELDOUT_R25, 0.23), (HELDOUT_R33, 0.2), (HELDOUT_R58, 0.17)],
    ids=["heldout_r25", "heldout_r33", "heldout_r58"],
)
def test_these_sets_let_out_one_promise_at_most_with_the_check_on(
    items: Labelled, share_ceiling: float
) -> None:
    precision, recall, mistakes = precision_recall(items, with_oracle_check)
    assert recall >= 0.98, mistakes
    assert precision >= 0.94, mistakes
    share = sum(assess_promise(text).uncertain for text, _ in items) / len(items)
    assert share <= share_ceiling


# --- what the learned stage catches, by example (not in any corpus) ---------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Ele vai providenciar o estorno e te manda o comprovante amanhã.",
        "A Cláudia, do financeiro, vai conferir os pagamentos e te dá um retorno.",
        "Vou pedir para reativarem o seu plano ainda hoje.",
        "Deixei anotado para o eletricista trocar o disjuntor na visita.",
        "Our team is going through the contract now and will send you the changes on Monday.",
    ],
)
def test_promises_the_rules_miss_are_found_by_the_learned_stage(text: str) -> None:
    assert detect_rule_promise(text) is None  # otherwise this would test the rules
    match = detect_human_promise(text)
    assert match is not None and match.rule_id == LEARNED_RULE_ID
    assert assess_promise(text).stage is PromiseStage.LEARNED


@pytest.mark.parametrize(
    "text",
    [
        "O técnico trocou o disjuntor ontem e a energia voltou.",
        "Você pode pedir o estorno pelo app, em Pagamentos.",
        "Quer que eu peça para o financeiro conferir os pagamentos?",
        "Our office is closed on Monday.",
    ],
)
def test_near_misses_stay_below_the_threshold(text: str) -> None:
    assert detect_human_promise(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Pode deixar que o financeiro estorna a diferença.",
        "Pode ficar tranquila, a Dra. Helena liga pra você antes da consulta.",
        "O fisioterapeuta ajusta o seu plano e manda por aqui.",
    ],
)
def test_a_named_actor_acting_for_the_customer_reaches_the_model_check(text: str) -> None:
    # Written for this test (in no corpus): present-as-future with a person as the subject,
    # which no rule reads. Whatever the learned score, the commitment cue alone keeps it
    # within the check's reach: found locally, or sent to the check.
    assert detect_rule_promise(text) is None
    assert message_cue(text)
    scored = learned_model().score(text)
    assert scored.probability >= learned_model().calibration.cue_low
    assessment = assess_promise(text)
    assert assessment.promise or assessment.uncertain
    assert decide_promise(text, raises(TimeoutError())).promise  # fails closed


@pytest.mark.parametrize(
    "text",
    [
        "Ninguém da equipe vai te ligar, está tudo resolvido.",  # negated
        "Quer que a equipe te ligue?",  # a question: the customer chooses
        "O suporte funciona de segunda a sexta, das 8h às 18h.",  # a habitual fact
        "Os entregadores costumam passar entre 8h e 18h.",  # a habitual fact
        "Seu boleto é gerado automaticamente no dia 5.",  # no actor
    ],
)
def test_negated_asked_habitual_or_actorless_text_carries_no_actor_cue(text: str) -> None:
    assert not learned_model().score(text).actor_cue


# --- the commitment cue (clause-level: who acts, when, how sure) -------------------------------
# Written for these tests (in no corpus), labelled by hand: the cue must say "someone other than
# the AI acts for the customer after this message" exactly where a person would.


@pytest.mark.parametrize(
    "text",
    [
        "Amanhã o Rodrigo, do estoque, separa a sua peça.",  # present as future, apposition
        "Vão te ligar na sexta para marcar a entrega.",  # no subject: plural verb
        "Devem te chamar por aqui ainda hoje.",
        "Pode deixar que a recepção confirma o seu horário.",  # an assurance, not an offer
        "Assim que o fornecedor responder, te aviso.",  # a deferred answer
        "O eletricista passa aí amanhã cedo, tá?",  # a closing tag does not make a question
        "Expect a call from our billing team tomorrow.",
        "The nurse calls you on Monday with the results.",
        "Não consigo liberar daqui, mas o gerente vai te ligar hoje.",  # negation stays local
        "A equipe, que vai te responder amanhã, já está com o seu pedido.",  # relative clause
    ],
)
def test_commitment_cue_reads_someone_else_acting_for_the_customer(text: str) -> None:
    assert message_cue(text), text


@pytest.mark.parametrize(
    "text",
    [
        "O eletricista trocou o disjuntor ontem.",  # past fact
        "O Rodrigo, do estoque, separou a sua peça hoje cedo.",  # past, after an apposition
        "A recepção funciona de segunda a sexta.",  # habitual
        "A equipe de vendas está em reunião agora.",  # a state, not an action
        "Ligue para a central que eles vão te ajudar.",  # an instruction governs the sentence
        "Se você ligar amanhã, eles te ajudam.",  # a condition governs the sentence
        "Quer que o gerente te ligue amanhã?",  # a question: the customer chooses
        "Você pode falar com o financeiro pelo e-mail.",  # what the customer can do
        "Ninguém da equipe vai te ligar.",  # negated
        "Vou verificar aqui no sistema agora.",  # the AI itself
        "Assim que você enviar o comprovante, te confirmo.",  # the customer's own event
        "A transportadora entrega amanhã.",  # an outside party as the subject
    ],
)
def test_commitment_cue_stays_off_past_habitual_governed_and_ai_text(text: str) -> None:
    assert not message_cue(text), text


def test_a_closing_tag_question_keeps_the_statement_features() -> None:
    statement = message_features(fold("O eletricista passa aí amanhã cedo."))
    tagged = message_features(fold("O eletricista passa aí amanhã cedo, tá?"))
    asked = message_features(fold("O eletricista passa aí amanhã cedo?"))
    assert "q" in asked[0] and "q" not in statement[0]
    assert not [feature for feature in tagged[0] if feature.startswith("q")]
    assert {f for f in statement[0] if f.startswith("u:")} <= set(tagged[0])


@settings(max_examples=200)
@given(st.sampled_from(EVERY_LABELLED), st.sampled_from(EVERY_LABELLED))
def test_commitment_cue_is_sentence_local(
    first: tuple[str, bool], second: tuple[str, bool]
) -> None:
    # Joining two messages on a new line can neither create nor hide a cue.
    joined = message_cue(first[0] + "\n" + second[0])
    assert joined == (message_cue(first[0]) or message_cue(second[0]))


# --- the verdict's shape ----------------------------------------------------------------------


def test_learned_match_spans_the_sentence_that_promises() -> None:
    body = "Obrigado pela paciência! Ele vai providenciar o estorno e te manda o comprovante."
    match = detect_human_promise(body)
    assert match is not None and match.rule_id == LEARNED_RULE_ID
    assert body[match.start : match.end].startswith("Ele vai providenciar")


def test_rule_hits_are_certain_and_scored_one() -> None:
    assessment = assess_promise("Vou verificar com a equipe e te retorno.")
    assert assessment.promise and assessment.stage is PromiseStage.RULES
    assert assessment.score == 1.0 and not assessment.uncertain


def test_detector_version_names_the_corpus_the_learned_stage_was_trained_on() -> None:
    assert PROMISE_DETECTOR_VERSION.endswith(corpus_digest(load_corpus()))
    assert LEARNED_RULE_ID in RULE_IDS


def test_shipped_calibration_is_the_one_of_the_shipped_corpus() -> None:
    # Fails when the corpus was edited without `python -m cases.guardrail.calibrate`.
    shipped = Calibration(**json.loads(CALIBRATION_PATH.read_text(encoding="utf-8")))
    rows = load_corpus()
    assert shipped.digest == corpus_digest(rows)
    assert learned_model().calibration == shipped
    assert shipped.cue_low <= shipped.band_low <= shipped.threshold < shipped.band_high


def test_band_low_keeps_every_cross_validated_training_promise_in_reach() -> None:
    # Synthetic out-of-fold scores: the band drops below the lowest promise the rules miss,
    # by BAND_MARGIN in log-odds.
    def below(p: float) -> float:
        odds = math.log(p / (1 - p)) - BAND_MARGIN
        return math.floor(1 / (1 + math.exp(-odds)) * 10_000) / 10_000

    assert choose_band_low([0.9, 0.03, 0.5], [True, True, False], [False] * 3, 0.7) == below(0.03)
    assert choose_band_low([0.9, 0.01], [True, True], [False, True], 0.7) == 0.2  # capped
    assert choose_band_low([0.05], [True], [False], 0.001) == 0.001  # never above the threshold
    assert choose_band_low([], [], [], 0.7) == 0.2
    # A promise the commitment cue carries does not pull the band down; it sets the cue's
    # floor instead.
    scores, labels, cues = [0.9, 0.03, 0.15], [True, True, True], [False, True, False]
    assert choose_band_low(scores, labels, [False] * 3, 0.7, cues) == below(0.15)
    assert choose_cue_low(scores, labels, [False] * 3, cues, 0.1) == below(0.03)
    assert choose_cue_low([0.9], [True], [False], [False], 0.1) == 0.1  # no cue promise
    assert choose_cue_low([0.6], [True], [False], [True], 0.1) == 0.1  # never above band_low


def test_out_of_fold_every_training_promise_is_found_or_sent_to_the_model_check() -> None:
    # The band's defining property, on the training corpus (cross-validated: the dev and
    # held-out sets play no part in it): a promise the rules miss is at or above band_low,
    # or carries the commitment cue and is at or above cue_low.
    rows = load_corpus()
    model = learned_model()
    calibration = model.calibration
    hits = [detect_rule_promise(row.text) is not None for row in rows]
    for row, raw, hit in zip(rows, out_of_fold_raw(rows), hits, strict=True):
        if row.promise and not hit:
            probability = model.probability(raw)
            if probability < calibration.band_low:
                assert message_cue(row.text), row.text
                assert probability >= calibration.cue_low, row.text


def test_calibration_and_training_are_deterministic() -> None:
    rows = load_corpus()
    hits = [detect_rule_promise(row.text) is not None for row in rows]
    shipped = Calibration(**json.loads(CALIBRATION_PATH.read_text(encoding="utf-8")))
    assert calibrate(rows, hits) == shipped
    again = train_model(rows, hits, shipped)
    assert again.weights == learned_model().weights and again.bias == learned_model().bias


def test_feature_sentences_and_spans_agree_on_every_labelled_message() -> None:
    for text, _ in EVERY_LABELLED:
        folded = fold(text)
        assert len(message_features(folded)) == len(sentence_spans(folded)), text


# --- properties -------------------------------------------------------------------------------

TRAILING = ["!", ".", " 😊", "🙏", "!!", " 👍", "...", " ", "\n", "…", " 🙂🙂"]
NEUTRAL = [
    "Olá, Maria! 😊",
    "Obrigado pela paciência!",
    "Boa tarde!",
    "Seu pedido é o #48213.",
    "O valor ficou R$ 149,90.",
    "Thanks for waiting!",
]


def strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
    )


@settings(max_examples=300)
@given(st.sampled_from(EVERY_LABELLED), st.lists(st.sampled_from(TRAILING), min_size=1))
def test_trailing_emoji_or_punctuation_never_flips_a_verdict(
    item: tuple[str, bool], trailing: list[str]
) -> None:
    text, _ = item
    assert assess_promise(text + "".join(trailing)).promise == assess_promise(text).promise


def _inner_letters_of_lowercase_words(text: str) -> list[bool]:
    """Per character: whether it is a letter after the first of a word that starts in lower case.
    Names are read from capitals (features f13: "o Betão", "Seu Tião"), so a word's first letter
    and every letter of a capitalised word keep their case; the rest of a message's case is
    noise the verdict must not read."""
    free = [False] * len(text)
    for word in re.finditer(r"\w+", text):
        if word.group()[0].islower():
            for index in range(word.start() + 1, word.end()):
                free[index] = True
    return free


@settings(max_examples=300)
@given(st.sampled_from(EVERY_LABELLED), st.data())
def test_case_and_accents_never_flip_a_verdict(item: tuple[str, bool], data: st.DataObject) -> None:
    text, _ = item
    variant = strip_accents(text) if data.draw(st.booleans()) else text
    free = _inner_letters_of_lowercase_words(variant)
    flips = data.draw(st.lists(st.booleans(), min_size=len(variant), max_size=len(variant)))
    variant = "".join(
        c.swapcase() if flip and ok else c for c, flip, ok in zip(variant, flips, free, strict=True)
    )
    assert assess_promise(variant).promise == assess_promise(text).promise


FOUND_PROMISES = [t for t, label in EVERY_LABELLED if label and detect_human_promise(t)]


@settings(max_examples=300)
@given(
    st.sampled_from(FOUND_PROMISES),
    st.lists(st.sampled_from(NEUTRAL), min_size=1, max_size=3),
    st.lists(st.sampled_from(NEUTRAL), max_size=3),
    st.sampled_from([" ", "\n", "\n\n"]),
)
def test_a_found_promise_inside_harmless_text_stays_a_promise(
    promise: str, before: list[str], after: list[str], separator: str
) -> None:
    body = separator.join([*before, promise, *after])
    assert detect_human_promise(body) is not None


@settings(max_examples=200)
@given(st.sampled_from(EVERY_LABELLED), st.sampled_from(EVERY_LABELLED))
def test_learned_score_of_two_messages_is_the_higher_of_the_two(
    first: tuple[str, bool], second: tuple[str, bool]
) -> None:
    # Sentences are scored independently and the message takes the maximum, except for the one
    # reading across sentences: a short question asking to accept ("Quer?", "Prefere...?")
    # makes the sentence before it an offer when that one has an offer word (features f8).
    opening = message_sentences(fold(second[0]))
    assume(not (opening and asks_to_accept(opening[0])))
    model = learned_model()
    joined = model.score(first[0] + "\n" + second[0]).raw
    assert joined == pytest.approx(max(model.score(first[0]).raw, model.score(second[0]).raw))


def test_a_question_asking_to_accept_makes_the_offer_before_it_a_question() -> None:
    # The exception above, as hypothesis found it in two near misses of the corpora: "se"
    # (here "whether") is an offer word, so the first sentence reads as a question.
    model = learned_model()
    first = "Não tenho como saber se eles vão aceitar a devolução fora do prazo."
    second = "Prefere que eu gere boleto ou Pix?"
    alone = max(model.score(first).raw, model.score(second).raw)
    assert model.score(first + "\n" + second).raw < alone
    # Without the offer word, the question changes nothing before it.
    plain = "Eles vão aceitar a devolução fora do prazo."
    together = model.score(plain + "\n" + second).raw
    assert together == pytest.approx(max(model.score(plain).raw, model.score(second).raw))


@settings(max_examples=200)
@given(st.sampled_from(EVERY_LABELLED), st.sampled_from(EVERY_LABELLED))
def test_adding_a_message_never_takes_text_out_of_the_model_checks_reach(
    first: tuple[str, bool], second: tuple[str, bool]
) -> None:
    # Reach: the learned stage flags it, or sends it to the check. Harmless text around a
    # promise can never hide it from the check.
    model = learned_model()

    def reach(text: str) -> bool:
        scored = model.score(text)
        return scored.probability >= model.calibration.band_low or model.uncertain(scored)

    if reach(first[0]) or reach(second[0]):
        assert reach(first[0] + "\n" + second[0])


@settings(max_examples=300)
@given(st.text(max_size=400))
def test_assessment_is_total_deterministic_and_consistent(body: str) -> None:
    first = assess_promise(body)
    assert assess_promise(body) == first
    assert 0.0 <= first.score <= 1.0
    assert (first.match is not None) == first.promise
    if first.match is not None:
        assert 0 <= first.match.start < first.match.end <= len(body)
        assert first.match.rule_id in RULE_IDS


# --- the model check fails closed ---------------------------------------------------------------


class FakeClock:
    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class APITimeoutError(Exception):
    """Named like the Anthropic SDK's timeout, to test detection by name."""


def raises(error: BaseException) -> Callable[[PromiseCheckRequest], object]:
    def call(_request: PromiseCheckRequest) -> object:
        raise error

    return call


def answers(value: object) -> Callable[[PromiseCheckRequest], object]:
    return lambda _request: value


@pytest.mark.parametrize(
    ("error", "outcome"),
    [
        (RuntimeError("boom"), CheckOutcome.ERROR),
        (ConnectionError("down"), CheckOutcome.ERROR),
        (TimeoutError(), CheckOutcome.TIMEOUT),
        (APITimeoutError(), CheckOutcome.TIMEOUT),
    ],
)
def test_model_check_that_raises_counts_as_a_promise(
    error: Exception, outcome: CheckOutcome
) -> None:
    result = check_promise_with_model("Tudo certo por aqui!", raises(error))
    assert result.promise and result.outcome is outcome and result.failed_closed


def test_model_answer_after_the_deadline_counts_as_a_promise() -> None:
    late = check_promise_with_model(
        "Tudo certo!",
        answers({"promise": False, "who_acts": "nobody"}),
        timeout_s=2.0,
        clock=FakeClock(step=3.0),
    )
    assert late.promise and late.outcome is CheckOutcome.TIMEOUT


@pytest.mark.parametrize(
    "answer",
    [
        '{"promise": false, "who_acts": "nobody"',  # broken JSON
        "não é promessa",
        b"\xff\xfe",
        None,
        [],
        {"promise": False},
        {"promise": "false", "who_acts": "nobody"},
        {"promise": 0, "who_acts": "nobody"},
        {"promise": False, "who_acts": "the customer"},
        {"promise": False, "who_acts": "nobody", "reason": "extra field"},
        {"promise": False, "who_acts": "team_or_person"},  # contradicts itself
    ],
)
def test_model_answer_outside_the_closed_schema_counts_as_a_promise(answer: object) -> None:
    result = check_promise_with_model("Tudo certo!", answers(answer))
    assert result.promise and result.outcome is CheckOutcome.INVALID


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=6,
)


@given(_JSON)
def test_any_answer_that_is_not_a_clean_no_counts_as_a_promise(answer: object) -> None:
    result = check_promise_with_model("Tudo certo!", answers(answer))
    clean_no = (
        isinstance(answer, dict)
        and set(answer) == {"promise", "who_acts"}
        and answer["promise"] is False
        and answer["who_acts"] in ("ai_now", "customer", "system", "nobody")
    )
    assert result.promise is not clean_no


@pytest.mark.parametrize(
    "answer",
    [{"promise": False, "who_acts": "ai_now"}, '{"promise": false, "who_acts": "customer"}'],
)
def test_clean_model_answer_is_taken(answer: object) -> None:
    result = check_promise_with_model("Pronto, já troquei a data.", answers(answer))
    assert not result.promise and result.outcome is CheckOutcome.ANSWERED


def test_model_check_request_is_a_forced_closed_schema_tool_call() -> None:
    seen: list[PromiseCheckRequest] = []

    def call(request: PromiseCheckRequest) -> object:
        seen.append(request)
        return {"promise": True, "who_acts": "team_or_person"}

    body = "x" * (MAX_CHECKED_CHARS + 500)
    check_promise_with_model(body, call, timeout_s=1.5)
    (request,) = seen
    schema = PROMISE_CHECK_TOOL["input_schema"]
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == set(schema["properties"]) == {"promise", "who_acts"}
    assert request.tool is PROMISE_CHECK_TOOL
    assert request.tool_choice == {"type": "tool", "name": PROMISE_CHECK_TOOL_NAME}
    assert request.tool_choice is PROMISE_CHECK_TOOL_CHOICE
    assert request.purpose == PROMISE_CHECK_PURPOSE and request.timeout_s == 1.5
    assert "x" * MAX_CHECKED_CHARS in request.message
    assert "x" * (MAX_CHECKED_CHARS + 1) not in request.message


UNCERTAIN = [text for text, _ in EVERY_LABELLED if assess_promise(text).uncertain]
CERTAIN = [text for text, _ in EVERY_LABELLED if not assess_promise(text).uncertain]


def test_model_is_asked_only_about_the_uncertain_band() -> None:
    asked: list[str] = []

    def call(request: PromiseCheckRequest) -> object:
        asked.append(request.message)
        return {"promise": False, "who_acts": "nobody"}

    for text in CERTAIN[:200]:
        decision = decide_promise(text, call)
        assert decision.check is None and decision.promise == assess_promise(text).promise
    assert not asked
    assert UNCERTAIN, "the corpora should contain uncertain messages"
    decision = decide_promise(UNCERTAIN[0], call)
    assert asked and decision.stage is DecisionStage.MODEL and not decision.promise


def test_uncertain_message_is_a_promise_when_the_model_check_fails() -> None:
    for text in UNCERTAIN[:20]:
        decision = decide_promise(text, raises(TimeoutError()))
        assert decision.promise and decision.match is not None
        assert decision.check is not None and decision.check.failed_closed


def test_without_a_model_the_decision_is_the_local_verdict() -> None:
    for text in UNCERTAIN[:20] + CERTAIN[:20]:
        decision = decide_promise(text)
        assert decision.promise == (detect_human_promise(text) is not None)
        assert decision.check is None


# --- the block message ------------------------------------------------------------------------


def test_block_message_says_open_a_case_or_say_what_you_do_now_never_which_words() -> None:
    assert "`open_human_case`" in CASE_PROMISE_TEACHING_PT
    assert "o que você fez ou pode fazer agora" in CASE_PROMISE_TEACHING_PT
    assert "what you did or can do now" in CASE_PROMISE_TEACHING_EN
    # No list of verbs to steer around: that taught models to rephrase the same promise.
    assert not re.search(r"\b(verificar|encaminhar|ligar|retornar)\b", CASE_PROMISE_TEACHING_PT)
    assert not re.search(r"\b(will check|forward|get back|call or)\b", CASE_PROMISE_TEACHING_EN)
    assert "(sem " not in CASE_PROMISE_TEACHING_PT and "(do not" not in CASE_PROMISE_TEACHING_EN
