"""One turn of the conversation runtime (``conversation/runtime``), as the turn runs it.

``runtime_step`` builds the runtime for the turn's agent from its adapters
(``conversation/runtime_adapters``: classifiers, backend, state store), calls
``try_handle`` and returns a ``RuntimeStep``: the decision trace (ids and codes only), the
reply to send when the runtime answered, and the note for the orchestrator when it did
not — or when the reply is vetoed before it reaches the customer (``runtime_note``). The
pipeline sends the reply through ``tools.send_through_gates``, then calls ``commit`` so
the state and the action log are written only for what happened.

Modes (``AgentVersion.runtime_mode``):

- ``on``: the runtime answers the turns it covers; its state lives under the ``live`` key.
- ``shadow``: the runtime decides on a dry-run backend (no action is executed) and the
  decision goes on the trace; the orchestrator answers as if the runtime were off, without
  the runtime's note. The shadow state is kept under its own ``shadow`` key, so a shadow
  dialogue can follow several turns ("sim" after its own confirmation) without ever
  steering the live one.

``CONVERSATION_RUNTIME_ENABLED`` off (the kill switch) skips the runtime entirely.
"""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Callable, Iterable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Subquery
from django.utils import timezone

from conversation import model_calls
from conversation.agents import AgentConfig
from conversation.models import (
    Conversation,
    Direction,
    Message,
    RuntimeMode,
    RuntimeProfile,
    SenderKind,
    Turn,
    TurnOutcome,
)
from conversation.runtime import (
    Channel,
    FuzzyItemMatcher,
    HistoryTurn,
    IntentClassifierLLM,
    ItemMatcherLLM,
    RuntimeResult,
    ToolBackend,
    build_runtime,
)
from conversation.runtime.consent import awaits_answer, note_unseen_turn
from conversation.runtime.intent_extractor import HISTORY_WINDOW
from conversation.runtime.script_catalog import ScriptCatalog
from conversation.runtime.spans import recording_spans
from conversation.runtime_adapters.backends import (
    DemoInvoiceBackend,
    DryRunBackend,
    KnowledgeSearch,
    RecordingBackend,
    cancelled_by_contact,
)
from conversation.runtime_adapters.billing_http import (
    BillingError,
    HttpBillingBackend,
    billing_config,
)
from conversation.runtime_adapters.classifiers import LlmIntentClassifier, LlmItemMatcher
from conversation.runtime_adapters.invoices import (
    InvoiceError,
    contact_invoice,
    primary_msisdn,
    validate_invoice,
)
from conversation.runtime_adapters.offline import OfflineIntentClassifier
from conversation.runtime_adapters.store import ConversationFieldStore

# The notes live in ``runtime_note``; the turn (and its tests) import them from here too.
from .runtime_note import DIRECTIVE_HEADER as DIRECTIVE_HEADER
from .runtime_note import NOTE_HEADER as NOTE_HEADER
from .runtime_note import actions_note, orchestrator_note
from .runtime_note import with_orchestrator_note as with_orchestrator_note

log = logging.getLogger(__name__)

SCRIPT_ID_MAX = 80  # Message.script_id


@dataclass(frozen=True)
class RuntimeReply:
    text: str
    script_id: str = ""  # catalog script ids said in ``text`` (comma-separated), if any
    script_version: str = ""  # the catalog version they came from


@dataclass
class RuntimeStep:
    mode: str
    trace: dict[str, Any]
    reply: RuntimeReply | None = None
    # Appended to the customer's message for the orchestrator's call (never stored).
    orchestrator_note: str = ""
    _commit: Callable[[bool], Callable[[], None]] | None = field(default=None, repr=False)

    def commit(self, *, answered: bool) -> Callable[[], None]:
        """What the turn made real: the action log always, the state unless the reply was
        vetoed before it reached the customer (and nothing was executed). Decided (and
        traced) now; returns the write, which the turn's finish runs with its other
        effects (the turn decides with no transaction open: ``pipeline``)."""
        commit, self._commit = self._commit, None
        return commit(answered) if commit is not None else _nothing


def _nothing() -> None:
    return None


@functools.cache
def script_catalog() -> ScriptCatalog:
    """The canonical scripts, loaded and validated once per process."""
    return ScriptCatalog()


def runtime_applies(agent: AgentConfig) -> bool:
    return agent.runtime_profile == RuntimeProfile.INVOICE_SUPPORT and agent.runtime_mode in (
        RuntimeMode.ON,
        RuntimeMode.SHADOW,
    )


