"""Reads behind the conversation pages: each list is a fixed number of queries, whatever
the number of rows (select_related / prefetch_related / annotate, never a query per row)."""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from accounts.access import scoped
from accounts.models import Membership
from conversation.models import (
    OUTBOX_IN_FLIGHT,
    Agent,
    ChannelSession,
    Conversation,
    ConversationStatus,
    Direction,
    Handoff,
    HandoffStatus,
    KnowledgeDocument,
    LlmCall,
    Message,
    MessageStatus,
    Provider,
    Turn,
)
from conversation.runtime_adapters.telemetry import outcomes_of_traces
from conversation.runtime_adapters.trace_view import (
    OutcomesView,
    outcomes_view,
    runtime_trace_view,
)

SIMULATOR_HISTORY = 200
# What the customer's phone shows: a reply still in the outbox is not on their screen yet.
DELIVERED_TO_CUSTOMER = (MessageStatus.SENT, MessageStatus.DELIVERED, MessageStatus.READ)


def conversation_list(membership: Membership, *, status: str = "") -> QuerySet[Conversation]:
    rows = scoped(Conversation.objects.select_related("contact", "channel"), membership)
    if status:
        rows = rows.filter(status=status)
    return rows.order_by("-last_message_at", "-created_at")


def open_handoff_count(membership: Membership) -> int:
    return scoped(Handoff.objects.filter(status=HandoffStatus.OPEN), membership).count()


# The conversation page shows the latest turns, this many at a time ("Ver turnos anteriores"
# brings the page before): a conversation with hundreds of turns stays light on a phone.
TURN_PAGE_SIZE = 20


@dataclass(frozen=True)
class TurnPage:
    """Which turns the page shows: ``number`` 1 is the latest ``TURN_PAGE_SIZE``."""

    number: int
    has_older: bool

    @property
    def has_newer(self) -> bool:
        return self.number > 1


@dataclass(frozen=True)
class ConversationDetail:
    conversation: Conversation
    # The latest messages (at most the caller's ``message_limit``), oldest first.
    messages: list[Message]
    # One page of turns, newest first, each with its LLM calls (``call_rows``).
    turns: list[Turn]
    # The model calls of those turns only, oldest first.
    llm_calls: list[LlmCall]
    open_handoff_id: Any
    turn_page: TurnPage
    # The runtime's figures over all of this conversation's turns (None: it never ran here).
    runtime_outcomes: OutcomesView | None = None


def detail_conversations() -> QuerySet[Conversation]:
    """The conversation page's own read of the conversation: with its contact, channel and
    channel agent, and the id of its open handoff (at most one: ``uniq_open_handoff``)."""
    open_handoff = Handoff.objects.filter(
        conversation=OuterRef("pk"), status=HandoffStatus.OPEN
    ).values("pk")[:1]
    return Conversation.objects.select_related("contact", "channel", "channel__agent").annotate(
        open_handoff_id=Subquery(open_handoff)
    )


def conversation_detail(
    conversation: Conversation, *, message_limit: int, turn_page: int = 1
) -> ConversationDetail:
    """What the conversation page shows, and nothing more, whatever the conversation's
    length: the latest ``message_limit`` messages, one page of turns (newest first) with
    their LLM calls, and the runtime's figures of every turn (its trace entries only). Four
    queries — five when the page's turns ran the runtime (the replies they sent) — with
    ``conversation`` read through ``detail_conversations``."""
    messages = list(
        conversation.messages.select_related("sent_by").order_by("-created_at", "-pk")[
            :message_limit
        ]
    )
    messages.reverse()
    start = (turn_page - 1) * TURN_PAGE_SIZE
    turns = list(
        conversation.turns.select_related("agent_version", "agent_version__agent").order_by(
            "-created_at", "-pk"
        )[start : start + TURN_PAGE_SIZE + 1]  # one more: are there older turns?
    )
    page = TurnPage(number=turn_page, has_older=len(turns) > TURN_PAGE_SIZE)
    turns = turns[:TURN_PAGE_SIZE]
    turn_ids = [t.pk for t in turns]
    calls = list(
        conversation.llm_calls.filter(turn_id__in=turn_ids).order_by("created_at", "pk")
        if turn_ids
        else []
    )
    by_turn: dict[Any, list[LlmCall]] = {}
    for call in calls:
        by_turn.setdefault(call.turn_id, []).append(call)
    sent = _sent_by_runtime_turns([t.pk for t in turns if _has_runtime(t.trace)])
    for turn in turns:
        turn.call_rows = by_turn.get(turn.pk, [])  # type: ignore[attr-defined]
        turn.trace_rows = trace_rows(turn.trace)  # type: ignore[attr-defined]
        turn.runtime_view = runtime_trace_view(turn.trace)  # type: ignore[attr-defined]
        turn.sent_rows = sent.get(turn.pk, [])  # type: ignore[attr-defined]
    # The figures need only each turn's ``runtime`` entry: no whole trace, no Turn row.
    entries = (
        conversation.turns.filter(trace__has_key="runtime")
        .order_by()
        .values_list("trace__runtime", flat=True)
    )
    runtime = outcomes_of_traces({"runtime": entry} for entry in entries)
    return ConversationDetail(
        conversation=conversation,
        messages=messages,
        turns=turns,
        llm_calls=calls,
        open_handoff_id=_open_handoff_id(conversation),
        turn_page=page,
        runtime_outcomes=outcomes_view(runtime) if runtime.turns else None,
    )


