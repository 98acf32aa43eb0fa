"""Suggested phrases: LLM verdicts on messages the local stage was unsure of, waiting for
an admin's one click (DESIGN §10.5: nothing is learned without it).

``suggestion_record`` is called by the turn (system work); ``suggestion_accept`` turns a
suggestion into a labelled phrase (which trains the local stage: the router's stamp moves,
so every process retrains its head on the next turn); ``suggestion_reject`` keeps the text
so it is not suggested again.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.services import audit_log_write
from routers.classification import NONE_INTENT
from routers.classification.learning import strip_pii
from routers.errors import SuggestionDecided, unknown_intent
from routers.loaders import LoadedRouter
from routers.models import (
    LabelledPhrase,
    Router,
    RouterMember,
    RouterSuggestion,
    SuggestionStatus,
)

from ._stamp import touch_router

MAX_PENDING_SUGGESTIONS = 500


def suggestion_record(
    *,
    router: Router | LoadedRouter,
    text: str,
    intent_name: str = NONE_INTENT,
    confidence: float = 0.0,
    local_intent: str | None = None,
    local_confidence: float = 0.0,
    conversation_id: uuid.UUID | None = None,
) -> RouterSuggestion | None:
    """Store a suggestion (once per text and router); None when there is nothing to store
    (no text left after stripping, already suggested, or the review queue is full)."""
    clean = strip_pii(text)
    if not clean:
        return None
    seen = RouterSuggestion.objects.filter(router_id=router.id).aggregate(
        pending=Count("pk", filter=Q(status=SuggestionStatus.PENDING)),
        same=Count("pk", filter=Q(text=clean)),
    )
    # Suggested before (a rejected text is not asked again), or a full queue: nobody is
    # reviewing, so stop piling up customer phrases.
    if seen["same"] or seen["pending"] >= MAX_PENDING_SUGGESTIONS:
        return None
    try:
        with transaction.atomic():
            suggestion = RouterSuggestion.objects.create(
                organization_id=router.organization_id,
                router_id=router.id,
                text=clean,
                intent_name=(intent_name or NONE_INTENT)[:60],
                confidence=float(confidence),
                local_intent=(local_intent or "")[:60],
                local_confidence=float(local_confidence),
                conversation_id=conversation_id,
            )
            _audit_record(router, suggestion)
    except IntegrityError:  # the same text from a concurrent turn
        return None
    return suggestion


def _audit_record(router: Router | LoadedRouter, suggestion: RouterSuggestion) -> None:
    audit_log_write(
        actor=None,
        action="router.suggestion_record",
        resource=suggestion,
        diff={"router_id": str(router.id), "intent": suggestion.intent_name},
        actor_kind="system",
    )


def suggestion_accept(
    *, suggestion: RouterSuggestion, actor: Any, intent_name: str = ""
) -> LabelledPhrase:
    """Accept (optionally as another intent): the phrase joins the labelled set and
    teaches the local stage from the next turn on. Raises ``SuggestionDecided`` when it
    was decided meanwhile (a double click, another admin): nothing is learned twice, and
    a rejected suggestion is never learned."""
    label = intent_name or suggestion.intent_name
    names = set(
        RouterMember.objects.filter(router_id=suggestion.router_id).values_list(
            "intent_name", flat=True
        )
    )
    if label not in names | {NONE_INTENT}:
        raise unknown_intent(label)
    with transaction.atomic():
        _decide(suggestion, SuggestionStatus.ACCEPTED, actor)
        phrase, _created = LabelledPhrase.objects.update_or_create(
            router_id=suggestion.router_id,
            text=suggestion.text,
            defaults={"intent_name": label, "organization_id": suggestion.organization_id},
            create_defaults={
                "intent_name": label,
                "organization_id": suggestion.organization_id,
                "created_by": actor if getattr(actor, "is_authenticated", False) else None,
            },
        )
        touch_router(suggestion.router_id)
        audit_log_write(
            actor=actor,
            action="router.suggestion_accept",
            resource=suggestion,
            diff={"intent": label, "suggested": suggestion.intent_name},
        )
    return phrase


def suggestion_reject(*, suggestion: RouterSuggestion, actor: Any) -> None:
    """Keep the text so it is not suggested again. Raises ``SuggestionDecided`` when it
    was decided meanwhile."""
    with transaction.atomic():
        _decide(suggestion, SuggestionStatus.REJECTED, actor)
        audit_log_write(
            actor=actor,
            action="router.suggestion_reject",
            resource=suggestion,
            diff={"intent": suggestion.intent_name},
        )


def _decide(suggestion: RouterSuggestion, status: str, actor: Any) -> None:
    """Claim the suggestion while it is still pending (a conditional update: of two
    concurrent decisions, the second finds it decided), else ``SuggestionDecided``."""
    now = timezone.now()
    user = actor if getattr(actor, "is_authenticated", False) else None
    claimed = RouterSuggestion.objects.filter(
        pk=suggestion.pk, status=SuggestionStatus.PENDING
    ).update(status=status, decided_at=now, decided_by=user)
    if not claimed:
        raise SuggestionDecided(_("Esta sugestão já tinha sido decidida; nada mudou."))
    suggestion.status, suggestion.decided_at, suggestion.decided_by = status, now, user
