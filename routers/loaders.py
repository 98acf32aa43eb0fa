"""Loading a router as the resolver sees it (intent-router Task 2): a channel's active
router for a turn (``load_channel_routing``), or any router by its row (``load_router``).

``load_channel_routing`` costs one query per turn: the channel with its own agent, and
its active router's row with a stamp of its members (latest ``updated_at`` and count) as
subqueries. The members themselves are cached per process under that stamp, so they are
read again only when they change — in this process or any other, since the stamp comes
from the database.

The ``config`` JSON is read defensively: a malformed field falls back to its default and
never breaks a turn.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import (
    CharField,
    Count,
    DateTimeField,
    Field,
    IntegerField,
    JSONField,
    OuterRef,
    QuerySet,
    Subquery,
    UUIDField,
)

from accounts.db.compiled import CompiledQuery
from conversation.agents import AgentConfig, agent_config_from_version
from conversation.llm.lru import LruCache
from conversation.models import Agent, ChannelSession
from routers.classification import IntentOption
from routers.classification.phrase import Phrase, phrases_from_pairs
from routers.models import (
    DEFAULT_CLASSIFIER_MODEL,
    DEFAULT_LOCAL_ACCEPT_THRESHOLD,
    DEFAULT_MIN_CONFIDENCE,
    DEFAULT_STICKY,
    LabelledPhrase,
    Router,
    RouterMember,
)


@dataclass(frozen=True)
class RouterConfig:
    classifier_model: str = DEFAULT_CLASSIFIER_MODEL
    sticky: bool = DEFAULT_STICKY
    min_confidence: float = DEFAULT_MIN_CONFIDENCE
    local_accept_threshold: float = DEFAULT_LOCAL_ACCEPT_THRESHOLD

    def as_json(self) -> dict[str, Any]:
        return {
            "classifier_model": self.classifier_model,
            "sticky": self.sticky,
            "min_confidence": self.min_confidence,
            "local_accept_threshold": self.local_accept_threshold,
        }


def _unit_interval(value: object) -> float | None:
    # bool is an int in Python but never a threshold; NaN/inf are not thresholds either.
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        return None
    return number


def parse_router_config(raw: object) -> RouterConfig:
    """Each field independently: the right type and range, else its default."""
    data: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    model = data.get("classifier_model")
    sticky = data.get("sticky")
    min_confidence = _unit_interval(data.get("min_confidence"))
    local_accept = _unit_interval(data.get("local_accept_threshold"))
    return RouterConfig(
        classifier_model=model.strip()
        if isinstance(model, str) and model.strip()
        else DEFAULT_CLASSIFIER_MODEL,
        sticky=sticky if isinstance(sticky, bool) else DEFAULT_STICKY,
        min_confidence=DEFAULT_MIN_CONFIDENCE if min_confidence is None else min_confidence,
        local_accept_threshold=DEFAULT_LOCAL_ACCEPT_THRESHOLD
        if local_accept is None
        else local_accept,
    )


@dataclass(frozen=True)
class LoadedMember:
    id: uuid.UUID
    agent_id: uuid.UUID
    intent_name: str
    intent_description: str
    examples: tuple[str, ...]

    def option(self) -> IntentOption:
        return IntentOption(
            name=self.intent_name, description=self.intent_description, examples=self.examples
        )


@dataclass(frozen=True)
class LoadedRouter:
    id: uuid.UUID
    organization_id: uuid.UUID
    name: str
    config: RouterConfig
    fallback_agent_id: uuid.UUID | None
    members: tuple[LoadedMember, ...]
    # What teaches the local stage besides the members' examples: the labelled phrases,
    # admin-accepted suggestions among them (DESIGN §10.5).
    phrases: tuple[Phrase, ...] = ()

    @property
    def classifier_model(self) -> str:
        return self.config.classifier_model

    @property
    def sticky(self) -> bool:
        return self.config.sticky

    @property
    def min_confidence(self) -> float:
        return self.config.min_confidence

    @property
    def local_accept_threshold(self) -> float:
        return self.config.local_accept_threshold

    def intent_options(self) -> tuple[IntentOption, ...]:
        return tuple(m.option() for m in self.members)

    def member_for_intent(self, intent_name: str | None) -> LoadedMember | None:
        return next((m for m in self.members if m.intent_name == intent_name), None)

    def has_agent(self, agent_id: uuid.UUID | None) -> bool:
        return agent_id is not None and any(m.agent_id == agent_id for m in self.members)


def _examples(raw: object) -> tuple[str, ...]:
    if not isinstance(raw, list):
        return ()
    return tuple(e.strip() for e in raw if isinstance(e, str) and e.strip())


def load_members(router_id: uuid.UUID, organization_id: uuid.UUID) -> tuple[LoadedMember, ...]:
    """The router's members by position, examples trimmed (the one member loader: turns,
    the classification test and quality runs all read members through it)."""
    rows = (
        RouterMember.objects.filter(router_id=router_id, organization_id=organization_id)
        .order_by("position", "intent_name")
        .values_list("id", "agent_id", "intent_name", "intent_description", "examples")
    )
    return tuple(
        LoadedMember(
            id=pk,
            agent_id=agent_id,
            intent_name=name,
            intent_description=description,
            examples=_examples(examples),
        )
        for pk, agent_id, name, description, examples in rows
    )


def load_phrases(router_id: uuid.UUID, organization_id: uuid.UUID) -> tuple[Phrase, ...]:
    """The router's labelled phrases, oldest first (a later relabel wins)."""
    rows = (
        LabelledPhrase.objects.filter(router_id=router_id, organization_id=organization_id)
        .order_by("created_at", "id")
        .values_list("text", "intent_name")
    )
    return phrases_from_pairs(rows)