def _open_handoff_id(conversation: Conversation) -> Any:
    if hasattr(conversation, "open_handoff_id"):  # read with ``detail_conversations``
        return conversation.open_handoff_id
    handoffs = conversation.handoffs.filter(status=HandoffStatus.OPEN)
    return handoffs.values_list("pk", flat=True).first()


def _has_runtime(trace: Any) -> bool:
    return isinstance(trace, dict) and bool(trace.get("runtime"))


def _sent_by_runtime_turns(turn_ids: list[Any]) -> dict[Any, list[Message]]:
    """The replies each runtime turn sent (next to the runtime's decision): one query, and
    none when the page shows no runtime turn."""
    if not turn_ids:
        return {}
    rows = Message.objects.filter(turn_id__in=turn_ids, direction=Direction.OUTBOUND).order_by(
        "created_at", "pk"
    )
    sent: dict[Any, list[Message]] = {}
    for message in rows:
        sent.setdefault(message.turn_id, []).append(message)
    return sent


def handoff_inbox(membership: Membership) -> QuerySet[Handoff]:
    return scoped(
        Handoff.objects.filter(status=HandoffStatus.OPEN).select_related(
            "conversation__contact",
            "conversation__channel",
            "conversation__assigned_to__user",  # who took it: nobody takes it twice
        ),
        membership,
    ).order_by("-last_activity_at", "-created_at")


def conversation_messages(conversation: Conversation, *, limit: int = 200) -> list[Message]:
    """The latest ``limit`` messages, oldest first."""
    rows = list(conversation.messages.select_related("sent_by").order_by("-created_at")[:limit])
    rows.reverse()
    return rows


def agent_list(membership: Membership) -> QuerySet[Agent]:
    return scoped(
        Agent.objects.select_related("published_version").annotate(
            version_count=Count("versions", distinct=True),
            channel_count=Count("channels", distinct=True),
        ),
        membership,
    ).order_by("name")


def agent_versions(agent: Agent) -> list[Any]:
    return list(agent.versions.select_related("created_by").order_by("-number"))


def knowledge_list(membership: Membership) -> QuerySet[KnowledgeDocument]:
    return scoped(KnowledgeDocument.objects.defer("body"), membership).order_by("title")


def simulator_channels(membership: Membership) -> QuerySet[ChannelSession]:
    return scoped(
        ChannelSession.objects.filter(provider=Provider.SIMULATOR, is_active=True).select_related(
            "agent"
        ),
        membership,
    ).order_by("name")


# --- the simulator's chat, seen from the customer's phone -----------------------------------


@dataclass(frozen=True)
class SimulatorChat:
    conversation: Conversation | None
    messages: list[Message]
    typing: bool
    # Changes whenever what the phone shows changes: the poll answers 204 while it holds.
    version: str


