"""Writes of the routers app: routers, their members, the labelled phrases and quality
runs. Each service is one transaction ending with its AuditLog row; side effects (the
quality run task) are scheduled on commit.

The classification test (``router_classify_test``) writes no decision: it is a test. Its
model calls still land in the LlmCall ledger, since they cost the same.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Organization
from accounts.services import audit_log_write
from conversation import ai
from conversation.agents import load_published_agent_config_by_id
from conversation.dispatch import enqueue
from conversation.models import Agent, ChannelSession
from routers.classification import NONE_INTENT, CascadeResult, classify_with_llm
from routers.classifier import classifier_client, classify_message
from routers.errors import RouterAlreadyExists, RouterInvalid
from routers.loaders import (
    LoadedMember,
    LoadedRouter,
    RouterConfig,
    parse_router_config,
)
from routers.models import (
    LabelledPhrase,
    QualityRun,
    QualityRunStatus,
    Router,
    RouterMember,
    default_router_config,
)
from routers.quality import (
    MAX_ERRORS_SHOWN,
    PhraseVerdict,
    Thresholds,
    confusion_table,
    evaluate,
    suggest_thresholds,
)

log = logging.getLogger(__name__)

MAX_MEMBERS = 30
MAX_EXAMPLES = 30
MAX_EXAMPLE_CHARS = 300
MAX_LABELLED_PHRASES = 2000
ALREADY_EXISTS_MESSAGE = "Este número já tem um roteador ativo."


# --- routers -------------------------------------------------------------------------------


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
            organization=organization,
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
            organization=router.organization_id,
            actor=actor,
            action="router.update",
            resource=router,
            diff=diff,
        )
    return router


def router_delete(*, router: Router, actor: Any) -> None:
    """Members, labelled phrases and quality runs go with it; decisions stay (router
    set to null) because they are the history of turns that happened."""
    with transaction.atomic():
        audit_log_write(
            organization=router.organization_id,
            actor=actor,
            action="router.delete",
            resource=router,
            diff={"name": router.name, "channel_id": str(router.channel_id)},
        )
        router.delete()


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
            organization=router.organization_id,
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


# --- the classification test -------------------------------------------------------------


@dataclass(frozen=True)
class RouterTestResult:
    """What the router would do with a message, without recording a decision."""

    intent_name: str | None
    confidence: float
    stage: str  # local | llm | none
    status: str  # ok | failed
    accepted: bool  # confident enough to route to the intent's agent
    agent_id: uuid.UUID | None
    agent_name: str
    uses_fallback: bool
    min_confidence: float
    error_code: str = ""

    @property
    def percent(self) -> int:
        return round(100 * self.confidence)


def loaded_router(router: Router) -> LoadedRouter:
    """A router as the resolver sees it, active or not (pages and API test it)."""
    members = tuple(
        LoadedMember(
            id=m.pk,
            agent_id=m.agent_id,
            intent_name=m.intent_name,
            intent_description=m.intent_description,
            examples=tuple(e for e in m.examples if isinstance(e, str) and e.strip()),
        )
        for m in RouterMember.objects.filter(router=router).order_by("position", "intent_name")
    )
    return LoadedRouter(
        id=router.pk,
        organization_id=router.organization_id,
        name=router.name,
        config=parse_router_config(router.config),
        fallback_agent_id=router.fallback_agent_id,
        members=members,
    )


def router_classify_test(
    *, router: Router, organization: Organization, message: str
) -> RouterTestResult:
    """Classify ``message`` with the router's cascade and say which agent would answer."""
    loaded = loaded_router(router)
    ledger = ai.Ledger(organization_id=organization.pk, provider=ai.provider_name())
    result = classify_message(
        loaded,
        message,
        recorder=ledger,
        org_settings=organization.settings,
        context={"organization_id": str(organization.pk), "purpose": "router_test"},
    )
    ledger.flush()
    accepted = (
        result.status == "ok"
        and result.intent is not None
        and result.confidence >= loaded.min_confidence
    )
    member = loaded.member_for_intent(result.intent) if accepted else None
    agent_id = member.agent_id if member else loaded.fallback_agent_id
    agent = load_published_agent_config_by_id(organization.pk, agent_id) if agent_id else None
    return RouterTestResult(
        intent_name=result.intent,
        confidence=result.confidence,
        stage=result.stage,
        status=result.status,
        accepted=member is not None,
        agent_id=agent.agent_id if agent else None,
        agent_name=agent.name if agent else "",
        uses_fallback=member is None and agent is not None,
        min_confidence=loaded.min_confidence,
        error_code=result.error_code,
    )


