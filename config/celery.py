"""The Celery app. With no broker configured, tasks run in-process (see conversation.dispatch)."""

from __future__ import annotations

import os
from typing import Any

from celery import Celery

# Workers keep the JSON logs and carry the request id in task headers (signal receivers).
import accounts.task_logging  # noqa: F401

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("retaguarda")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def route_task(name: str, *args: Any, **kwargs: Any) -> dict[str, str] | None:
    """``CELERY_TASK_ROUTES``: the queue of a task by its name (``TASK_QUEUE_KINDS`` →
    ``CELERY_TURNS_QUEUE`` / ``CELERY_OUTBOX_QUEUE`` / ``CELERY_BULK_QUEUE``), read at
    publish time; None (the default queue) for a task the table does not name."""
    from django.conf import settings

    kind = settings.TASK_QUEUE_KINDS.get(name)
    if kind is None:
        return None
    return {"queue": getattr(settings, f"CELERY_{kind.upper()}_QUEUE")}
