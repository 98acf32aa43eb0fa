"""Router classification benchmarks: local-classifier latency, few-shot accuracy, calibration.

Run from the repository root: ``.venv/bin/python bench/router.py`` (a few minutes: the
semantic stage's learning simulation retrains heads; ``--only semantic`` runs that part).
Prints one JSON object per line: {"name", "value", "unit", "n"}. The English sets (Banking77,
CLINC150) are read from ``../shared/data/intent_en`` when present; a line with "skipped" says
when not.

To add a benchmark, write a function that yields result lines and append it to BENCHES.
"""

from __future__ import annotations

import csv
import json
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conversation.llm.local_classifier import LocalClassifier  # noqa: E402

PTBR = ROOT / "tests" / "fixtures" / "intents"
INTENT_EN = ROOT.parent / "shared" / "data" / "intent_en"
SEED = 0
# Confidences at which the bench reports precision/coverage: the router's default
# min_confidence (spec Task 2) and its default local_accept_threshold (routers.models).
THRESHOLDS = (0.6, 0.85)

Line = dict[str, Any]
Labelled = dict[str, list[str]]
Pairs = list[tuple[str, str]]


def line(name: str, value: float | None, unit: str, n: int, **extra: Any) -> Line:
    return {"name": name, "value": value, "unit": unit, "n": n, **extra}


def skipped(name: str, reason: str) -> Line:
    return line(name, None, "skipped", 0, skipped=reason)


# --- synthetic pt-BR router: 20 intents x 10 examples ------------------------------------

TOPICS = [
    ("segunda_via", ["a segunda via do boleto", "o código de barras da fatura"]),
    ("cancelamento", ["cancelar meu plano", "encerrar a assinatura"]),
    ("suporte_internet", ["resolver a internet que caiu", "arrumar a conexão lenta"]),
    ("vendas", ["saber o preço do plano", "contratar um plano novo"]),
    ("mudanca_endereco", ["mudar meu endereço", "transferir o serviço para outra casa"]),
    ("senha", ["trocar minha senha", "recuperar o acesso ao aplicativo"]),
    ("reclamacao", ["fazer uma reclamação", "registrar uma queixa"]),
    ("atendente", ["falar com um atendente", "conversar com uma pessoa"]),
    ("entrega", ["saber onde está meu pedido", "rastrear a entrega"]),
    ("troca", ["trocar um produto com defeito", "devolver a compra"]),
    ("reembolso", ["receber meu dinheiro de volta", "pedir o estorno"]),
    ("agendamento", ["marcar uma visita técnica", "agendar a instalação"]),
    ("limite", ["aumentar meu limite", "ter mais crédito no cartão"]),
    ("desbloqueio", ["desbloquear o cartão", "ativar o cartão novo"]),
    ("perda_roubo", ["avisar que roubaram meu cartão", "bloquear o cartão perdido"]),
    ("saldo", ["consultar meu saldo", "ver o extrato da conta"]),
    ("pagamento", ["pagar uma conta", "quitar o boleto atrasado"]),
    ("negociacao", ["negociar minha dívida", "parcelar o débito"]),
    ("horario", ["saber o horário de funcionamento", "saber se a loja abre domingo"]),
    ("cadastro", ["atualizar meu cadastro", "corrigir meu e-mail"]),
]
PREFIXES = ["quero", "preciso", "como faço para", "gostaria de", "me ajuda a"]
QUERY_PREFIXES = ["oi, vc pode me ajudar a", "bom dia! queria", "pfv preciso", "tem como"]


def synthetic_router() -> tuple[Labelled, list[str]]:
    labelled = {name: [f"{p} {o}" for p in PREFIXES for o in objs] for name, objs in TOPICS}
    queries = [f"{p} {o}?" for p in QUERY_PREFIXES for _, objs in TOPICS for o in objs]
    return labelled, queries


def bench_local_latency() -> Iterator[Line]:
    labelled, queries = synthetic_router()
    started = time.perf_counter()
    model = LocalClassifier.train(labelled)
    train_ms = (time.perf_counter() - started) * 1000
    yield line("local_classifier_train_20x10", round(train_ms, 2), "ms", 200)
    for q in queries:  # warm-up
        model.predict(q)
    timings: list[float] = []
    for _ in range(10):
        for q in queries:
            t0 = time.perf_counter_ns()
            model.predict(q)
            timings.append((time.perf_counter_ns() - t0) / 1000)
    timings.sort()
    p99 = timings[int(len(timings) * 0.99) - 1]
    yield line(
        "local_classifier_predict_p50_20x10",
        round(statistics.median(timings), 1),
        "us",
        len(timings),
    )
    yield line("local_classifier_predict_p99_20x10", round(p99, 1), "us", len(timings))


