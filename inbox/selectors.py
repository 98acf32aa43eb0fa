"""The inbox's reads: the conversation list with its views, search and filters; the
member's own queue; the conversation panel and the contact profile.

Search: contact name or phone (``icontains``) or message text — PostgreSQL full-text
search in Portuguese (``to_tsvector('portuguese', body)``, the GIN index of migration
``inbox.0002``), ``icontains`` on SQLite. In a tenant context (every request and task) the
text match goes through the door ``app_message_search`` (``inbox.search_sql``), the only
way the index can serve the application role. Every list costs a fixed number of queries.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db import connections
from django.db.models import (
    BooleanField,
    Exists,
    ExpressionWrapper,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
)
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts import rls
from accounts.access import scoped
from accounts.models import Membership, Role, display_name
from conversation import selectors as conversation_selectors
from conversation.models import (
    OUTBOX_IN_FLIGHT,
    Agent,
    ChannelSession,
    Contact,
    Conversation,
    Direction,
    Handoff,
    HandoffStatus,
    Message,
    MessageStatus,
)
from conversation.outbox import OutboxPolicy
from inbox.models import CannedReply, ConversationLabel, InternalNote, Label, ReadMarker

SEARCH_CONFIG = "portuguese"
# The door's cap: the newest matching messages it returns (a word in every message must not
# turn one search into a list of all of them). Past it the oldest matches are not searched.
SEARCH_MAX_MESSAGES = 2000
MIN_PHONE_DIGITS = 4


class View:
    """The three list views (query value ``ver``)."""

    MINE = "minhas"
    UNASSIGNED = "sem-responsavel"
    ALL = "todas"


@dataclass(frozen=True)
class ConversationFilters:
    view: str = View.ALL
    q: str = ""
    status: str = ""
    channel_id: uuid.UUID | None = None
    agent_id: uuid.UUID | None = None
    assignee_id: uuid.UUID | None = None
    label_id: uuid.UUID | None = None


def _uses_postgres() -> bool:
    return connections[Message.objects.db].vendor == "postgresql"


def message_matches(organization_id: Any, q: str) -> QuerySet[Message]:
    """The messages whose text matches ``q``: Portuguese full-text search (stems, so
    "boleto" finds "boletos") on PostgreSQL, a substring on SQLite.

    PostgreSQL, in this organization's tenant context: the ids come from the door
    ``app_message_search`` (the GIN index, at most ``SEARCH_MAX_MESSAGES`` newest matches),
    still one subquery of the caller's query. Outside one — owner sessions with the walls
    lifted: fixtures, seed, an operator's shell — the same match as a plain filter (the
    door admits only the context's organization; this one the policy still binds)."""
    rows = Message.objects.filter(organization_id=organization_id)
    if not _uses_postgres():
        return rows.filter(body__icontains=q)
    current = rls.current_organization_id()
    if current is not None and str(current) == str(organization_id):
        door = RawSQL("SELECT app_message_search(%s, %s)", (q, SEARCH_MAX_MESSAGES))
        return rows.filter(pk__in=door)
    # The very expression of the GIN index ``msg_body_fts_pt`` (inbox.0002) and the door's.
    return rows.annotate(
        search=SearchVector("body", config=SEARCH_CONFIG),
    ).filter(search=SearchQuery(q, config=SEARCH_CONFIG, search_type="websearch"))


def _search(rows: QuerySet[Conversation], organization_id: Any, q: str) -> QuerySet[Conversation]:
    match = Q(contact__name__icontains=q) | Q(contact__phone__icontains=q)
    digits = re.sub(r"\D", "", q)
    if len(digits) >= MIN_PHONE_DIGITS and digits != q:  # "(11) 98888-7777"
        match |= Q(contact__phone__contains=digits)
    hits = message_matches(organization_id, q).values("conversation_id")
    return rows.filter(match | Q(pk__in=hits))


def _undelivered() -> ExpressionWrapper:
    """A reply of the conversation that has not reached the customer and that the outbox
    gave up on: ``failed`` (at the retry horizon, refused by the provider, reported failed),
    or still in the chain a whole ``OUTBOX_RETRY_HORIZON_S`` after it was queued (a reply
    failed at its horizon is re-sent by itself in new rounds while the channel is probed, so
    it is ``queued`` most of that time). Replies written before staff last resolved the
    conversation do not count: they have been dealt with. The row asks for attention until
    the reply goes out (by itself, or "Reenviar") or staff resolve the conversation. Two
    ``EXISTS`` per listed row, on the conversation's own messages (``msg_conv_created``,
    ``msg_outbox_chain``)."""
    outbound = Message.objects.filter(
        conversation=OuterRef("pk"),
        direction=Direction.OUTBOUND,
        # Since the last resolve (a conversation's messages are never older than it).
        created_at__gte=Coalesce(OuterRef("resolved_at"), OuterRef("created_at")),
    )
    waited_since = timezone.now() - OutboxPolicy.current().horizon
    stuck = outbound.filter(status__in=OUTBOX_IN_FLIGHT, queued_at__lte=waited_since)
    failed = Exists(outbound.filter(status=MessageStatus.FAILED)) | Exists(stuck)
    return ExpressionWrapper(failed, output_field=BooleanField())


