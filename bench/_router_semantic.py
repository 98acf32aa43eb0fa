"""Semantic local stage benchmarks for bench/router.py (imported from there).

* ``routing_dev_*``: per scenario of ../shared/data/dev_ptbr/routing_dev.json and
  averaged (``avg``). Heads start from the members' examples and descriptions only; the
  scenario's cases are never trained on (the learning simulation learns from the stream
  it is measured on, as a router in production would).
* ``own_*``: the own scenarios' held-out part (tests/fixtures/routing/own_scenarios.json);
  ``own_r4_*``: the held-out part of own_scenarios_r4.json (three more businesses,
  written before round 4's tuning; only its ``tune`` part guided any choice);
  ``own_r6_*``: the same for own_scenarios_r6.json (gym, internet provider, furniture
  store; written before round 6's tuning); ``own_r7_*``: own_scenarios_r7.json (beach
  guesthouse, insurance broker, private school; written before round 7's tuning);
  ``own_r8_*``: own_scenarios_r8.json (driving school, clinical lab, bakery, solar
  installer; written blind in session 13, all held-out, with the learning simulation);
  ``own_r10_*``: own_scenarios_r10.json (written blind at the end of round 13 and
  reserved unread; first read in round 14 on the shipped code); ``own_r11_*``:
  own_scenarios_r11.json (written blind in round 14, read once on the shipped code);
  ``own_r12_*``: own_scenarios_r12.json (written blind at the end of round 14 and reserved
  unread; first read in round 15 on the shipped code); ``own_r13_*``: own_scenarios_r13.json
  (written blind in round 15 and reserved unread; first read in round 16 on the shipped
  code); ``own_r14_*``: own_scenarios_r14.json (written blind in round 16 and reserved
  unread; first read in round 17 on the shipped code); ``own_r15_*``: own_scenarios_r15.json
  (written blind in round 17, read once at its end on the shipped code).
* ``*_reranked_share``: the share of messages the second encoder re-ranked.
* ``semantic_*`` public sets: Credsystem pt-BR in full; Banking77 and CLINC150 on a
  fixed sample of their test sets (the encoder costs ~4 ms a message).
* ``local_stage_cost_*``: load time, RSS added and per-message latency of each local
  stage, each measured in a fresh process.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from routers.classification import encoder as encoder_module  # noqa: E402
from routers.classification.evaluation import (  # noqa: E402
    RoutingScore,
    Scenario,
    average,
    scenario_from_json,
    score_cases,
    score_switches,
    simulate_learning,
)
from routers.classification.local import LocalStage  # noqa: E402
from routers.classification.semantic import train_head  # noqa: E402
from routers.classification.types import IntentOption  # noqa: E402

DEV = ROOT.parent / "shared" / "data" / "dev_ptbr" / "routing_dev.json"
OWN = ROOT / "tests" / "fixtures" / "routing" / "own_scenarios.json"
# The later own scenario files by round: r4, r6 and r7 have a tuning part (their held-out part
# is read without learning); r8 and later were written blind, all held out, and are read
# with the learning simulation.
OWN_ROUNDS_WITH_TUNING = (4, 6, 7)
OWN_BLIND_ROUNDS = (8, *range(10, 34))  # r9 is all tuning
MIN_CONFIDENCE = 0.6  # the router's default min_confidence
# The local_accept_threshold of earlier routers, and the default for the semantic stage
# (routers.models; where its precision reaches ~0.97 on the own scenarios).
ACCEPT_THRESHOLDS = (0.85, 0.9)
LEARNING_THRESHOLD = float(os.environ.get("BENCH_LEARNING_THRESHOLD", "0.9"))
PUBLIC_SAMPLE = 500

Line = dict[str, Any]


def line(name: str, value: float | None, unit: str, n: int, **extra: Any) -> Line:
    v = None if value is None else round(float(value), 4)
    return {"name": name, "value": v, "unit": unit, "n": n, **extra}


def _encoder() -> Any:
    enc = encoder_module.get_encoder()
    if enc is None:
        raise RuntimeError("no encoder")
    return enc


def semantic_stage(intents: Sequence[IntentOption]) -> Any:
    enc = _encoder()
    rerank = encoder_module.get_rerank_encoder()  # None: the first encoder alone
    return lambda phrases=(): train_head(intents, phrases, encoder=enc, rerank_encoder=rerank)


def dev_scenarios() -> list[Scenario]:
    data = json.loads(DEV.read_text(encoding="utf-8"))
    return [scenario_from_json(s) for s in data["scenarios"]]


def own_scenarios(split: str, path: Path = OWN) -> list[Scenario]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        scenario_from_json(s, cases_key=split, pairs_key=f"topic_{split}")
        for s in data["scenarios"]
    ]


def _score_lines(prefix: str, sid: str, score: RoutingScore, threshold: float) -> Iterator[Line]:
    n_all = score.in_scope + score.no_intent
    yield line(f"{prefix}_top1_{sid}", score.top1, "ratio", score.in_scope)
    yield line(f"{prefix}_routed_offline_{sid}", score.routed_offline, "ratio", score.in_scope)
    yield line(f"{prefix}_none_rejected_{sid}", score.none_rejected, "ratio", score.no_intent)
    yield line(
        f"{prefix}_decided_locally_at_{threshold}_{sid}", score.decided_share, "ratio", n_all
    )
    yield line(
        f"{prefix}_decided_precision_at_{threshold}_{sid}",
        score.decided_precision,
        "ratio",
        round(score.decided_share * n_all),
    )


def bench_scenarios(prefix: str, scenarios: Sequence[Scenario], learning: bool) -> Iterator[Line]:
    by_threshold: dict[float, list[RoutingScore]] = defaultdict(list)
    switches: dict[bool, list[Any]] = defaultdict(list)
    learned: dict[int, list[Any]] = defaultdict(list)
    reranked: list[float] = []
    for sc in scenarios:
        train = semantic_stage(sc.intents)
        head: LocalStage = train(())
        for threshold in ACCEPT_THRESHOLDS:
            score = score_cases(
                head, sc.cases, accept_threshold=threshold, min_confidence=MIN_CONFIDENCE
            )
            if threshold == ACCEPT_THRESHOLDS[0]:
                reranked.append(getattr(head, "reranked", 0) / max(1, len(sc.cases)))
            by_threshold[threshold].append(score)
            lines = _score_lines(prefix, sc.id, score, threshold)
            yield from (
                x for x in lines if threshold == ACCEPT_THRESHOLDS[0] or "decided" in x["name"]
            )
        for use_context in (False, True):
            sw = score_switches(
                head, sc.pairs, min_confidence=MIN_CONFIDENCE, use_context=use_context
            )
            switches[use_context].append(sw)
            rule = "in_context" if use_context else "alone"
            yield line(f"{prefix}_switch_moved_{rule}_{sc.id}", sw.moved, "ratio", sw.switches)
            yield line(
                f"{prefix}_same_subject_kept_{rule}_{sc.id}", sw.kept, "ratio", sw.follow_ups
            )
        if learning:
            points = simulate_learning(
                train,
                sc.cases,
                accept_threshold=LEARNING_THRESHOLD,
                min_confidence=MIN_CONFIDENCE,
            )
            for p in points:
                learned[p.seen].append(p)
                yield from _learning_lines(prefix, sc.id, p)
    yield line(
        f"{prefix}_reranked_share_avg",
        statistics.fmean(reranked) if reranked else 0.0,
        "ratio",
        sum(len(sc.cases) for sc in scenarios),
    )
    for threshold, scores in by_threshold.items():
        lines = _score_lines(prefix, "avg", average(scores), threshold)
        yield from (x for x in lines if threshold == ACCEPT_THRESHOLDS[0] or "decided" in x["name"])
    for use_context, sws in switches.items():
        rule = "in_context" if use_context else "alone"
        yield line(
            f"{prefix}_switch_moved_{rule}_avg",
            statistics.fmean(s.moved for s in sws),
            "ratio",
            sum(s.switches for s in sws),
        )
        yield line(
            f"{prefix}_same_subject_kept_{rule}_avg",
            statistics.fmean(s.kept for s in sws),
            "ratio",
            sum(s.follow_ups for s in sws),
        )
    for seen, points in sorted(learned.items()):
        precisions = [p.local_precision for p in points if p.local_precision is not None]
        yield from _learning_point_lines(
            prefix,
            "avg",
            seen,
            learned=statistics.fmean(p.learned for p in points),
            share=statistics.fmean(p.local_share for p in points),
            precision=statistics.fmean(precisions) if precisions else None,
            rests=[(p.rest, p.rest_without_learning) for p in points],
        )


def _learning_lines(prefix: str, sid: str, p: Any) -> Iterator[Line]:
    yield from _learning_point_lines(
        prefix,
        sid,
        p.seen,
        learned=p.learned,
        share=p.local_share,
        precision=p.local_precision,
        rests=[(p.rest, p.rest_without_learning)],
    )


def _learning_point_lines(
    prefix: str,
    sid: str,
    seen: int,
    *,
    learned: float,
    share: float,
    precision: float | None,
    rests: Sequence[tuple[RoutingScore | None, RoutingScore | None]],
) -> Iterator[Line]:
    """One checkpoint of the learning simulation (a scenario's, or averaged): the stage
    after learning on the messages not streamed yet, and the stage before any learning on
    the same messages (``_without_learning``), so the two compare like with like."""
    t = LEARNING_THRESHOLD
    head = f"{prefix}_learning_after_{seen}"
    yield line(f"{head}_learned_{sid}", learned, "phrases", seen)
    yield line(f"{head}_local_share_at_{t}_{sid}", share, "ratio", seen)
    yield line(f"{head}_local_precision_{sid}", precision, "ratio", seen)
    for index, tail in ((0, ""), (1, "_without_learning")):
        scores = [score for pair in rests if (score := pair[index]) is not None]
        if not scores:
            continue
        rest = average(scores)
        n = rest.in_scope + rest.no_intent
        yield line(f"{head}_rest_top1{tail}_{sid}", rest.top1, "ratio", n)
        yield line(f"{head}_rest_decided_at_{t}{tail}_{sid}", rest.decided_share, "ratio", n)
        yield line(f"{head}_rest_precision_at_{t}{tail}_{sid}", rest.decided_precision, "ratio", n)


def _unavailable(name: str) -> Line | None:
    if encoder_module.get_encoder() is None:
        return line(name, None, "skipped", 0, skipped="no sentence encoder could load")
    return None


def bench_routing_dev() -> Iterator[Line]:
    if not DEV.is_file():
        yield line("routing_dev", None, "skipped", 0, skipped=f"{DEV} not found")
        return
    skip = _unavailable("routing_dev")
    if skip:
        yield skip
        return
    yield from bench_scenarios("routing_dev", dev_scenarios(), learning=True)


def bench_own_heldout() -> Iterator[Line]:
    skip = _unavailable("own_heldout")
    if skip:
        yield skip
        return
    yield from bench_scenarios("own_heldout", own_scenarios("heldout"), learning=False)
    for rounds, learning in ((OWN_ROUNDS_WITH_TUNING, False), (OWN_BLIND_ROUNDS, True)):
        for n in rounds:
            scenarios = own_scenarios("heldout", OWN.with_name(f"own_scenarios_r{n}.json"))
            yield from bench_scenarios(f"own_r{n}_heldout", scenarios, learning=learning)


def bench_routing_dev_lexical() -> Iterator[Line]:
    """Today's lexical stage on the same scenarios, for comparison."""
    if not DEV.is_file():
        return
    from conversation.llm.local_classifier import LocalClassifier
    from routers.classification.local import lexical_training_set

    scores = []
    for sc in dev_scenarios():
        model = LocalClassifier.train(lexical_training_set(sc.intents))
        scores.append(
            score_cases(model, sc.cases, accept_threshold=0.85, min_confidence=MIN_CONFIDENCE)
        )
    yield from _score_lines("routing_dev_lexical", "avg", average(scores), 0.85)


# --- public sets through the semantic stage ---------------------------------------------


def _public_eval(
    name: str,
    train: dict[str, list[str]],
    test: Sequence[tuple[str, str]],
    oos: Sequence[str] = (),
) -> Iterator[Line]:
    intents = [
        IntentOption(name=label, description=label.replace("_", " "), examples=tuple(texts))
        for label, texts in sorted(train.items())
    ]
    head = train_head(
        intents, encoder=_encoder(), rerank_encoder=encoder_module.get_rerank_encoder()
    )
    cases = [(t, g) for t, g in test] + [(t, None) for t in oos]
    score = score_cases(head, cases, accept_threshold=0.85, min_confidence=MIN_CONFIDENCE)
    yield line(f"semantic_accuracy_{name}", score.top1, "ratio", score.in_scope)
    if oos:
        yield line(f"semantic_none_rejected_{name}", score.none_rejected, "ratio", score.no_intent)
    yield line(
        f"semantic_precision_at_0.85_{name}",
        score.decided_precision,
        "ratio",
        round(score.decided_share * len(cases)),
    )
    yield line(f"semantic_coverage_at_0.85_{name}", score.decided_share, "ratio", len(cases))


def bench_public(read_credsystem: Any, few_shot: Any, intent_en: Path) -> Iterator[Line]:
    skip = _unavailable("semantic_public")
    if skip:
        yield skip
        return
    train: dict[str, list[str]] = defaultdict(list)
    for text, label in read_credsystem("intents_pre_loaded.csv"):
        train[label].append(text)
    yield from _public_eval("credsystem_ptbr_16", train, read_credsystem("extra_intents.csv"))
    rng = random.Random(0)
    import csv

    folder = intent_en / "banking77"
    if folder.is_dir():
        with (folder / "train.csv").open(encoding="utf-8") as fh:
            b_train = [(r["text"], r["category"]) for r in csv.DictReader(fh)]
        with (folder / "test.csv").open(encoding="utf-8") as fh:
            b_test = [(r["text"], r["category"]) for r in csv.DictReader(fh)]
        sample = rng.sample(b_test, PUBLIC_SAMPLE)
        yield from _public_eval("banking77_k10", few_shot(b_train, 10), sample)
    path = intent_en / "clinc150" / "data_full.json"
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        c_train = [(t, label) for t, label in data["train"]]
        sample = rng.sample([(t, label) for t, label in data["test"]], PUBLIC_SAMPLE)
        oos = rng.sample([t for t, _ in data["oos_test"]], PUBLIC_SAMPLE // 5)
        yield from _public_eval("clinc150_k10", few_shot(c_train, 10), sample, oos)


# --- cost of each local stage, each in a fresh process ----------------------------------


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for row in fh:
            if row.startswith("VmRSS:"):
                return int(row.split()[1]) / 1024
    return float("nan")


def measure_cost(stage: str) -> dict[str, Any]:
    """Run in a child process: load the stage, train one router, time 200 messages."""
    import routers.classification.semantic  # noqa: F401  (numpy and the head's code)
    from conversation.llm.local_classifier import LocalClassifier
    from routers.classification.local import lexical_training_set

    scenario = dev_scenarios()[0] if DEV.is_file() else own_scenarios("tune")[0]
    texts = [t for t, _ in scenario.cases][:200] or ["oi"]
    before = _rss_mb()
    started = time.perf_counter()
    model: Any
    if stage == "lexical":
        model = LocalClassifier.train(lexical_training_set(scenario.intents))
        load_s = 0.0
    else:
        first, _, second = stage.partition("+")
        os.environ[encoder_module.ENCODER_ENV] = first
        os.environ[encoder_module.RERANK_ENV] = second or "off"
        enc = encoder_module.get_encoder()
        rerank = encoder_module.get_rerank_encoder()
        if enc is None or (second and rerank is None):
            return {"skipped": f"encoder {stage} could not load"}
        load_s = time.perf_counter() - started
        model = train_head(scenario.intents, encoder=enc, rerank_encoder=rerank)
    train_s = time.perf_counter() - started - load_s
    wall: list[float] = []
    cpu: list[float] = []
    for text in texts:
        t0, c0 = time.perf_counter(), time.thread_time()
        model.predict(text + " ")  # a fresh text: the embedding cache must not answer
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
    wall.sort()
    cpu.sort()
    return {
        "load_s": load_s,
        "train_s": train_s,
        "rss_added_mb": _rss_mb() - before,
        "p50_ms": statistics.median(wall),
        "p99_ms": wall[max(0, int(len(wall) * 0.99) - 1)],
        "cpu_p50_ms": statistics.median(cpu),
        "cpu_p99_ms": cpu[max(0, int(len(cpu) * 0.99) - 1)],
        "n": len(wall),
    }


def bench_cost() -> Iterator[Line]:
    for stage in ("lexical", "use", "e5", "use+e5"):
        proc = subprocess.run(  # our own script, fixed arguments
            [sys.executable, str(Path(__file__)), "--cost", stage],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
        )
        try:
            result = json.loads(proc.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            result = {"skipped": (proc.stderr.strip().splitlines() or ["failed"])[-1][:200]}
        if "skipped" in result:
            yield line(f"local_stage_cost_{stage}", None, "skipped", 0, skipped=result["skipped"])
            continue
        n = result["n"]
        yield line(f"local_stage_load_{stage}", result["load_s"] * 1000, "ms", 1)
        yield line(f"local_stage_train_{stage}", result["train_s"] * 1000, "ms", 1)
        yield line(f"local_stage_rss_added_{stage}", result["rss_added_mb"], "MB", 1)
        yield line(f"local_stage_predict_p50_{stage}", result["p50_ms"], "ms", n)
        yield line(f"local_stage_predict_p99_{stage}", result["p99_ms"], "ms", n)
        yield line(f"local_stage_predict_cpu_p50_{stage}", result["cpu_p50_ms"], "ms", n)
        yield line(f"local_stage_predict_cpu_p99_{stage}", result["cpu_p99_ms"], "ms", n)


if __name__ == "__main__" and sys.argv[1:2] == ["--cost"]:
    print(json.dumps(measure_cost(sys.argv[2])), flush=True)