def load_router(router: Router) -> LoadedRouter:
    """A router as the resolver sees it, active or not (pages and API test it)."""
    return LoadedRouter(
        id=router.pk,
        organization_id=router.organization_id,
        name=router.name,
        config=parse_router_config(router.config),
        fallback_agent_id=router.fallback_agent_id,
        members=load_members(router.pk, router.organization_id),
        phrases=load_phrases(router.pk, router.organization_id),
    )


# The router's row stamp moves whenever its phrases change (services touch it), so one
# key covers members and phrases.
MembersKey = tuple[uuid.UUID, datetime, datetime | None, int]
Taught = tuple[tuple[LoadedMember, ...], tuple[Phrase, ...]]
_CACHE_SIZE = 256
_members_cache: LruCache[MembersKey, Taught] = LruCache(_CACHE_SIZE)


def _cached_members(key: MembersKey, organization_id: uuid.UUID) -> Taught:
    return _members_cache.get_or_build(
        key, lambda: (load_members(key[0], organization_id), load_phrases(key[0], organization_id))
    )


# Published agent configs by (agent, published version, agent name): a version never
# changes once published, so the stamp read with the channel's routing query is enough
# to trust the cached config; a sticky turn then reads no agent row.
AgentKey = tuple[uuid.UUID, uuid.UUID, str]
_agents_cache: LruCache[AgentKey, AgentConfig] = LruCache(_CACHE_SIZE)


def remember_agent(config: AgentConfig | None) -> None:
    if config is None or config.agent_id is None or config.version_id is None:
        return
    _agents_cache.put((config.agent_id, config.version_id, config.name), config)


def cached_agent(key: AgentKey) -> AgentConfig | None:
    return _agents_cache.get(key)


def clear_members_cache() -> None:
    _members_cache.clear()
    _agents_cache.clear()


@dataclass(frozen=True)
class ChannelRouting:
    """What a turn needs to know about its channel: the active router, if any, and the
    channel's own published agent (the answer without a router, and the safe answer when
    routing fails)."""

    router: LoadedRouter | None
    channel_agent: AgentConfig | None
    # The sticky agent's config when the process already had it for its published version.
    sticky_agent: AgentConfig | None = None