def conversation_list(
    membership: Membership, filters: ConversationFilters
) -> QuerySet[Conversation]:
    """The list page's rows, newest first, each with contact, channel, agents, assignee,
    ``seen`` (the member read it after the customer's last line), ``undelivered`` (a reply
    never reached the customer: ``_undelivered``) and its labels (one prefetch query per
    page)."""
    # The conversation app's own scoped base (contact, channel, status filter), extended.
    rows = conversation_selectors.conversation_list(membership, status=filters.status)
    rows = rows.select_related("channel__agent", "active_agent", "assigned_to__user")
    if filters.view == View.MINE:
        rows = rows.filter(assigned_to=membership)
    elif filters.view == View.UNASSIGNED:
        rows = rows.filter(assigned_to__isnull=True)
    if filters.channel_id:
        rows = rows.filter(channel_id=filters.channel_id)
    if filters.agent_id:
        # The agent that answers now: the router's sticky choice, else the channel's own.
        rows = rows.filter(
            Q(active_agent_id=filters.agent_id)
            | Q(active_agent__isnull=True, channel__agent_id=filters.agent_id)
        )
    if filters.assignee_id:
        rows = rows.filter(assigned_to_id=filters.assignee_id)
    if filters.label_id:
        rows = rows.filter(label_links__label_id=filters.label_id)
    q = filters.q.strip()
    if q:
        rows = _search(rows, membership.organization_id, q)
    seen = ReadMarker.objects.filter(
        membership=membership,
        conversation=OuterRef("pk"),
        read_at__gte=OuterRef("last_inbound_at"),
    )
    return (
        rows.annotate(seen=Exists(seen), undelivered=_undelivered())
        .prefetch_related(
            Prefetch(
                "label_links",
                queryset=ConversationLabel.objects.select_related("label").order_by("label__name"),
            )
        )
        .order_by("-last_message_at", "-created_at")
    )


@dataclass(frozen=True)
class FilterChoices:
    channels: list[tuple[str, str]]
    agents: list[tuple[str, str]]
    members: list[tuple[str, str]]
    labels: list[tuple[str, str]]


def assignable_members(organization_id: Any) -> QuerySet[Membership]:
    """Who a conversation can be given to: members who may answer (agent and up)."""
    return (
        Membership.objects.filter(organization_id=organization_id)
        .exclude(role=Role.VIEWER)
        .select_related("user")
        .order_by("user__first_name", "user__username")
    )


def member_name(membership: Membership) -> str:
    return display_name(membership.user)


def member_choices(members: Iterable[Membership]) -> list[tuple[str, str]]:
    """Choices of a member picker: (membership id, display name)."""
    return [(str(m.pk), member_name(m)) for m in members]


def filter_choices(membership: Membership) -> FilterChoices:
    """The filter form's options: four queries."""
    org = membership.organization_id
    channels = ChannelSession.objects.filter(organization_id=org).order_by("name")
    agents = Agent.objects.filter(organization_id=org).order_by("name")
    labels = Label.objects.filter(organization_id=org)
    return FilterChoices(
        channels=[(str(pk), name) for pk, name in channels.values_list("pk", "name")],
        agents=[(str(pk), name) for pk, name in agents.values_list("pk", "name")],
        members=member_choices(assignable_members(org)),
        labels=[(str(pk), name) for pk, name in labels.values_list("pk", "name")],
    )


def queue_handoffs(membership: Membership, limit: int = 20) -> list[Handoff]:
    """The member's own queue: open handoffs of conversations assigned to them or to the
    whole team (nobody yet), newest activity first. What the desktop alert watches."""
    rows = scoped(Handoff.objects.select_related("conversation__contact"), membership).filter(
        Q(conversation__assigned_to=membership) | Q(conversation__assigned_to__isnull=True),
        status=HandoffStatus.OPEN,
    )
    return list(rows.order_by("-last_activity_at", "-created_at")[:limit])


@dataclass(frozen=True)
class ConversationPanel:
    conversation: Conversation
    labels: list[Label]
    on: set[uuid.UUID]
    notes: list[InternalNote]
    members: list[Membership]


