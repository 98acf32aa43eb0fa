"""Starting a quality run: a second start while one is queued or running joins it (a
double click or two managers must not pay the model calls twice), a run whose task was
lost does not block the router forever, and a finished run never blocks the next."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.utils import timezone

from accounts.models import AuditLog
from routers import services
from routers.models import LabelledPhrase, QualityRun
from routers.services.quality_runs import ABANDONED_AFTER, quality_run_execute


@pytest.fixture
def router(world, router):
    for text, intent in [("quanto custa?", "vendas"), ("o app travou", "suporte")]:
        LabelledPhrase.objects.create(
            organization=world.org_a, router=router, text=text, intent_name=intent
        )
    return router


def test_a_double_click_on_measure_queues_one_run(
    world, router, django_capture_on_commit_callbacks
):
    client = world.client_for(world.manager)
    url = f"/roteadores/{router.pk}/qualidade/rodar/"

    with django_capture_on_commit_callbacks(execute=False) as queued:
        assert client.post(url).status_code == 302
        assert client.post(url).status_code == 302

    assert QualityRun.objects.count() == 1
    assert len(queued) == 1  # one task: the model calls are paid once
    start = AuditLog.objects.get(action="router.quality_run_start")  # one start happened
    assert start.resource_id == str(QualityRun.objects.get().pk)


def test_the_api_answers_a_second_start_with_the_run_already_going(world, router):
    client = world.client_for(world.manager)
    url = f"/api/v1/ai/routers/{router.pk}/quality-runs"
    first = client.post(url, data=json.dumps({}), content_type="application/json")
    second = client.post(url, data=json.dumps({}), content_type="application/json")
    assert first.status_code == second.status_code == 202
    assert first.json()["data"]["run"]["id"] == second.json()["data"]["run"]["id"]


def test_a_run_whose_task_was_lost_is_failed_and_a_new_one_starts(world, router):
    old = QualityRun.objects.create(
        organization=world.org_a, router=router, status="running", total=2, processed=1
    )
    long_ago = timezone.now() - ABANDONED_AFTER - dt.timedelta(minutes=1)
    QualityRun.objects.filter(pk=old.pk).update(created_at=long_ago, started_at=long_ago)

    new = services.quality_run_start(router=router, actor=world.manager)

    old.refresh_from_db()
    assert (old.status, old.error_code) == ("failed", "abandoned")
    assert old.finished_at is not None
    assert new.pk != old.pk and new.status == "queued"


def test_a_lost_task_that_runs_after_all_finds_its_run_claimed(world, router):
    old = QualityRun.objects.create(organization=world.org_a, router=router, total=2)
    long_ago = timezone.now() - ABANDONED_AFTER - dt.timedelta(minutes=1)
    QualityRun.objects.filter(pk=old.pk).update(created_at=long_ago)
    services.quality_run_start(router=router, actor=world.manager)

    assert quality_run_execute(str(old.pk)) is None
    assert QualityRun.objects.get(pk=old.pk).status == "failed"


def test_a_finished_run_does_not_block_the_next(world, router):
    QualityRun.objects.create(organization=world.org_a, router=router, status="done", total=2)
    run = services.quality_run_start(router=router, actor=world.manager)
    assert run.status == "queued" and QualityRun.objects.count() == 2