# --- accuracy and calibration on public datasets -----------------------------------------


def evaluate(
    name: str, train: Mapping[str, Sequence[str]], test: Pairs, out_of_scope: Sequence[str] = ()
) -> Iterator[Line]:
    model = LocalClassifier.train(train)
    in_scope = [(model.predict(text), label) for text, label in test]
    correct = sum(p.label == label for p, label in in_scope)
    yield line(f"local_accuracy_{name}", round(correct / len(test), 4), "ratio", len(test))
    oos = [model.predict(text) for text in out_of_scope]
    for threshold in THRESHOLDS:
        yield from precision_and_coverage(name, threshold, in_scope, oos)
    yield line(
        f"local_ece_{name}",
        round(expected_calibration_error(in_scope, oos), 4),
        "ratio",
        len(test) + len(oos),
    )
    if oos:
        mean_in = statistics.fmean(p.confidence for p, _ in in_scope)
        mean_oos = statistics.fmean(p.confidence for p in oos)
        yield line(f"local_mean_confidence_in_scope_{name}", round(mean_in, 4), "ratio", len(test))
        yield line(
            f"local_mean_confidence_out_of_scope_{name}", round(mean_oos, 4), "ratio", len(oos)
        )


def precision_and_coverage(
    name: str, threshold: float, in_scope: Sequence[tuple[Any, str]], oos: Sequence[Any]
) -> Iterator[Line]:
    """Among predictions at or above ``threshold``, the share that is right (out-of-scope
    texts count as wrong); and the share of in-scope texts that gets there."""
    confident = [(p, label) for p, label in in_scope if p.confidence >= threshold]
    accepted = len(confident) + sum(p.confidence >= threshold for p in oos)
    right = sum(p.label == label for p, label in confident)
    precision = round(right / accepted, 4) if accepted else None
    yield line(f"local_precision_at_{threshold}_{name}", precision, "ratio", accepted)
    coverage = round(len(confident) / len(in_scope), 4)
    yield line(f"local_coverage_at_{threshold}_{name}", coverage, "ratio", len(in_scope))


def expected_calibration_error(in_scope: Sequence[tuple[Any, str]], oos: Sequence[Any]) -> float:
    """|confidence - accuracy| averaged over 10 equal-width confidence bins."""
    points = [(p.confidence, p.label == label) for p, label in in_scope]
    points += [(p.confidence, False) for p in oos]
    bins: dict[int, list[tuple[float, bool]]] = defaultdict(list)
    for conf, ok in points:
        bins[min(9, int(conf * 10))].append((conf, ok))
    return sum(
        len(b)
        / len(points)
        * abs(statistics.fmean(c for c, _ in b) - statistics.fmean(ok for _, ok in b))
        for b in bins.values()
    )


def few_shot(pairs: Pairs, k: int) -> Labelled:
    by_label: dict[str, list[str]] = defaultdict(list)
    for text, label in pairs:
        by_label[label].append(text)
    rng = random.Random(SEED)
    return {label: rng.sample(sorted(texts), k) for label, texts in sorted(by_label.items())}


def read_credsystem(name: str) -> Pairs:
    with (PTBR / name).open(encoding="utf-8") as fh:
        return [(r["intent"], r["service_name"]) for r in csv.DictReader(fh, delimiter=";")]


def bench_credsystem() -> Iterator[Line]:
    train: Labelled = defaultdict(list)
    for text, label in read_credsystem("intents_pre_loaded.csv"):
        train[label].append(text)
    yield from evaluate("credsystem_ptbr_16", train, read_credsystem("extra_intents.csv"))


def bench_banking77() -> Iterator[Line]:
    folder = INTENT_EN / "banking77"
    if not folder.is_dir():
        yield skipped("local_accuracy_banking77", f"{folder} not found")
        return

    def read(name: str) -> Pairs:
        with (folder / name).open(encoding="utf-8") as fh:
            return [(r["text"], r["category"]) for r in csv.DictReader(fh)]

    train, test = read("train.csv"), read("test.csv")
    for k in (5, 10):
        yield from evaluate(f"banking77_k{k}", few_shot(train, k), test)