def runtime_step(
    *,
    conversation: Conversation,
    turn: Turn,
    agent: AgentConfig,
    text: str,
    batch_ids: Iterable[uuid.UUID],
    ledger: model_calls.Ledger,
) -> RuntimeStep | None:
    """Run the runtime for this turn; None when the agent version has no runtime."""
    if not runtime_applies(agent):
        return None
    mode = agent.runtime_mode
    trace: dict[str, Any] = {"mode": mode}
    if not settings.CONVERSATION_RUNTIME_ENABLED:
        trace["skipped"] = "kill_switch"
        return RuntimeStep(mode=mode, trace=trace)
    try:
        # The turn decides with no transaction open (its network calls must not hold one:
        # ``pipeline``); inside a caller's transaction, a savepoint keeps it usable whatever
        # fails in here.
        guard = (
            transaction.atomic() if transaction.get_connection().in_atomic_block else nullcontext()
        )
        with guard:
            return _run(conversation, turn, agent, text, list(batch_ids), ledger, trace)
    except Exception:
        log.exception(
            "conversation runtime failed",
            extra={"conversation_id": str(conversation.pk), "turn_id": str(turn.pk)},
        )
        trace.update(handled=False, error="runtime_error")
        return RuntimeStep(mode=mode, trace=trace)


def _run(
    conversation: Conversation,
    turn: Turn,
    agent: AgentConfig,
    text: str,
    batch_ids: list[uuid.UUID],
    ledger: model_calls.Ledger,
    trace: dict[str, Any],
) -> RuntimeStep:
    live = agent.runtime_mode == RuntimeMode.ON
    knowledge_search = KnowledgeSearch(conversation.organization_id)
    invoice, base = _invoice_and_backend(conversation, knowledge_search, trace)
    if invoice is None or base is None:
        # No invoice, no runtime: "não localizei o serviço" would be a lie.
        trace.update(handled=False, fallback_reason="invoice_unavailable")
        return RuntimeStep(mode=agent.runtime_mode, trace=trace)

    store = ConversationFieldStore(conversation, key="live" if live else "shadow")
    if live:
        _note_unseen_turn(conversation, store, batch_ids, trace)
    recording: RecordingBackend | None = None
    dry_run: DryRunBackend | None = None
    backend: ToolBackend
    if live:
        backend = recording = RecordingBackend(base, name=base.name)
    else:
        backend = dry_run = DryRunBackend(base)
    ids = model_calls.record_context(
        organization_id=conversation.organization_id,
        conversation_id=conversation.pk,
        turn_id=turn.pk,
    )
    classifier, matcher, classifier_kind = _classifiers(agent, ledger, ids)
    runtime = build_runtime(
        classifier=classifier,
        backend=backend,
        channel=Channel.TEXT,
        matcher=matcher,
        state_store=store,
        catalog=script_catalog(),
    )
    history = _history(conversation, batch_ids) if classifier_kind == "llm" else []
    context: dict[str, Any] = {
        "session_id": store.session_id,
        "msisdn": primary_msisdn(invoice, conversation.contact.phone),
        "invoice_detail": invoice,
    }
    # The spec's per-hook spans (``conversation.hook.<name>`` with the state diff).
    with recording_spans() as spans:
        result = runtime.try_handle(user_text=text, context=context, history=history)

    state = store.load(context)
    last = state.decision_trace[-1] if state.decision_trace else {}
    trace.update(
        handled=result.handled,
        decision=result.decision,
        rule=result.rule,
        intent=last.get("intent"),
        source=last.get("source"),
        fallback_reason=result.fallback_reason,
        scripts=[
            {"script_id": s.script_id, "catalog_version": s.catalog_version} for s in result.scripts
        ],
        state=store.origin,
        classifier=classifier_kind,
        backend=backend_name(recording, dry_run),
    )
    if result.finalization:
        trace["finalization"] = result.finalization.get("status")
    if recording is not None and recording.records:
        trace["actions"] = [{"tool": r.tool, "outcome": r.outcome} for r in recording.records]
    if dry_run is not None and dry_run.simulated:
        trace["actions"] = [{"tool": t, "outcome": "simulated"} for t in dry_run.simulated]
    if knowledge_search.hit_ids:
        trace["knowledge_hits"] = list(knowledge_search.hit_ids)
    trace["hooks"] = [span.as_trace() for span in spans]

    reply = _reply(result) if live else None
    note = ""
    # The offline orchestrator follows rules, not instructions: the note would only
    # pollute the text it searches the knowledge base with.
    instructable = model_calls.provider_name(agent.provider) != "offline"
    if live and not result.handled:
        trace["directive"] = bool(result.orchestrator_directive)
        if instructable:
            note = orchestrator_note(result)
        trace["note"] = bool(note)
    elif reply is not None and result.actions and instructable:
        # Used only if a gate vetoes the reply (the pipeline): the orchestrator then writes
        # the reply, and must know what really ran against the backend, with its result.
        note = actions_note(result.actions, state.to_prompt_context())

    def commit(answered: bool) -> Callable[[], None]:
        executed = len(recording.records) if recording else 0
        discarded = reply is not None and not answered and not executed
        if discarded:
            trace["state_discarded"] = True

        def write() -> None:
            if recording is not None:
                recording.flush(conversation=conversation, turn=turn)
            if not discarded:
                store.persist()

        return write

    return RuntimeStep(
        mode=agent.runtime_mode,
        trace=trace,
        reply=reply,
        orchestrator_note=note,
        _commit=commit,
    )


# A question of the runtime older than this is asked again before a "sim" acts on it: an
# invoice, a price or the customer's mind may have changed since.
QUESTION_MAX_AGE = timedelta(hours=24)


