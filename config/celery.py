"""The Celery app. With no broker configured, tasks run in-process (see conversation.dispatch)."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("retaguarda")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