def bench_clinc150() -> Iterator[Line]:
    path = INTENT_EN / "clinc150" / "data_full.json"
    if not path.is_file():
        yield skipped("local_accuracy_clinc150", f"{path} not found")
        return
    data = json.loads(path.read_text(encoding="utf-8"))
    train = [(t, label) for t, label in data["train"]]
    test = [(t, label) for t, label in data["test"]]
    oos = [t for t, _ in data["oos_test"]]
    for k in (5, 10):
        yield from evaluate(f"clinc150_k{k}", few_shot(train, k), test, oos)


def bench_semantic() -> Iterator[Line]:
    """The semantic local stage (routers.classification.semantic): its cost per process,
    routing_dev.json per scenario and averaged (with today's lexical stage beside it), the
    own held-out scenarios, and the public sets. See bench/_router_semantic.py."""
    import _router_semantic as semantic

    yield from semantic.bench_cost()
    yield from semantic.bench_routing_dev_lexical()
    yield from semantic.bench_routing_dev()
    yield from semantic.bench_own_heldout()
    yield from semantic.bench_public(read_credsystem, few_shot, INTENT_EN)


BENCHES: list[Callable[[], Iterator[Line]]] = [
    bench_local_latency,
    bench_credsystem,
    bench_banking77,
    bench_clinc150,
    bench_semantic,
]


# Transaction control is not a query of the routing step (the decide step runs outside the
# turn's transaction, so its own writes open and commit one).
TRANSACTION_CONTROL = ("SAVEPOINT", "RELEASE", "BEGIN", "COMMIT", "ROLLBACK")


def bench_router_resolution_queries(turns: int = 30) -> None:
    """SQL queries of the routing step per real turn (webhook → turn), on a fresh SQLite
    file with the demo seeded (its simulator channel has a router). Savepoints aside.
    Prints, per outcome, the mean queries of ``route_turn`` (transaction control aside);
    ``no_router`` is a channel without a router (the channel's agent config, the one query
    every turn always read)."""
    import os
    import uuid

    from _django import fresh_database, setup_django

    path = Path(f"/tmp/bench_router_{os.getpid()}.sqlite3")  # a scratch file
    setup_django(f"sqlite:///{path}", ANTHROPIC_API_KEY="", TURN_BURST_WINDOW_S="0")
    try:
        fresh_database()
        from django.db import connection
        from django.test import Client
        from django.test.utils import CaptureQueriesContext

        from conversation.models import ChannelSession
        from conversation.services import channel_create
        from conversation.turns import pipeline as turn_module
        from routers.turn_routing import route_turn

        by_outcome: dict[str, list[int]] = defaultdict(list)

        def measured(**kwargs: Any) -> Any:
            with CaptureQueriesContext(connection) as ctx:
                result = route_turn(**kwargs)
            sql = [q for q in ctx.captured_queries if not q["sql"].startswith(TRANSACTION_CONTROL)]
            by_outcome[result.outcome].append(len(sql))
            return result

        turn_module.route_turn = measured
        routed = ChannelSession.objects.get(name="Simulador")
        plain = channel_create(
            organization=routed.organization,
            name="Sem roteador",
            provider="simulator",
            actor=None,
            agent=routed.agent,
        )
        script = [
            "quanto custa esse tênis?",
            "tem em outra cor?",
            "meu boleto venceu, preciso da segunda via",
            "e o pix, tem desconto?",
            "meu pedido não chegou",
        ]
        client = Client()
        for i in range(turns):
            phone = f"55117{i // len(script):08d}"
            for channel in (routed, plain) if i % len(script) == 0 else (routed,):
                client.post(
                    f"/webhooks/simulator/{channel.pk}",
                    data=json.dumps(
                        {"from": phone, "text": script[i % len(script)], "id": uuid.uuid4().hex}
                    ),
                    content_type="application/json",
                    HTTP_X_SIMULATOR_SECRET=channel.webhook_secret,
                    SERVER_NAME="localhost",
                )
        for outcome, counts in sorted(by_outcome.items()):
            print(
                json.dumps(
                    line(
                        f"router_resolution_queries_{outcome}",
                        round(statistics.fmean(counts), 2),
                        "queries",
                        len(counts),
                        max=max(counts),
                    )
                ),
                flush=True,
            )
    finally:
        path.unlink(missing_ok=True)


def main() -> None:
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    for bench in BENCHES:
        if only and only not in bench.__name__:
            continue
        for result in bench():
            print(json.dumps(result, ensure_ascii=False), flush=True)
    if not only:
        bench_router_resolution_queries()


if __name__ == "__main__":
    main()
