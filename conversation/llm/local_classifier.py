"""A small few-shot text classifier that needs no downloaded weights.

Used by the offline model seam and as the first, free stage of the intent router: a
label is a handful of example sentences (the caller may add the label's description as
one more example), and a message is scored against them.

How it works, briefly:

* ``normalize`` folds case and accents, collapses stretched letters ("siiiim" -> "sim")
  and expands common WhatsApp spellings ("vc" -> "voce", "pq" -> "porque").
* Features are words, adjacent word pairs and character 2-4-grams taken inside word
  boundaries (so "cartao"/"cartoes" and typos still share most features). Weights are
  sublinear TF times IDF over labels; vectors are L2-normalised.
* A label's score is a blend of the cosine to the label centroid (robust when examples
  are noisy) and the best cosine to one of its examples (one close paraphrase counts).
* ``confidence`` is a logistic function of the top score and its margin over the
  runner-up, fitted on public datasets (see ``_confidence``).

Measured choices (mean accuracy over Credsystem pt-BR, Banking77 and CLINC150 at 5 and
10 examples per intent; bench/router.py prints the final figures): 3-5-grams with
per-example IDF, half nearest example: 0.760. Words only: 0.690; nearest example only:
0.697; centroid only: 0.772; 0.3 nearest example: 0.775; then 2-4-grams (beat 2-5, 3-5,
3-6 and 4-5) and IDF over labels: 0.787. Words and word pairs add ~1.5 points over
n-grams alone.

Pure: the stdlib and the shared text fold (``conversation.text.fold``); no Django.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from types import MappingProxyType

from conversation.llm.lru import LruCache
from conversation.text import fold

# WhatsApp spellings and abbreviations -> the standard word (keys are already accent-free
# and lowercase, so "ñ" and "tô" arrive here as "n" and "to").
ABBREVIATIONS: Mapping[str, str] = MappingProxyType(
    {
        "vc": "voce",
        "vcs": "voces",
        "ce": "voce",
        "q": "que",
        "oq": "o que",
        "pq": "porque",
        "pqe": "porque",
        "porq": "porque",
        "tb": "tambem",
        "tbm": "tambem",
        "tmb": "tambem",
        "tbem": "tambem",
        "n": "nao",
        "nn": "nao",
        "naum": "nao",
        "ss": "sim",
        "blz": "beleza",
        "obg": "obrigado",
        "obgd": "obrigado",
        "obgda": "obrigada",
        "brigado": "obrigado",
        "vlw": "valeu",
        "msg": "mensagem",
        "msgs": "mensagens",
        "cel": "celular",
        "tel": "telefone",
        "td": "tudo",
        "tds": "todos",
        "hj": "hoje",
        "amnh": "amanha",
        "qdo": "quando",
        "qnd": "quando",
        "qndo": "quando",
        "qto": "quanto",
        "qts": "quantos",
        "qm": "quem",
        "qr": "quer",
        "qro": "quero",
        "kero": "quero",
        "p": "para",
        "pra": "para",
        "pro": "para o",
        "d": "de",
        "cmg": "comigo",
        "ctg": "contigo",
        "mt": "muito",
        "mto": "muito",
        "mts": "muitos",
        "dps": "depois",
        "agr": "agora",
        "ngm": "ninguem",
        "alg": "alguem",
        "aki": "aqui",
        "aq": "aqui",
        "cmo": "como",
        "ond": "onde",
        "kd": "cade",
        "vdd": "verdade",
        "dnv": "de novo",
        "pfv": "por favor",
        "pfvr": "por favor",
        "pf": "por favor",
        "pls": "por favor",
        "plz": "por favor",
        "pgto": "pagamento",
        "pagto": "pagamento",
        "ctt": "contato",
        "zap": "whatsapp",
        "zapzap": "whatsapp",
        "whats": "whatsapp",
        "wpp": "whatsapp",
        "info": "informacao",
        "infos": "informacoes",
        "sla": "sei la",
        "to": "estou",
        "ta": "esta",
        "tava": "estava",
        "eh": "e",
    }
)

# A letter repeated 3+ times is stretching ("rr"/"ss" are real spelling; digits are amounts).
_STRETCH = re.compile(r"([^\W\d_])\1{2,}")
_WORD = re.compile(r"[a-z0-9]+")


def normalize(text: str) -> str:
    """Accent-free, casefolded, de-stretched text with WhatsApp spellings expanded."""
    plain = _STRETCH.sub(r"\1", fold(text))
    return " ".join(ABBREVIATIONS.get(w, w) for w in _WORD.findall(plain))


@dataclass(frozen=True)
class FeatureConfig:
    """Featurisation knobs; the defaults are the best measured (see ``bench/router.py``)."""

    char_min: int = 2
    char_max: int = 4
    char_weight: float = 1.0
    word_weight: float = 1.0
    bigram_weight: float = 1.0
    # label score = nn_weight * best example cosine + (1 - nn_weight) * centroid cosine
    nn_weight: float = 0.3


def _features(text: str, cfg: FeatureConfig) -> dict[str, float]:
    """Raw term counts, each feature family scaled by its weight."""
    counts: dict[str, float] = {}
    words = normalize(text).split()
    for w in words:
        counts["w:" + w] = counts.get("w:" + w, 0.0) + cfg.word_weight
        padded = f" {w} "
        for n in range(cfg.char_min, cfg.char_max + 1):
            for i in range(len(padded) - n + 1):
                key = padded[i : i + n]
                counts[key] = counts.get(key, 0.0) + cfg.char_weight
    if cfg.bigram_weight:
        for a, b in pairwise(words):
            key = f"b:{a} {b}"
            counts[key] = counts.get(key, 0.0) + cfg.bigram_weight
    return counts


def _sublinear(counts: Mapping[str, float]) -> dict[str, float]:
    return {f: 1.0 + math.log(c) if c >= 1.0 else c for f, c in counts.items()}


def _unit(vec: dict[str, float]) -> dict[str, float]:
    norm = math.sqrt(sum(v * v for v in vec.values()))
    return {f: v / norm for f, v in vec.items()} if norm else {}


@dataclass(frozen=True)
class LocalPrediction:
    label: str | None  # None: nothing in the text tells the labels apart (or no text)
    confidence: float  # calibrated-ish probability that ``label`` is right, in [0, 1]
    scores: Mapping[str, float] = field(default_factory=dict)  # raw label scores in [0, 1]


def fingerprint(labelled: Mapping[str, Sequence[str]]) -> str:
    """sha256 of the labelled set, independent of label and example order."""
    canonical = sorted((label, sorted(examples)) for label, examples in labelled.items())
    return hashlib.sha256(json.dumps(canonical, ensure_ascii=False).encode()).hexdigest()


class LocalClassifier:
    """TF-IDF over words + char n-grams; nearest example blended with label centroid."""

    def __init__(
        self,
        *,
        labels: tuple[str, ...],
        idf: dict[str, float],
        unseen_idf: float,
        example_index: dict[str, list[tuple[int, float]]],
        example_spans: list[tuple[int, int]],
        centroid_index: dict[str, list[tuple[int, float]]],
        config: FeatureConfig,
        fingerprint: str,
    ) -> None:
        self.labels = labels
        self.fingerprint = fingerprint
        self.config = config
        self._idf = idf
        self._unseen_idf = unseen_idf
        self._example_index = example_index
        self._example_spans = example_spans  # label i's examples are [start, end)
        self._n_examples = example_spans[-1][1] if example_spans else 0
        self._centroid_index = centroid_index

    @classmethod
    def train(
        cls, labelled: Mapping[str, Sequence[str]], config: FeatureConfig | None = None
    ) -> LocalClassifier:
        """Build from ``label -> example texts``. Labels without usable text are dropped."""
        cfg = config or FeatureConfig()
        labels: list[str] = []
        raw: list[tuple[int, dict[str, float]]] = []  # (label index, counts), by label
        spans: list[tuple[int, int]] = []
        for label in sorted(labelled):
            usable = [c for c in (_features(t, cfg) for t in labelled[label]) if c]
            if not usable:
                continue
            labels.append(label)
            spans.append((len(raw), len(raw) + len(usable)))
            raw.extend((len(labels) - 1, c) for c in usable)

        # IDF over labels, not examples: a feature shared by every intent ("meu", "quero")
        # says nothing, however few examples use it (measured better than per-example IDF).
        label_df: dict[str, set[int]] = {}
        for label_i, feats in raw:
            for f in feats:
                label_df.setdefault(f, set()).add(label_i)
        n_labels = len(labels)
        idf = {f: math.log((1 + n_labels) / (1 + len(ls))) + 1.0 for f, ls in label_df.items()}

        # A feature found in every label (with 3+ labels) cannot tell them apart: it stays
        # in the vectors' norms but not in the indexes, which roughly halves predict's cost
        # (common words and 2-grams have the longest postings; accuracy moved < 0.2 point).
        indexed = {f for f, ls in label_df.items() if len(ls) < n_labels or n_labels < 3}
        example_index: dict[str, list[tuple[int, float]]] = {}
        sums: list[dict[str, float]] = [{} for _ in labels]
        for i, (label_i, feats) in enumerate(raw):
            vec = _unit({f: w * idf[f] for f, w in _sublinear(feats).items()})
            for f, w in vec.items():
                sums[label_i][f] = sums[label_i].get(f, 0.0) + w
                if f in indexed:
                    example_index.setdefault(f, []).append((i, w))
        centroid_index: dict[str, list[tuple[int, float]]] = {}
        for label_i, total in enumerate(sums):
            for f, w in _unit(total).items():
                if f in indexed:
                    centroid_index.setdefault(f, []).append((label_i, w))

        return cls(
            labels=tuple(labels),
            idf=idf,
            # A feature never seen in training counts in the message's norm at the rarest
            # weight: words unknown to every example dilute the similarity.
            unseen_idf=math.log(1 + n_labels) + 1.0,
            example_index=example_index,
            example_spans=spans,
            centroid_index=centroid_index,
            config=cfg,
            fingerprint=fingerprint(labelled),
        )

    def raw_scores(self, text: str) -> dict[str, float]:
        """Label -> blended cosine in [0, 1] (labels sharing no indexed feature are absent)."""
        feats = _features(text, self.config)
        if not feats or not self.labels:
            return {}
        q = _unit({f: w * self._idf.get(f, self._unseen_idf) for f, w in _sublinear(feats).items()})
        # Dense accumulators (lists, not dicts): this loop is the whole cost of predict.
        ex_sims = [0.0] * self._n_examples
        cen_sims = [0.0] * len(self.labels)
        example_index, centroid_index = self._example_index, self._centroid_index
        for f, w in q.items():
            for i, v in example_index.get(f, ()):
                ex_sims[i] += w * v
            for label_i, v in centroid_index.get(f, ()):
                cen_sims[label_i] += w * v
        a = self.config.nn_weight
        return {
            label: min(1.0, a * max(ex_sims[start:end]) + (1 - a) * cen)
            for label, cen, (start, end) in zip(
                self.labels, cen_sims, self._example_spans, strict=True
            )
            if cen > 0.0
        }

    def predict(self, text: str) -> LocalPrediction:
        scores = self.raw_scores(text)
        if not scores:
            return LocalPrediction(label=None, confidence=0.0, scores={})
        ranked = sorted(scores, key=lambda label: (-scores[label], label))  # ties: by name
        top = scores[ranked[0]]
        runner_up = scores[ranked[1]] if len(ranked) > 1 else 0.0
        return LocalPrediction(
            label=ranked[0],
            confidence=_confidence(top, runner_up),
            scores=MappingProxyType(scores),
        )


# Platt scaling of (top score, margin over the runner-up) -> P(top label is right), fitted
# by logistic regression on Banking77 (k=5, k=10), CLINC150 (k=10, with its out-of-scope
# texts counted as wrong) and the Credsystem pt-BR set, each weighing the same. Sampling
# seed 1; bench/router.py measures on seed 0 (ECE 0.03-0.05 on those sets).
CALIBRATION_BIAS = -2.65
CALIBRATION_TOP = 4.83
CALIBRATION_MARGIN = 18.19


def _confidence(top: float, runner_up: float) -> float:
    """sigmoid(BIAS + TOP * top + MARGIN * (top - runner_up)).

    The margin says how clearly the winner beats the others; the top score says whether
    the text resembles any example at all, so off-topic text stays low even when one label
    happens to win by a little.
    """
    z = CALIBRATION_BIAS + CALIBRATION_TOP * top + CALIBRATION_MARGIN * (top - runner_up)
    return 1.0 / (1.0 + math.exp(-z))


_CACHE_SIZE = 64
_cache: LruCache[str, LocalClassifier] = LruCache(_CACHE_SIZE)


def get_or_train(labelled: Mapping[str, Sequence[str]]) -> LocalClassifier:
    """A trained classifier for ``labelled``, reused while the labelled set is unchanged.

    Process-level LRU keyed by ``fingerprint``: a router's members rarely change, so a
    worker trains once per router version instead of once per turn.
    """
    # Trained outside the cache's lock: training may take a while.
    return _cache.get_or_build(fingerprint(labelled), lambda: LocalClassifier.train(labelled))
