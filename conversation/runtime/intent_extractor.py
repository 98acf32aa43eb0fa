"""Customer text -> ``ExtractedIntent``: deterministic fast path, then an injected LLM.

The LLM only produces typed data inside the closed ``IntentKind`` taxonomy; it never
decides. A classifier failure degrades to ``unknown``/``source="fallback"`` so the
turn falls through to the orchestrator instead of breaking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Literal, Protocol, get_args

from .consent import is_canonical_yes
from .state import ConversationState, InvoiceAnswer, ResolvedInvoiceItem, ToolKind
from .textnorm import canonical, last_digits, normalize_utterance, words

IntentKind = Literal[
    "start",
    "invoice_overview",
    "broad_invoice_complaint",
    "conceptual_question",
    "value_question",
    "action_request",
    "confirmation_response",
    "human_or_end",
    "off_context",
    "unknown",
]
IntentSource = Literal["rules", "llm", "fallback"]
INTENT_KINDS: tuple[str, ...] = get_args(IntentKind)
# ``start`` is a system sentinel (first turn before any customer message): never an LLM output.
LLM_INTENT_KINDS: tuple[str, ...] = tuple(k for k in INTENT_KINDS if k != "start")

# The closed schema a concrete classifier forces its tool call with.
INTENT_CLASSIFICATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": list(LLM_INTENT_KINDS)},
        "requested_action": {"type": "boolean"},
        "action_verbs": {"type": "array", "items": {"type": "string"}},
        "mentioned_items": {"type": "array", "items": {"type": "string"}},
        "affirmation": {"type": "boolean"},
        "negation": {"type": "boolean"},
        "rag_query": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["kind"],
    "additionalProperties": False,
}

# An end phrase is the message when, besides it, at most one word of content is left
# ("cancelar, obrigada") once courtesy and small talk are removed.
GOODBYE_MAX_CONTENT_WORDS = 1
_GOODBYE_SMALL_TALK = frozenset(
    [
        "e",
        "eh",
        "ok",
        "entao",
        "era",
        "so",
        "isso",
        "mesmo",
        "muito",
        "mto",
        "pela",
        "pelo",
        "a",
        "o",
        "as",
        "os",
        "ajuda",
        "atencao",
        "tudo",
        "bem",
        "certo",
        "beleza",
        "blz",
        "nao",
        "nada",
        "mais",
        "ate",
        "logo",
        "boa",
        "bom",
        "noite",
        "tarde",
        "dia",
        "valeu",
        "brigado",
        "brigada",
        "tchau",
        "obrigado",
        "obrigada",
        "por",
        "enquanto",
        "de",
        "novo",
        "voce",
        "vc",
        "viu",
        "foi",
        "ta",
        "otimo",
        "perfeito",
        "ai",
        "tenha",
        "uma",
        "me",
        "ajudou",
        "tchauzinho",
        "abraco",
        "abracos",
        "falou",
    ]
)
# "fui obrigado a pagar", "estou obrigada a": the adjective, not a thank-you.
_OBLIGED_BEFORE = frozenset(
    [
        "fui",
        "foi",
        "fomos",
        "sou",
        "somos",
        "e",
        "era",
        "estou",
        "esta",
        "estamos",
        "ser",
        "sendo",
        "fiquei",
        "ficou",
        "ficamos",
        "sinto",
        "me",
        "nos",
        "sera",
        "seria",
    ]
)
_OBLIGED_AFTER = frozenset({"a", "de", "pagar"})
_CANONICAL_NO = frozenset(canonical(n) for n in ("nao", "não", "negativo", "não quero"))


def is_goodbye(text: str, end_phrases: Sequence[str]) -> bool:
    """The amended end-phrase rule (DESIGN §10.2): whole words, and nothing else said."""
    said = words(text)
    if not said or "sim" in said:
        return False
    phrases = [words(p) for p in end_phrases]
    if not {p[0] for p in phrases if p} & set(said):
        return False  # no end phrase at all: the common case
    found = False
    for i in range(len(said)):
        for phrase in phrases:
            if said[i : i + len(phrase)] != phrase:
                continue
            if phrase[-1] in {"obrigado", "obrigada"} and (
                (i > 0 and said[i - 1] in _OBLIGED_BEFORE)
                or (i + 1 < len(said) and said[i + 1] in _OBLIGED_AFTER)
            ):
                continue  # "fui obrigado a pagar isso"
            found = True
    if not found:
        return False
    content = [w for w in said if w not in _GOODBYE_SMALL_TALK]
    return len(content) <= GOODBYE_MAX_CONTENT_WORDS


# Conversation window handed to the classifier (short on purpose: cost and focus).
HISTORY_WINDOW = 6
# Snapshot lines handed to the classifier (covers a multi-line family invoice).
SNAPSHOT_MAX_LINES = 20


@dataclass(frozen=True)
class ExtractedIntent:
    kind: IntentKind
    requested_action: bool = False
    action_verbs: tuple[str, ...] = ()
    mentioned_items: tuple[str, ...] = ()
    affirmation: bool = False
    negation: bool = False
    # Canonical RAG queries, one per concept ("tamboro o que é"); only for conceptual_question.
    rag_query: tuple[str, ...] = ()
    raw_text: str = ""
    source: IntentSource = "rules"

    @property
    def is_affirmation(self) -> bool:
        """A yes to a question. Routing only: affirmation wins when the classifier set both
        flags, and the confirmation guard then refuses the contradictory text (§10.1)."""
        return self.kind == "confirmation_response" and self.affirmation

    @property
    def is_contradictory(self) -> bool:
        """Both yes and no ("sim, quer dizer, não"): neither consumes anything."""
        return self.affirmation and self.negation

    @property
    def is_negation(self) -> bool:
        """A no to a question, with or without an action verb ("não, cancela esses")."""
        return self.kind == "confirmation_response" and self.negation and not self.affirmation


@dataclass(frozen=True)
class HistoryTurn:
    """One past message, as the turn pipeline hands it to ``try_handle``."""

    role: Literal["customer", "agent"]
    text: str


@dataclass(frozen=True)
class IntentClassifierContext:
    """Minimal turn context for the LLM classifier, derived from the state; read-only."""

    has_pending_confirmation: bool
    pending_confirmation_prompt: str | None
    last_tool_name: str | None
    last_tool_kind: ToolKind | None
    last_invoice_answer: InvoiceAnswer | None
    turn_index: int
    # Items already listed to the customer, rendered for the prompt ("nenhum" when empty).
    invoice_snapshot_items: str = "nenhum"
    conversation_history: tuple[HistoryTurn, ...] = ()


class IntentClassifierError(Exception):
    """The LLM classifier failed (timeout, parse, schema)."""


class IntentClassifierLLM(Protocol):
    """Closed-schema intent classifier. Implementations live outside the runtime."""

    def classify(
        self,
        user_text: str,
        *,
        context: IntentClassifierContext,
        callbacks: Sequence[Any] | None = None,
    ) -> Mapping[str, Any]:
        """Return a dict following ``INTENT_CLASSIFICATION_SCHEMA``.

        Raise ``IntentClassifierError`` on timeout, parse or schema failure.
        """
        ...


class IntentExtractor:
    AFFIRMATIONS = frozenset({"sim", "isso", "isso mesmo", "pode seguir", "correto", "confirmo"})
    NEGATIONS = frozenset({"nao", "não", "negativo", "nem", "não quero"})
    END_PHRASES = ("so isso", "só isso", "obrigado", "obrigada", "tchau")

    def __init__(self, llm_classifier: IntentClassifierLLM) -> None:
        self._llm_classifier = llm_classifier

    def extract(
        self,
        user_text: str,
        *,
        state: ConversationState,
        history: Sequence[HistoryTurn] = (),
        callbacks: Sequence[Any] | None = None,
    ) -> ExtractedIntent:
        """Classify ``user_text``; reads ``state`` (never mutates it)."""
        normalized = normalize_utterance(user_text)
        # 1. Fast path: canonical answers, no context and no network.
        fast_path = self._try_rules(normalized, user_text)
        if fast_path is not None:
            return fast_path
        # 2. LLM path with the previous turn's context.
        context = self._build_classifier_context(state, history)
        try:
            intent = self._classify_with_llm(user_text, context, callbacks)
        except IntentClassifierError:
            # 3. Degrade to the orchestrator; source marks it for telemetry.
            intent = ExtractedIntent(kind="unknown", raw_text=user_text, source="fallback")
        return _with_regulated_request(intent)

    def _try_rules(self, normalized: str, user_text: str) -> ExtractedIntent | None:
        # DESIGN §10.2 departs from the spec here: the spec matches end phrases as
        # substrings and lets them win over a yes. A canonical yes with a thank-you ("sim,
        # obrigado", a burst "sim" + "obrigado") is a yes, so it is read first; an end
        # phrase ends the conversation only when it is the message (the spec's "cancelar,
        # obrigada" still ends), never when it is a word of its content ("fui obrigado a
        # pagar", "caso isso continue").
        if is_canonical_yes(user_text):
            return ExtractedIntent(
                kind="confirmation_response", affirmation=True, raw_text=user_text, source="rules"
            )
        if is_goodbye(user_text, self.END_PHRASES):
            # "não, só isso, obrigada" also declines what was asked: the policy closes
            # without checking the pending request again.
            declines = bool(words(user_text)) and canonical(words(user_text)[0]) == "nao"
            return ExtractedIntent(
                kind="human_or_end", negation=declines, raw_text=user_text, source="rules"
            )
        if normalized in self.NEGATIONS or canonical(user_text) in _CANONICAL_NO:
            return ExtractedIntent(
                kind="confirmation_response", negation=True, raw_text=user_text, source="rules"
            )
        return None

    def _build_classifier_context(
        self,
        state: ConversationState,
        history: Sequence[HistoryTurn] = (),
    ) -> IntentClassifierContext:
        pending = state.pending_confirmation
        last = state.last_completed_action
        return IntentClassifierContext(
            has_pending_confirmation=pending is not None,
            pending_confirmation_prompt=pending.prompt_text if pending is not None else None,
            last_tool_name=last.tool if last is not None else None,
            last_tool_kind=last.tool_kind if last is not None else None,
            last_invoice_answer=state.last_invoice_answer,
            turn_index=state.turn_index,
            invoice_snapshot_items=render_snapshot(state.invoice_snapshot, state.msisdn),
            conversation_history=tuple(history[-HISTORY_WINDOW:]),
        )

    def _classify_with_llm(
        self,
        user_text: str,
        context: IntentClassifierContext,
        callbacks: Sequence[Any] | None = None,
    ) -> ExtractedIntent:
        result = self._llm_classifier.classify(user_text, context=context, callbacks=callbacks)
        # Post-hoc validation: a structured-output client can still drift.
        kind = result.get("kind") if isinstance(result, Mapping) else None
        if kind not in LLM_INTENT_KINDS:
            raise IntentClassifierError(f"kind outside the closed schema: {kind!r}")
        return ExtractedIntent(
            kind=kind,
            requested_action=bool(result.get("requested_action", False)),
            action_verbs=_str_or_list(result.get("action_verbs")),
            mentioned_items=_str_or_list(result.get("mentioned_items")),
            affirmation=bool(result.get("affirmation", False)),
            negation=bool(result.get("negation", False)),
            rag_query=_str_or_list(result.get("rag_query")),
            raw_text=user_text,
            source="llm",
        )


_REFUND_STEMS = ("devol", "reembols", "ressarc", "estorn", "restitu")
_DOUBLE = ("em dobro", "o dobro", "dobrado", "dobrada", "duas vezes")
DOUBLE_REFUND_VERB = "ressarcimento em dobro"


@lru_cache(maxsize=1024)
def asks_double_refund(text: str) -> bool:
    """A demand for a double refund, however worded ("me devolver em dobro", "meu dinheiro
    de volta em dobro", "reembolso em dobro"): the regulated refusal is owed (issue 11)."""
    if "dob" not in text.lower() and "duas vezes" not in text.lower():
        return False  # the common case, without splitting words
    said = words(text)
    form = f" {' '.join(said)} "
    doubled = any(f" {d} " in form for d in _DOUBLE)
    refund = " de volta " in form or any(w.startswith(_REFUND_STEMS) for w in said)
    return doubled and refund


def _with_regulated_request(intent: ExtractedIntent) -> ExtractedIntent:
    """A double-refund demand is a request the refusal script answers, whatever the
    classifier called it: the script is a regulated obligation, not a judgement call."""
    if not asks_double_refund(intent.raw_text):
        return intent
    verbs = intent.action_verbs
    if DOUBLE_REFUND_VERB not in verbs:
        verbs = (*verbs, DOUBLE_REFUND_VERB)
    return replace(intent, kind="action_request", requested_action=True, action_verbs=verbs)


def _str_or_list(value: Any) -> tuple[str, ...]:
    """Tolerate a single string where the schema says list; drop blanks and non-strings."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple):
        return ()
    return tuple(v.strip() for v in value if isinstance(v, str) and v.strip())


def render_snapshot(snapshot: Sequence[ResolvedInvoiceItem], msisdn: str) -> str:
    """Snapshot items for the classifier prompt: active line only, grouped by section."""
    items = [i for i in snapshot if not msisdn or i.msisdn == msisdn]
    if not items:
        return "nenhum"
    lines: list[str] = []
    current_section = None
    for item in sorted(items, key=lambda i: i.section):
        if item.section != current_section:
            current_section = item.section
            lines.append(f"{item.section}:")
        lines.append(f"- {item.canonical_name} (linha final {last_digits(item.msisdn)})")
    return "\n".join(lines[:SNAPSHOT_MAX_LINES])