def _note_unseen_turn(
    conversation: Conversation,
    store: ConversationFieldStore,
    batch_ids: list[uuid.UUID],
    trace: dict[str, Any],
) -> None:
    """DESIGN §10.1: a question is answered only by the customer's next message to the
    runtime. If anything was said since the runtime's last reply — a staff message, a
    human-owned or handoff turn, the kill switch, a billing outage or runtime error (the
    orchestrator answered), a case-reply or follow-up turn — the runtime is told, and its
    next yes asks again instead of acting (``conversation.runtime.consent``). One query,
    only while the runtime waits for an answer."""
    state = store.load({})
    if not awaits_answer(state):
        return
    first_line = (
        Message.objects.filter(pk__in=batch_ids).order_by("created_at").values("created_at")[:1]
    )
    previous = (
        Message.objects.filter(conversation=conversation)
        .exclude(pk__in=batch_ids)
        .exclude(direction=Direction.INBOUND, turn__isnull=True)  # lines typed after the batch
        .annotate(batch_from=Subquery(first_line))
        .order_by("-created_at")
        .values_list("sender_kind", "turn__outcome", "created_at", "batch_from")
        .first()
    )
    reason = "unseen_turn"
    if previous is not None and previous[:2] == (SenderKind.AI, TurnOutcome.RUNTIME):
        asked_at, typed_from = previous[2], previous[3]
        if typed_from is not None and typed_from < asked_at:
            # Typed before the question was even stored (a second "sim" tapped while the
            # turn ran): it answers the question before, not this one.
            reason = "typed_before_question"
        elif timezone.now() - asked_at > QUESTION_MAX_AGE:
            reason = "stale_question"  # consent from another day acts on nothing: ask again
        else:
            return  # the customer answers the runtime's own last reply
    store.save({}, note_unseen_turn(state, reason))
    trace["unseen_turn"] = True
    if reason != "unseen_turn":
        trace["unseen_reason"] = reason


def backend_name(recording: RecordingBackend | None, dry_run: DryRunBackend | None) -> str:
    if recording is not None:
        return recording.name
    return DryRunBackend.name if dry_run is not None else ""


def _invoice_and_backend(
    conversation: Conversation,
    knowledge_search: KnowledgeSearch,
    trace: dict[str, Any],
) -> tuple[Mapping[str, Any] | None, DemoInvoiceBackend | HttpBillingBackend | None]:
    config = billing_config()
    if config is None:
        found = contact_invoice(
            organization_id=conversation.organization_id, contact_id=conversation.contact_id
        )
        if found is None:
            return None, None
        trace["invoice"] = found.source
        backend = DemoInvoiceBackend(
            found.detail,
            knowledge_search=knowledge_search,
            cancelled=cancelled_by_contact(conversation),
        )
        return found.detail, backend
    http = HttpBillingBackend(
        config, knowledge_search=knowledge_search, idempotency_scope=str(conversation.pk)
    )
    try:
        detail = validate_invoice(http.fetch_invoice(conversation.contact.phone))
    except BillingError as exc:
        trace["invoice_error"] = exc.code
        return None, None
    except InvoiceError:
        trace["invoice_error"] = "billing_bad_response"
        return None, None
    trace["invoice"] = "billing"
    return detail, http


def _classifiers(
    agent: AgentConfig, ledger: model_calls.Ledger, ids: Mapping[str, str]
) -> tuple[IntentClassifierLLM, ItemMatcherLLM, str]:
    """The model's classifiers when the agent has a model; the offline ones otherwise."""
    provider = model_calls.provider_name(agent.provider)
    if provider == "offline":
        return OfflineIntentClassifier(), FuzzyItemMatcher(), "offline"
    ledger.provider = provider
    client = model_calls.model_client(ledger, provider=agent.provider)
    return (
        LlmIntentClassifier(client, model=agent.model, context=ids),
        LlmItemMatcher(client, model=agent.model, context=ids),
        "llm",
    )


def _history(conversation: Conversation, batch_ids: list[uuid.UUID]) -> list[HistoryTurn]:
    """The classifier's short window of earlier messages. One query."""
    rows = list(
        Message.objects.filter(conversation=conversation)
        .exclude(pk__in=batch_ids)
        .order_by("-created_at")
        .only("direction", "body")[:HISTORY_WINDOW]
    )
    return [
        HistoryTurn(role="customer" if m.direction == Direction.INBOUND else "agent", text=m.body)
        for m in reversed(rows)
        if m.body
    ]


def _reply(result: RuntimeResult) -> RuntimeReply | None:
    if not result.handled or not (result.content or "").strip():
        return None
    ids = list(dict.fromkeys(s.script_id for s in result.scripts))
    script_id = ""
    for script in ids:  # keep whole ids only, within the column's length
        candidate = f"{script_id},{script}" if script_id else script
        if len(candidate) > SCRIPT_ID_MAX:
            break
        script_id = candidate
    version = result.scripts[0].catalog_version if result.scripts else ""
    text = str(result.content).strip()
    return RuntimeReply(text=text, script_id=script_id, script_version=version)
