"""Shared fakes and fixtures for the runtime tests (pure Python: no Django, no database)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from conversation.runtime import Channel, DemoBackend
from conversation.runtime.intent_extractor import IntentClassifierContext, IntentClassifierError
from conversation.runtime.item_matcher import ItemMatcherError
from conversation.runtime.runtime import ConversationRuntime, build_runtime

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "runtime"
LINE_A = "11987654321"  # final 4321
LINE_B = "11912345678"  # final 5678

# What the LLM classifier would return for the utterances the scenarios use.
CANNED: dict[str, dict[str, Any]] = {
    "quero cancelar o VOD e o HBO Max": {
        "kind": "action_request",
        "requested_action": True,
        "action_verbs": ["cancelar"],
        "mentioned_items": ["VOD", "HBO Max"],
    },
    "me explica essa fatura": {"kind": "invoice_overview"},
    "o que é esse tal de tamboro?": {
        "kind": "conceptual_question",
        "rag_query": ["tamboro o que é"],
    },
    "e o jogo do Corinthians ontem?": {"kind": "off_context"},
    "quero ressarcimento em dobro do VOD": {
        "kind": "action_request",
        "requested_action": True,
        "action_verbs": ["ressarcimento em dobro"],
        "mentioned_items": ["VOD"],
    },
    "cancela o aya": {
        "kind": "action_request",
        "requested_action": True,
        "action_verbs": ["cancelar"],
        "mentioned_items": ["aya"],
    },
    "cancela o xyzflix": {
        "kind": "action_request",
        "requested_action": True,
        "action_verbs": ["cancelar"],
        "mentioned_items": ["xyzflix"],
    },
    "cancela o deezer": {
        "kind": "action_request",
        "requested_action": True,
        "action_verbs": ["cancelar"],
        "mentioned_items": ["deezer"],
    },
    "não contratei isso": {"kind": "confirmation_response", "negation": True},
    "não, cancela o tamboro": {
        "kind": "confirmation_response",
        "negation": True,
        "requested_action": True,
        "action_verbs": ["cancelar"],
        "mentioned_items": ["Tamboro"],
    },
    "ok, pode": {"kind": "confirmation_response", "affirmation": True},
    "quanto está a fatura?": {"kind": "value_question"},
    "por que a fatura veio alta?": {"kind": "broad_invoice_complaint"},
}
KNOWLEDGE = {
    "tamboro": "Tamboro é uma plataforma de jogos educativos para crianças, cobrada por mês.",
}


class ScriptedClassifier:
    """Fake ``IntentClassifierLLM``: canned dicts by exact text; records every call."""

    def __init__(
        self,
        outputs: Mapping[str, Mapping[str, Any] | Exception] | None = None,
        default: Mapping[str, Any] | Exception | None = None,
    ) -> None:
        self.outputs = dict(CANNED if outputs is None else outputs)
        self.default = default
        self.calls: list[tuple[str, IntentClassifierContext]] = []

    def classify(
        self,
        user_text: str,
        *,
        context: IntentClassifierContext,
        callbacks: Sequence[Any] | None = None,
    ) -> Mapping[str, Any]:
        self.calls.append((user_text, context))
        out = self.outputs.get(user_text, self.default)
        if isinstance(out, Exception):
            raise out
        if out is None:
            raise IntentClassifierError("no canned answer")
        return out


class ScriptedMatcher:
    """Fake ``ItemMatcherLLM``: canned candidate picks by mention; records calls."""

    def __init__(self, picks: Mapping[str, list[str] | Exception] | None = None) -> None:
        self.picks = dict(picks or {})
        self.calls: list[tuple[str, list[str]]] = []

    def match(
        self, mention: str, candidates: Sequence[str], *, callbacks: Sequence[Any] | None = None
    ) -> list[str]:
        self.calls.append((mention, list(candidates)))
        out = self.picks.get(mention, [])
        if isinstance(out, Exception):
            raise out
        return out


class FixedClock:
    def __init__(self, at: datetime | None = None) -> None:
        self.at = at or datetime(2025, 3, 1, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.at


def load_invoice() -> dict[str, Any]:
    data = json.loads((FIXTURES / "demo_invoice.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture
def invoice() -> dict[str, Any]:
    return load_invoice()


@pytest.fixture
def backend(invoice: dict[str, Any]) -> DemoBackend:
    return DemoBackend(invoice, knowledge=KNOWLEDGE)


@pytest.fixture
def classifier() -> ScriptedClassifier:
    return ScriptedClassifier()


RuntimeFactory = Callable[..., ConversationRuntime]


@pytest.fixture
def make_runtime(backend: DemoBackend, classifier: ScriptedClassifier) -> RuntimeFactory:
    def make(**kwargs: Any) -> ConversationRuntime:
        kwargs.setdefault("classifier", classifier)
        kwargs.setdefault("backend", backend)
        kwargs.setdefault("channel", Channel.TEXT)
        kwargs.setdefault("clock", FixedClock())
        return build_runtime(**kwargs)

    return make


def context_for(backend: DemoBackend, **extra: Any) -> dict[str, Any]:
    ctx: dict[str, Any] = {
        "session_id": "conv-1",
        "msisdn": LINE_A,
        "invoice_detail": backend.invoice_detail,
    }
    ctx.update(extra)
    return ctx


# Re-exported for test modules.
__all__ = [
    "CANNED",
    "KNOWLEDGE",
    "LINE_A",
    "LINE_B",
    "FixedClock",
    "ItemMatcherError",
    "RuntimeFactory",
    "ScriptedClassifier",
    "ScriptedMatcher",
    "context_for",
    "load_invoice",
]
