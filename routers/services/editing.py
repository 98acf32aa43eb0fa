"""Creating, changing and deleting routers, and replacing their intents (members). Each
write is one transaction ending with its AuditLog row."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from accounts.models import Organization
from accounts.services import audit_log_write, audited_delete
from conversation.models import Agent, ChannelSession
from routers.classification import NONE_INTENT
from routers.errors import RouterAlreadyExists, RouterInvalid
from routers.loaders import parse_router_config
from routers.models import Router, RouterMember, default_router_config

MAX_MEMBERS = 30
MAX_EXAMPLES = 30
MAX_EXAMPLE_CHARS = 300
ALREADY_EXISTS_MESSAGE = "Este número já tem um roteador ativo."


@dataclass(frozen=True)
class MemberSpec:
    """One intent of a router as a form or serializer hands it to the services."""

    agent: Agent
    intent_name: str
    intent_description: str
    examples: tuple[str, ...] = ()


def _same_org(organization_id: uuid.UUID, *objects: Any) -> None:
    for obj in objects:
        if obj is not None and obj.organization_id != organization_id:
            raise RouterInvalid("Objeto de outra organização.")


def _config(base: Any, changes: dict[str, Any] | None) -> dict[str, Any]:
    """Merge ``changes`` over the current config, keeping only well-formed values."""
    merged = {**default_router_config(), **(base if isinstance(base, dict) else {})}
    merged.update(changes or {})
    return parse_router_config(merged).as_json()


def _assert_channel_free(channel: ChannelSession, *, exclude: uuid.UUID | None = None) -> None:
    others = Router.objects.filter(channel=channel, is_active=True)
    if exclude is not None:
        others = others.exclude(pk=exclude)
    if others.exists():
        raise RouterAlreadyExists(ALREADY_EXISTS_MESSAGE, field="channel")


def router_create(
    *,
    organization: Organization,
    actor: Any,
    name: str,
    channel: ChannelSession,
    fallback_agent: Agent | None = None,
    is_active: bool = True,
    config: dict[str, Any] | None = None,
    members: Sequence[MemberSpec] | None = None,
) -> Router:
    """A router on ``channel``; raises ``RouterAlreadyExists`` when the channel already has
    an active one (checked first, and enforced by the partial unique constraint)."""
    name = name.strip()
    if not name:
        raise RouterInvalid("Dê um nome ao roteador.", field="name")
    _same_org(organization.pk, channel, fallback_agent)
    with transaction.atomic():
        if is_active:
            _assert_channel_free(channel)
        try:
            with transaction.atomic():
                router = Router.objects.create(
                    organization=organization,
                    name=name,
                    channel=channel,
                    is_active=is_active,
                    fallback_agent=fallback_agent,
                    config=_config(None, config),
                    created_by=actor if getattr(actor, "is_authenticated", False) else None,
                )
        except IntegrityError as exc:  # a concurrent create won the race
            raise RouterAlreadyExists(ALREADY_EXISTS_MESSAGE, field="channel") from exc
        audit_log_write(
            actor=actor,
            action="router.create",
            resource=router,
            diff={
                "name": name,
                "channel_id": str(channel.pk),
                "is_active": is_active,
                "fallback_agent_id": str(fallback_agent.pk) if fallback_agent else None,
                "config": router.config,
            },
        )
        if members:
            router_members_replace(router=router, actor=actor, members=members)
    return router


_UNSET: Any = object()


def router_update(
    *,
    router: Router,
    actor: Any,
    name: str = _UNSET,
    channel: ChannelSession = _UNSET,
    is_active: bool = _UNSET,
    fallback_agent: Agent | None = _UNSET,
    config: dict[str, Any] | None = _UNSET,
) -> Router:
    """Change what was given; config keys are merged over the current config."""
    changes: dict[str, Any] = {}
    if name is not _UNSET:
        name = name.strip()
        if not name:
            raise RouterInvalid("Dê um nome ao roteador.", field="name")
        changes["name"] = name
    if channel is not _UNSET:
        _same_org(router.organization_id, channel)
        changes["channel"] = channel
    if is_active is not _UNSET:
        changes["is_active"] = bool(is_active)
    if fallback_agent is not _UNSET:
        _same_org(router.organization_id, fallback_agent)
        changes["fallback_agent"] = fallback_agent
    if config is not _UNSET:
        changes["config"] = _config(router.config, config)
    with transaction.atomic():
        diff: dict[str, Any] = {}
        for field, value in changes.items():
            old = getattr(router, field)
            if old != value:
                diff[field] = {"from": old, "to": value}
                setattr(router, field, value)
        if not diff:
            return router
        if router.is_active and ("channel" in diff or "is_active" in diff):
            _assert_channel_free(router.channel, exclude=router.pk)
        try:
            with transaction.atomic():
                router.save(update_fields=[*diff, "updated_at"])
        except IntegrityError as exc:
            raise RouterAlreadyExists(ALREADY_EXISTS_MESSAGE, field="channel") from exc
        audit_log_write(
            actor=actor,
            action="router.update",
            resource=router,
            diff=diff,
        )
    return router


def router_delete(*, router: Router, actor: Any) -> None:
    """Members, labelled phrases and quality runs go with it; decisions stay (router
    set to null) because they are the history of turns that happened."""
    audited_delete(
        router,
        actor=actor,
        action="router.delete",
        diff={"name": router.name, "channel_id": str(router.channel_id)},
    )


def _validate_members(router: Router, members: Sequence[MemberSpec]) -> list[MemberSpec]:
    if len(members) > MAX_MEMBERS:
        raise RouterInvalid(f"No máximo {MAX_MEMBERS} intenções por roteador.", field="members")
    seen: set[str] = set()
    clean: list[MemberSpec] = []
    for m in members:
        name = m.intent_name.strip()
        description = m.intent_description.strip()
        if not name or not description:
            raise RouterInvalid("Cada intenção precisa de nome e descrição.", field="members")
        if name.casefold() == NONE_INTENT:
            raise RouterInvalid("“none” é reservado: escolha outro nome.", field="members")
        if name.casefold() in seen:
            raise RouterInvalid(f"A intenção «{name}» aparece duas vezes.", field="members")
        seen.add(name.casefold())
        _same_org(router.organization_id, m.agent)
        examples = tuple(
            dict.fromkeys(e.strip()[:MAX_EXAMPLE_CHARS] for e in m.examples if e.strip())
        )[:MAX_EXAMPLES]
        clean.append(MemberSpec(m.agent, name[:60], description, examples))
    return clean


def router_members_replace(
    *, router: Router, actor: Any, members: Sequence[MemberSpec]
) -> list[RouterMember]:
    """Replace the whole list in one transaction; ``position`` is the list index. Touches
    the router so its ``updated_at`` says when routing last changed."""
    clean = _validate_members(router, members)
    with transaction.atomic():
        Router.objects.select_for_update().filter(pk=router.pk).first()  # serialize edits
        previous = list(
            RouterMember.objects.filter(router=router).values_list("intent_name", "agent_id")
        )
        RouterMember.objects.filter(router=router, organization_id=router.organization_id).delete()
        created = RouterMember.objects.bulk_create(
            [
                RouterMember(
                    organization_id=router.organization_id,
                    router=router,
                    agent=m.agent,
                    intent_name=m.intent_name,
                    intent_description=m.intent_description,
                    examples=list(m.examples),
                    position=i,
                )
                for i, m in enumerate(clean)
            ]
        )
        router.save(update_fields=["updated_at"])
        audit_log_write(
            actor=actor,
            action="router.members_replace",
            resource=router,
            diff={
                "from": [{"intent": n, "agent_id": str(a)} for n, a in previous],
                "to": [{"intent": m.intent_name, "agent_id": str(m.agent.pk)} for m in clean],
            },
        )
    return created


def router_save(
    *,
    router: Router,
    actor: Any,
    name: str,
    channel: ChannelSession,
    fallback_agent: Agent | None,
    is_active: bool,
    config: dict[str, Any] | None,
    members: Sequence[MemberSpec],
) -> Router:
    """The edit page's save: the router's fields and its intents, both or neither. The
    intents are replaced only when they changed (no audit row for an unchanged list)."""
    with transaction.atomic():
        router_update(
            router=router,
            actor=actor,
            name=name,
            channel=channel,
            fallback_agent=fallback_agent,
            is_active=is_active,
            config=config,
        )
        current = [
            (m.agent_id, m.intent_name, m.intent_description, tuple(m.examples or ()))
            for m in RouterMember.objects.filter(router=router).order_by("position")
        ]
        wanted = [
            (m.agent.pk, m.intent_name.strip(), m.intent_description.strip(), tuple(m.examples))
            for m in members
        ]
        if current != wanted:
            router_members_replace(router=router, actor=actor, members=members)
    return router