def simulator_chat(channel: ChannelSession, phone: str) -> SimulatorChat:
    """The open conversation of ``phone`` on ``channel``, as the customer sees it. Two queries."""
    conversation = (
        Conversation.objects.filter(channel=channel, contact__phone=phone)
        .exclude(status=ConversationStatus.CLOSED)
        .first()
    )
    if conversation is None:
        return SimulatorChat(None, [], False, "empty")
    rows = list(
        conversation.messages.only(
            "id", "direction", "sender_kind", "body", "status", "turn_id", "created_at"
        ).order_by("-created_at")[:SIMULATOR_HISTORY]
    )
    rows.reverse()
    last_inbound = next((m for m in reversed(rows) if m.direction == Direction.INBOUND), None)
    # The AI is "typing" while the customer's last line has no turn yet or a reply is
    # still on its way through the outbox.
    typing = (last_inbound is not None and last_inbound.turn_id is None) or any(
        m.direction == Direction.OUTBOUND and m.status in OUTBOX_IN_FLIGHT for m in rows
    )
    shown = [
        m for m in rows if m.direction == Direction.INBOUND or m.status in DELIVERED_TO_CUSTOMER
    ]
    digest = hashlib.sha256(
        "|".join([*(f"{m.pk}:{m.status}" for m in shown), str(typing)]).encode()
    ).hexdigest()[:16]
    return SimulatorChat(conversation, shown, typing, digest)


def default_simulator_phone(user_id: int) -> str:
    """A stable fake customer number per back-office user: 55 11 9 + the id on 8 digits."""
    return f"55119{user_id % 10**8:08d}"


def fresh_simulator_phone() -> str:
    """A new fake customer: a new number means a new contact and a new conversation."""
    return f"55119{secrets.randbelow(10**8):08d}"


# --- the decision trace, made readable -------------------------------------------------------


@dataclass(frozen=True)
class TraceRow:
    key: str
    label: str | Promise
    value: str


TRACE_LABELS: dict[str, Any] = {
    "batch": _("Mensagens no lote"),
    "merged": _("Agrupada na próxima"),
    "guard": _("Guarda"),
    "route": _("Roteamento"),
    "agent_id": _("Agente"),
    "agent_version_id": _("Versão do agente"),
    "runtime": _("Runtime"),
    "loop": _("Orquestrador"),
    "vetoes": _("Vetos"),
    "knowledge_hits": _("Base de conhecimento"),
    "handoff": _("Transbordo"),
    "followups_cancelled": _("Acompanhamentos cancelados"),
    "cases_opened": _("Casos abertos"),
    "budget": _("Orçamento de modelo"),
    "gave_up": _("Desistência"),
}
GUARD_LABELS: dict[str, Any] = {
    "opt_out": _("descadastro"),
    "opt_in": _("recadastro"),
    "opted_out": _("contato descadastrado"),
    "human_owned": _("conversa com humano"),
    "handoff_keyword": _("palavra de transbordo"),
    "staff_case_answer": _("resposta da equipe a um caso"),
}


def trace_rows(trace: Any) -> list[TraceRow]:
    """One readable row per trace key, known keys first in pipeline order; keys added by
    later pipeline stages still show, as compact JSON."""
    if not isinstance(trace, dict):
        return []
    order = {key: i for i, key in enumerate(TRACE_LABELS)}
    keys = sorted(trace, key=lambda k: (order.get(k, len(order)), k))
    return [
        TraceRow(key, TRACE_LABELS.get(key, key), _trace_value(key, trace[key])) for key in keys
    ]


def _trace_value(key: str, value: Any) -> str:
    if key == "guard" and isinstance(value, str):
        return str(GUARD_LABELS.get(value, value))
    if key == "loop" and isinstance(value, dict):
        calls = value.get("calls") or []
        tools = ", ".join(
            f"{c.get('tool')}{' ✗' if c.get('error') else ''}" for c in calls if isinstance(c, dict)
        )
        parts = [
            f"{_('passos')}: {value.get('steps', 0)}",
            f"{_('parada')}: {value.get('stop', '')}",
            f"{_('ferramentas')}: {tools or '—'}",
        ]
        if value.get("error"):
            parts.append(f"{_('erro')}: {value['error']}")
        if value.get("discarded_text_chars"):
            parts.append(f"{_('texto descartado')}: {value['discarded_text_chars']}")
        return " · ".join(parts)
    if key == "knowledge_hits" and isinstance(value, list):
        searches = [
            ", ".join(str(i) for i in hits) if isinstance(hits, list) and hits else "—"
            for hits in value
        ]
        return " | ".join(f"#{n}: {ids}" for n, ids in enumerate(searches, start=1))
    if isinstance(value, list):
        return ", ".join(_scalar(v) for v in value) or "—"
    if isinstance(value, dict):
        return " · ".join(f"{k}: {_scalar(v)}" for k, v in value.items()) or "—"
    return _scalar(value)


def _scalar(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(_("sim") if value else _("não"))
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
