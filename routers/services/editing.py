"""Creating, changing and deleting routers, and replacing their intents (members). Each
write is one transaction ending with its AuditLog row."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Case, CharField, Value, When
from django.utils.translation import gettext as _

from accounts.models import Organization
from accounts.services import audit_log_write, audited_delete
from conversation.models import Agent, ChannelSession
from routers import selectors
from routers.classification import NONE_INTENT
from routers.errors import RouterAlreadyExists, RouterChanged, RouterInvalid
from routers.loaders import parse_router_config
from routers.models import (
    LabelledPhrase,
    Router,
    RouterMember,
    RouterSuggestion,
    SuggestionStatus,
    default_router_config,
)

MAX_MEMBERS = 30
MAX_EXAMPLES = 30
MAX_EXAMPLE_CHARS = 300


@dataclass(frozen=True)
class MemberSpec:
    """One intent of a router as a form or serializer hands it to the services."""

    agent: Agent
    intent_name: str
    intent_description: str
    examples: tuple[str, ...] = ()
    # The name this intent had when the page showed it ("" for a new one): a rename
    # takes the intent's labelled phrases and pending suggestions along.
    previous_name: str = ""


def _same_org(organization_id: uuid.UUID, *objects: Any) -> None:
    for obj in objects:
        if obj is not None and obj.organization_id != organization_id:
            raise RouterInvalid(_("Objeto de outra organização."))


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
        raise _already_exists()


def _already_exists() -> RouterAlreadyExists:
    return RouterAlreadyExists(_("Este número já tem um roteador ativo."), field="channel")


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
        raise RouterInvalid(_("Dê um nome ao roteador."), field="name")
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
            raise _already_exists() from exc
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
            raise RouterInvalid(_("Dê um nome ao roteador."), field="name")
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
            raise _already_exists() from exc
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
        raise RouterInvalid(
            _("No máximo %(n)s intenções por roteador.") % {"n": MAX_MEMBERS}, field="members"
        )
    seen: set[str] = set()
    clean: list[MemberSpec] = []
    for m in members:
        name = m.intent_name.strip()
        description = m.intent_description.strip()
        if not name or not description:
            raise RouterInvalid(_("Cada intenção precisa de nome e descrição."), field="members")
        if name.casefold() == NONE_INTENT:
            raise RouterInvalid(_("“none” é reservado: escolha outro nome."), field="members")
        if name.casefold() in seen:
            raise RouterInvalid(
                _("A intenção «%(name)s» aparece duas vezes.") % {"name": name}, field="members"
            )
        seen.add(name.casefold())
        _same_org(router.organization_id, m.agent)
        examples = tuple(
            dict.fromkeys(e.strip()[:MAX_EXAMPLE_CHARS] for e in m.examples if e.strip())
        )[:MAX_EXAMPLES]
        clean.append(MemberSpec(m.agent, name[:60], description, examples, m.previous_name.strip()))
    return clean


def _carry_renames(router: Router, renames: dict[str, str]) -> None:
    """Relabel the renamed intents' labelled phrases and pending suggestions (old name ->
    new, all at once, so two intents may swap names). Without it a rename would leave
    them under a name no intent has: the router would forget what an admin taught it."""
    if not renames:
        return
    label = Case(
        *(When(intent_name=old, then=Value(new)) for old, new in renames.items()),
        output_field=CharField(),
    )
    LabelledPhrase.objects.filter(router=router, intent_name__in=renames).update(intent_name=label)
    RouterSuggestion.objects.filter(
        router=router, status=SuggestionStatus.PENDING, intent_name__in=renames
    ).update(intent_name=label)


def router_members_replace(
    *, router: Router, actor: Any, members: Sequence[MemberSpec]
) -> list[RouterMember]:
    """Replace the whole list in one transaction; ``position`` is the list index. Touches
    the router so its ``updated_at`` says when routing last changed (and every process
    retrains its local stage). An intent whose ``previous_name`` differs was renamed: its
    labelled phrases and pending suggestions follow it. The API names intents only by
    name, so there a rename is a removal and an addition: the phrases of a removed intent
    stay, under its old name, until an intent of that name comes back."""
    clean = _validate_members(router, members)
    with transaction.atomic():
        Router.objects.select_for_update().filter(pk=router.pk).first()  # serialize edits
        previous = list(
            RouterMember.objects.filter(router=router).values_list("intent_name", "agent_id")
        )
        old_names = {n for n, _agent in previous}
        renames = {
            m.previous_name: m.intent_name
            for m in clean
            if m.previous_name in old_names and m.previous_name != m.intent_name
        }
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
        _carry_renames(router, renames)
        router.save(update_fields=["updated_at"])
        diff: dict[str, Any] = {
            "from": [{"intent": n, "agent_id": str(a)} for n, a in previous],
            "to": [{"intent": m.intent_name, "agent_id": str(m.agent.pk)} for m in clean],
        }
        if renames:
            diff["renamed"] = renames
        audit_log_write(actor=actor, action="router.members_replace", resource=router, diff=diff)
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
    shown_version: str = "",
) -> Router:
    """The edit page's save: the router's fields and its intents, both or neither. The
    intents are replaced only when they changed (no audit row for an unchanged list).

    ``shown_version`` is ``selectors.router_version`` of what the page showed: when the
    router was saved by someone else since, ``RouterChanged`` is raised and nothing is
    written (their intents would otherwise vanish under this page's older list). Locks
    the router's row for the check and the writes."""
    with transaction.atomic():
        if shown_version:
            locked = Router.objects.select_for_update().get(pk=router.pk)
            saved = selectors.router_version(locked, selectors.router_members(locked))
            if saved != shown_version:
                raise RouterChanged(
                    _(
                        "Outra pessoa salvou este roteador enquanto você editava, e nada "
                        "foi salvo aqui. Recarregue a página para ver a versão atual e "
                        "refaça suas mudanças."
                    )
                )
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
