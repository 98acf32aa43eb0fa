"""Thin Celery wrappers: take ids, re-fetch, call one service."""

from __future__ import annotations

from celery import shared_task

from accounts import rls
from routers import services
from routers.models import QualityRun


@shared_task(name="routers.run_quality_run")
@rls.runs_in_tenant_of(QualityRun, "run_id")
def run_quality_run(run_id: str) -> str | None:
    run = services.quality_run_execute(run_id)
    return run.status if run else None
