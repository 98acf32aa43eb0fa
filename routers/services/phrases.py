"""The labelled phrases of a router: the set the quality loop measures it against, and
what teaches its local stage (every change moves the router's stamp, so each process
retrains the head on its next turn)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from accounts.services import audit_log_write, audited_delete
from routers.classification import NONE_INTENT
from routers.errors import RouterInvalid, unknown_intent
from routers.models import LabelledPhrase, Router, RouterMember

from ._stamp import touch_router

MAX_LABELLED_PHRASES = 2000


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
            raise unknown_intent(intent)
        clean.pop(text, None)
        clean[text] = intent
    if len(clean) > MAX_LABELLED_PHRASES:
        raise _too_many()
    return list(clean.items())


def _too_many() -> RouterInvalid:
    return RouterInvalid(
        _("No máximo %(n)s frases rotuladas por roteador.") % {"n": MAX_LABELLED_PHRASES}
    )


def _new_phrase(router: Router, text: str, intent: str, actor: Any) -> LabelledPhrase:
    """An unsaved labelled phrase of ``router`` (the caller bulk-creates them)."""
    return LabelledPhrase(
        organization_id=router.organization_id,
        router=router,
        text=text,
        intent_name=intent,
        created_by=actor if getattr(actor, "is_authenticated", False) else None,
    )


def _labelled_set_changed(router: Router, *, actor: Any, action: str, diff: dict[str, Any]) -> None:
    """Move the router's stamp (each process retrains its head) and audit the change, in the
    caller's transaction."""
    touch_router(router.pk)
    audit_log_write(
        actor=actor,
        action=action,
        resource=router,
        diff=diff,
    )


def labelled_phrases_replace(
    *, router: Router, actor: Any, phrases: Sequence[tuple[str, str]]
) -> int:
    """The labelled set becomes exactly ``phrases`` ((text, intent or "none"))."""
    clean = _check_phrases(router, phrases)
    with transaction.atomic():
        LabelledPhrase.objects.filter(router=router).delete()
        LabelledPhrase.objects.bulk_create(
            [_new_phrase(router, text, intent, actor) for text, intent in clean]
        )
        _labelled_set_changed(
            router,
            actor=actor,
            action="router.labelled_phrases_replace",
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
                new.append(_new_phrase(router, text, intent, actor))
            elif phrase.intent_name != intent:
                phrase.intent_name = intent
                relabelled.append(phrase)
        LabelledPhrase.objects.bulk_create(new)
        LabelledPhrase.objects.bulk_update(relabelled, ["intent_name"])
        total = LabelledPhrase.objects.filter(router=router).count()
        if total > MAX_LABELLED_PHRASES:
            raise _too_many()
        _labelled_set_changed(
            router,
            actor=actor,
            action="router.labelled_phrases_add",
            diff={"added": len(new), "relabelled": len(relabelled)},
        )
    return len(new) + len(relabelled)


def labelled_phrase_delete(*, phrase: LabelledPhrase, actor: Any) -> None:
    with transaction.atomic():
        audited_delete(
            phrase,
            actor=actor,
            action="router.labelled_phrase_delete",
            diff={"router_id": str(phrase.router_id), "intent": phrase.intent_name},
        )
        touch_router(phrase.router_id)