# --- labelled phrases (the quality loop's set) ---------------------------------------------


def _intent_names(router: Router) -> set[str]:
    return set(RouterMember.objects.filter(router=router).values_list("intent_name", flat=True))


def _check_phrases(router: Router, phrases: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    names = _intent_names(router) | {NONE_INTENT}
    clean: dict[str, str] = {}
    for text, intent in phrases:
        text = text.strip()[:500]
        if not text:
            continue
        if intent not in names:
            raise RouterInvalid(f"A intenção «{intent}» não existe neste roteador.")
        clean.pop(text, None)
        clean[text] = intent
    if len(clean) > MAX_LABELLED_PHRASES:
        raise RouterInvalid(f"No máximo {MAX_LABELLED_PHRASES} frases rotuladas por roteador.")
    return list(clean.items())


def labelled_phrases_replace(
    *, router: Router, actor: Any, phrases: Sequence[tuple[str, str]]
) -> int:
    """The labelled set becomes exactly ``phrases`` ((text, intent or "none"))."""
    clean = _check_phrases(router, phrases)
    with transaction.atomic():
        LabelledPhrase.objects.filter(router=router).delete()
        LabelledPhrase.objects.bulk_create(
            [
                LabelledPhrase(
                    organization_id=router.organization_id,
                    router=router,
                    text=text,
                    intent_name=intent,
                    created_by=actor if getattr(actor, "is_authenticated", False) else None,
                )
                for text, intent in clean
            ]
        )
        audit_log_write(
            organization=router.organization_id,
            actor=actor,
            action="router.labelled_phrases_replace",
            resource=router,
            diff={"count": len(clean)},
        )
    return len(clean)


def labelled_phrases_add(*, router: Router, actor: Any, phrases: Sequence[tuple[str, str]]) -> int:
    """Add (or relabel) phrases; the rest of the set stays."""
    clean = _check_phrases(router, phrases)
    if not clean:
        return 0
    with transaction.atomic():
        existing = {
            p.text: p
            for p in LabelledPhrase.objects.filter(router=router, text__in=[t for t, _ in clean])
        }
        new, relabelled = [], []
        for text, intent in clean:
            phrase = existing.get(text)
            if phrase is None:
                new.append(
                    LabelledPhrase(
                        organization_id=router.organization_id,
                        router=router,
                        text=text,
                        intent_name=intent,
                        created_by=actor if getattr(actor, "is_authenticated", False) else None,
                    )
                )
            elif phrase.intent_name != intent:
                phrase.intent_name = intent
                relabelled.append(phrase)
        LabelledPhrase.objects.bulk_create(new)
        LabelledPhrase.objects.bulk_update(relabelled, ["intent_name"])
        total = LabelledPhrase.objects.filter(router=router).count()
        if total > MAX_LABELLED_PHRASES:
            raise RouterInvalid(f"No máximo {MAX_LABELLED_PHRASES} frases rotuladas por roteador.")
        audit_log_write(
            organization=router.organization_id,
            actor=actor,
            action="router.labelled_phrases_add",
            resource=router,
            diff={"added": len(new), "relabelled": len(relabelled)},
        )
    return len(new) + len(relabelled)


def labelled_phrase_delete(*, phrase: LabelledPhrase, actor: Any) -> None:
    with transaction.atomic():
        audit_log_write(
            organization=phrase.organization_id,
            actor=actor,
            action="router.labelled_phrase_delete",
            resource=phrase,
            diff={"router_id": str(phrase.router_id), "intent": phrase.intent_name},
        )
        phrase.delete()


# --- quality runs ----------------------------------------------------------------------------


def quality_run_start(*, router: Router, actor: Any) -> QualityRun:
    """Queue a run over the current labelled set; the task starts after commit."""
    from routers.tasks import run_quality_run  # tasks import services: import here

    with transaction.atomic():
        total = LabelledPhrase.objects.filter(router=router).count()
        if total == 0:
            raise RouterInvalid("Adicione frases rotuladas antes de medir o roteador.")
        run = QualityRun.objects.create(
            organization_id=router.organization_id,
            router=router,
            total=total,
            created_by=actor if getattr(actor, "is_authenticated", False) else None,
        )
        audit_log_write(
            organization=router.organization_id,
            actor=actor,
            action="router.quality_run_start",
            resource=run,
            diff={"router_id": str(router.pk), "phrases": total},
        )
        enqueue(run_quality_run, str(run.pk))
    return run


def _verdict(
    text: str,
    expected: str,
    result: CascadeResult,
    loaded: LoadedRouter,
    llm: Any,
    context: dict[str, Any],
) -> PhraseVerdict:
    """One phrase through the cascade, plus the LLM's answer when the cascade stopped at
    the local stage (so every local threshold can be replayed)."""
    if llm is None or result.stage == "none":
        return PhraseVerdict(text, expected, result.local_intent, result.local_confidence)
    if result.stage == "llm":
        return PhraseVerdict(
            text,
            expected,
            result.local_intent,
            result.local_confidence,
            result.intent,
            result.confidence,
            "failed" if result.status == "failed" else "ok",
        )
    answer = classify_with_llm(
        llm,
        model=loaded.classifier_model,
        intents=loaded.intent_options(),
        message=text,
        context=context,
    )
    return PhraseVerdict(
        text,
        expected,
        result.local_intent,
        result.local_confidence,
        answer.intent,
        answer.confidence,
        "failed" if answer.status == "failed" else "ok",
    )


def quality_run_execute(run_id: str) -> QualityRun | None:
    """Run the labelled phrases through the router's cascade, storing progress as it goes.

    Claimed with a conditional update, so a redelivered task does nothing. Progress is
    saved every ~5% of the phrases (the page polls it)."""
    claimed = QualityRun.objects.filter(pk=run_id, status=QualityRunStatus.QUEUED).update(
        status=QualityRunStatus.RUNNING, started_at=timezone.now()
    )
    if not claimed:
        return None
    run = QualityRun.objects.select_related("router", "organization").get(pk=run_id)
    router, organization = run.router, run.organization
    ledger = ai.Ledger(organization_id=organization.pk, provider=ai.provider_name())
    try:
        loaded = loaded_router(router)
        phrases = list(
            LabelledPhrase.objects.filter(router=router)
            .order_by("created_at")
            .values_list("text", "intent_name")
        )
        context = {"organization_id": str(organization.pk), "quality_run_id": str(run.pk)}
        llm = classifier_client(
            ledger, model=loaded.classifier_model, org_settings=organization.settings
        )
        step = max(1, len(phrases) // 20)
        verdicts: list[PhraseVerdict] = []
        for i, (text, expected) in enumerate(phrases, start=1):
            result = classify_message(
                loaded, text, recorder=ledger, org_settings=organization.settings, context=context
            )
            verdicts.append(_verdict(text, expected, result, loaded, llm, context))
            if i % step == 0 and i < len(phrases):
                QualityRun.objects.filter(pk=run.pk).update(processed=i)
                ledger.flush()
        run.results = quality_results(loaded, verdicts, has_llm=llm is not None)
        run.processed, run.total = len(phrases), len(phrases)
        run.status = QualityRunStatus.DONE
    except Exception:
        log.exception("quality run failed", extra={"quality_run_id": str(run.pk)})
        run.status, run.error_code = QualityRunStatus.FAILED, "unexpected_error"
    ledger.flush()
    run.finished_at = timezone.now()
    with transaction.atomic():
        run.save(
            update_fields=["results", "processed", "total", "status", "error_code", "finished_at"]
        )
        audit_log_write(
            organization=organization,
            actor=None,
            action="router.quality_run_finish",
            resource=run,
            diff={"status": run.status, "processed": run.processed},
            actor_kind="system",
        )
    return run


def quality_results(
    loaded: LoadedRouter, verdicts: Sequence[PhraseVerdict], *, has_llm: bool
) -> dict[str, Any]:
    config: RouterConfig = loaded.config
    current = Thresholds(config.min_confidence, config.local_accept_threshold)
    evaluation = evaluate(verdicts, current, has_llm=has_llm)
    suggestion = suggest_thresholds(verdicts, current, has_llm=has_llm)
    return {
        "has_llm": has_llm,
        "total": evaluation.total,
        "correct": evaluation.correct,
        "accuracy": round(evaluation.accuracy, 4),
        "llm_share": round(evaluation.llm_share, 4),
        "thresholds": {
            "min_confidence": current.min_confidence,
            "local_accept_threshold": current.local_accept_threshold,
        },
        "confusion": confusion_table(evaluation.confusion, [m.intent_name for m in loaded.members]),
        "errors": list(evaluation.errors[:MAX_ERRORS_SHOWN]),
        "error_count": len(evaluation.errors),
        "suggestion": {
            "min_confidence": suggestion.thresholds.min_confidence,
            "local_accept_threshold": suggestion.thresholds.local_accept_threshold,
            "accuracy": round(suggestion.evaluation.accuracy, 4),
            "correct": suggestion.evaluation.correct,
            "changed": suggestion.changed,
            "explanation": suggestion.explanation,
        },
    }
