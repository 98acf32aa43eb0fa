"""Quality runs: the router's cascade over its labelled phrases, queued by a person and
executed by the ``routers.run_quality_run`` task.

The labelled phrases also teach the local stage, so a phrase is never scored by a head
that learned it: the set is split into ``QUALITY_FOLDS`` stable folds and each fold is
classified by a router taught by the other folds (cross-fitting). The figures, and the
thresholds the run suggests, are therefore what the router would do on new messages.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import logging
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.services import audit_log_write
from conversation import model_calls
from conversation.dispatch import enqueue
from routers.cascade_runner import classifier_client, classify_message
from routers.classification import CascadeResult, classify_with_llm
from routers.errors import RouterInvalid
from routers.loaders import LoadedRouter, load_router
from routers.models import LabelledPhrase, QualityRun, QualityRunStatus, Router
from routers.quality import PhraseVerdict, Thresholds, quality_results

log = logging.getLogger(__name__)

QUALITY_FOLDS = 5
# The run's task is killed after 11 minutes (``config/settings/work.py``): a run still
# unfinished this long after it was queued or started has no task left to finish it.
ABANDONED_AFTER = dt.timedelta(minutes=15)


def _fold(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16) % QUALITY_FOLDS


def _taught_without(loaded: LoadedRouter, fold: int) -> LoadedRouter:
    return dataclasses.replace(
        loaded, phrases=tuple(p for p in loaded.phrases if _fold(p.text) != fold)
    )


def quality_run_start(*, router: Router, actor: Any) -> QualityRun:
    """Queue a run over the current labelled set; the task starts after commit.

    While a run of this router is queued or running, that run is the answer (a double
    click, two people at once): no second run, so no second bill of model calls, and
    nothing written (the run's own start is audited). A run left unfinished past
    ``ABANDONED_AFTER`` (its task lost, its worker killed) is marked failed and a new one
    starts. Locks the router's row for the check."""
    with transaction.atomic():
        Router.objects.select_for_update().filter(pk=router.pk).first()
        total = LabelledPhrase.objects.filter(router=router).count()
        if total == 0:
            raise RouterInvalid(_("Adicione frases rotuladas antes de medir o roteador."))
        unfinished = _unfinished_run(router)
        if unfinished is not None:
            return unfinished
        run = QualityRun.objects.create(
            organization_id=router.organization_id,
            router=router,
            total=total,
            created_by=actor if getattr(actor, "is_authenticated", False) else None,
        )
        audit_log_write(
            actor=actor,
            action="router.quality_run_start",
            resource=run,
            diff={"router_id": str(router.pk), "phrases": total},
        )
        enqueue("routers.run_quality_run", str(run.pk))
    return run


def _unfinished_run(router: Router) -> QualityRun | None:
    """The router's queued or running run, if it is still alive; an abandoned one is
    marked failed (a conditional update: its task, should it run after all, finds it
    claimed and does nothing)."""
    unfinished = (
        QualityRun.objects.filter(
            router=router, status__in=(QualityRunStatus.QUEUED, QualityRunStatus.RUNNING)
        )
        .order_by("-created_at")
        .first()
    )
    if unfinished is None:
        return None
    now = timezone.now()
    if (unfinished.started_at or unfinished.created_at) > now - ABANDONED_AFTER:
        return unfinished
    QualityRun.objects.filter(pk=unfinished.pk, status=unfinished.status).update(
        status=QualityRunStatus.FAILED, error_code="abandoned", finished_at=now
    )
    return None


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
    ledger = model_calls.Ledger(
        organization_id=organization.pk, provider=model_calls.provider_name()
    )
    try:
        loaded = load_router(router)
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
        folds = {k: _taught_without(loaded, k) for k in range(QUALITY_FOLDS)}
        for i, (text, expected) in enumerate(phrases, start=1):
            result = classify_message(
                folds[_fold(text.strip())],
                text,
                recorder=ledger,
                org_settings=organization.settings,
                context=context,
            )
            verdicts.append(_verdict(text, expected, result, loaded, llm, context))
            if i % step == 0 and i < len(phrases):
                QualityRun.objects.filter(pk=run.pk).update(processed=i)
                ledger.flush()
        config = loaded.config
        run.results = quality_results(
            verdicts,
            Thresholds(config.min_confidence, config.local_accept_threshold),
            [m.intent_name for m in loaded.members],
            has_llm=llm is not None,
        )
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
            actor=None,
            action="router.quality_run_finish",
            resource=run,
            diff={"status": run.status, "processed": run.processed},
            actor_kind="system",
        )
    return run