def _routing_query(
    organization_id: uuid.UUID, channel_id: uuid.UUID, sticky_agent_id: uuid.UUID | None = None
) -> QuerySet[ChannelSession]:
    """The channel with its agent and published version, and its active router's row (and
    members stamp) as correlated subqueries on the partial unique index; with
    ``sticky_agent_id``, that agent's published version and name too."""
    active = Router.objects.filter(channel=OuterRef("pk"), is_active=True).order_by()
    members = RouterMember.objects.filter(
        router__channel=OuterRef("pk"), router__is_active=True
    ).order_by()

    def field(name: str, output: Field) -> Subquery:
        return Subquery(active.values(name)[:1], output_field=output)

    sticky: dict[str, Subquery] = {}
    if sticky_agent_id is not None:
        agent = Agent.objects.filter(organization_id=organization_id, pk=sticky_agent_id)
        sticky = {
            "sticky_version_id": Subquery(
                agent.order_by().values("published_version_id")[:1], output_field=UUIDField()
            ),
            "sticky_name": Subquery(agent.order_by().values("name")[:1], output_field=CharField()),
        }
    return (
        ChannelSession.objects.filter(organization_id=organization_id, pk=channel_id)
        .select_related("agent", "agent__published_version")
        .annotate(
            router_id=field("id", UUIDField()),
            router_name=field("name", CharField()),
            router_config=field("config", JSONField()),
            router_fallback_id=field("fallback_agent_id", UUIDField()),
            router_updated_at=field("updated_at", DateTimeField()),
            members_stamp=Subquery(
                members.order_by("-updated_at").values("updated_at")[:1],
                output_field=DateTimeField(),
            ),
            members_count=Subquery(
                members.values("router").annotate(n=Count("pk")).values("n")[:1],
                output_field=IntegerField(),
            ),
            **sticky,
        )[:1]
    )


# Every routed turn runs one of the two: compiled once per thread (accounts.db.compiled).
_ROUTING = CompiledQuery(_routing_query, (uuid.UUID(int=1), uuid.UUID(int=2)))
_ROUTING_STICKY = CompiledQuery(
    _routing_query, (uuid.UUID(int=1), uuid.UUID(int=2), uuid.UUID(int=3))
)


def load_channel_routing(
    channel: ChannelSession, sticky_agent_id: uuid.UUID | None = None
) -> ChannelRouting:
    """One query: the channel with its agent and published version, and its active
    router's row (and members stamp) as correlated subqueries on the partial unique index.
    A channel without a router thus costs a turn no query more than before routers.

    With ``sticky_agent_id`` the same query reads that agent's published version and name,
    so a cached config of it (``remember_agent``) answers without another query."""
    if sticky_agent_id is None:
        row = _ROUTING.first(channel.organization_id, channel.pk)
    else:
        row = _ROUTING_STICKY.first(channel.organization_id, channel.pk, sticky_agent_id)
    if row is None:
        return ChannelRouting(router=None, channel_agent=None)
    agent = row.agent
    channel_agent = (
        agent_config_from_version(agent, agent.published_version)
        if agent is not None and agent.published_version is not None
        else None
    )
    data: Any = row  # the annotations are not part of the model's type
    if data.router_id is None:
        return ChannelRouting(router=None, channel_agent=channel_agent)
    key: MembersKey = (
        data.router_id,
        data.router_updated_at,
        data.members_stamp,
        data.members_count or 0,
    )
    loaded, phrases = _cached_members(key, channel.organization_id) if key[3] else ((), ())
    router = LoadedRouter(
        id=data.router_id,
        organization_id=channel.organization_id,
        name=data.router_name,
        config=parse_router_config(data.router_config),
        fallback_agent_id=data.router_fallback_id,
        members=loaded,
        phrases=phrases,
    )
    sticky = None
    if sticky_agent_id is not None and getattr(data, "sticky_version_id", None) is not None:
        sticky = cached_agent((sticky_agent_id, data.sticky_version_id, data.sticky_name or ""))
    remember_agent(channel_agent)
    return ChannelRouting(router=router, channel_agent=channel_agent, sticky_agent=sticky)


def load_active_router(channel: ChannelSession) -> LoadedRouter | None:
    """The channel's active router with its members by position; None = no router."""
    return load_channel_routing(channel).router