def conversation_panel(conversation: Conversation) -> ConversationPanel:
    """Labels (all, and which are on), notes (with authors) and assignable members: four
    queries."""
    org = conversation.organization_id
    on = set(
        ConversationLabel.objects.filter(conversation=conversation).values_list(
            "label_id", flat=True
        )
    )
    return ConversationPanel(
        conversation=conversation,
        labels=list(Label.objects.filter(organization_id=org)),
        on=on,
        notes=list(
            InternalNote.objects.filter(conversation=conversation)
            .select_related("author")
            .order_by("created_at")
        ),
        members=list(assignable_members(org)),
    )


@dataclass(frozen=True)
class ContactProfile:
    contact: Contact
    conversations: list[Conversation]
    notes: list[InternalNote]
    human_owned: bool


def contact_profile(contact: Contact) -> ContactProfile:
    """Every conversation of the contact (newest first) and every note on them or on the
    contact; whether a human owns it now (``force_human`` or a silenced conversation)."""
    conversations = list(
        Conversation.objects.filter(contact=contact)
        .select_related("channel", "assigned_to__user")
        .order_by("-last_message_at", "-created_at")
    )
    for c in conversations:
        c.contact = contact  # ``is_human_owned`` reads it: no query per row
    notes = list(
        InternalNote.objects.filter(contact=contact)
        .select_related("author", "conversation__channel")
        .order_by("-created_at")
    )
    human = contact.force_human or any(c.is_human_owned() for c in conversations)
    return ContactProfile(
        contact=contact, conversations=conversations, notes=notes, human_owned=human
    )


def canned_replies(organization_id: Any) -> QuerySet[CannedReply]:
    return CannedReply.objects.filter(organization_id=organization_id).order_by("shortcut")


# How many messages the conversation page shows at once, newest first; "Carregar mensagens
# anteriores" brings the page before (a long conversation on a phone stays light).
TIMELINE_PAGE_SIZE = 50


@dataclass(frozen=True)
class TimelineEntry:
    """One line of a conversation's timeline: a message, or a team's internal note."""

    created_at: datetime
    message: Message | None = None
    note: InternalNote | None = None


@dataclass(frozen=True)
class Timeline:
    """One page of a conversation's timeline, oldest line first. ``cursor`` is the oldest
    message shown when there are older ones (the "Carregar mensagens anteriores" control
    asks for the page before it), else ``None``."""

    entries: list[TimelineEntry]
    cursor: Message | None = None


def _message_order(m: Message) -> tuple[datetime, uuid.UUID]:
    return (m.created_at, m.pk)


def conversation_timeline(
    conversation: Conversation,
    messages: Sequence[Message],
    *,
    page_size: int = TIMELINE_PAGE_SIZE,
) -> Timeline:
    """The latest ``page_size`` of ``messages`` (a caller may pass more, in any order) with
    the conversation's internal notes in time order: one query (the notes, with their
    authors). Notes older than the oldest message shown belong to an older page."""
    ordered = sorted(messages, key=_message_order)
    shown = ordered[-page_size:] if page_size > 0 else []
    older = len(ordered) > len(shown)
    return _timeline(conversation, shown, cursor=shown[0] if older and shown else None)


def conversation_timeline_page(
    conversation: Conversation,
    *,
    before: Message | None = None,
    page_size: int = TIMELINE_PAGE_SIZE,
) -> Timeline:
    """The page of the timeline just older than ``before`` (a message of the conversation,
    the cursor of a newer page), or the latest page: two queries whatever the
    conversation's length (the ``page_size + 1`` messages, served by ``msg_conv_created``;
    the notes)."""
    rows = Message.objects.filter(conversation=conversation)
    if before is not None:
        rows = rows.filter(
            Q(created_at__lt=before.created_at) | Q(created_at=before.created_at, pk__lt=before.pk)
        )
    page = list(rows.select_related("sent_by").order_by("-created_at", "-pk")[: page_size + 1])
    more = len(page) > page_size
    shown = page[:page_size][::-1]
    return _timeline(
        conversation, shown, cursor=shown[0] if more and shown else None, before=before
    )


def _timeline(
    conversation: Conversation,
    shown: list[Message],
    *,
    cursor: Message | None,
    before: Message | None = None,
) -> Timeline:
    """``shown`` (oldest first) with the notes written in its span: from its oldest message
    when older pages exist (earlier notes are theirs), up to ``before`` (newer notes are the
    newer pages'). Pages never share a note, and together they hold every one."""
    notes = InternalNote.objects.filter(conversation=conversation).select_related("author")
    if cursor is not None:
        notes = notes.filter(created_at__gte=cursor.created_at)
    if before is not None:
        notes = notes.filter(created_at__lt=before.created_at)
    entries = [TimelineEntry(created_at=m.created_at, message=m) for m in shown]
    entries += [TimelineEntry(created_at=n.created_at, note=n) for n in notes]
    return Timeline(entries=sorted(entries, key=lambda e: e.created_at), cursor=cursor)
