"""Celery workers keep the project's JSON logs, with the ids of the task and its request.

- ``setup_logging``: with a receiver connected, Celery configures no logging of its own
  (it would otherwise take over the root logger with a plain-text handler); the worker
  keeps ``settings.LOGGING`` — one JSON object a line, like the web processes.
- ``before_task_publish``: the id of the request (or task) that schedules a task travels
  in the task's headers (``HEADER``) — every producer, through any path, no call site edit.
- ``task_prerun``/``task_postrun``: while a task runs, its id, its name and that request id
  are in the log context (``accounts.logging``); ``organization_id`` follows the tenant
  context the task enters, and ``turn_id`` what the turn package binds with
  ``set_log_ids`` when it claims a turn — both gone when the task ends.

Connected by ``config.celery`` (the app module every worker and web process imports).
"""

from __future__ import annotations

import logging
import threading
from contextvars import Token
from typing import Any

from celery import signals

from accounts.logging import (
    end_task_scope,
    request_id_var,
    task_id_var,
    task_name_var,
    task_scope,
)

HEADER = "retaguarda_request_id"

_lock = threading.Lock()
_tokens: dict[str, tuple[tuple[Token[str], Token[str], Token[str]], Token[Any]]] = {}


@signals.setup_logging.connect
def keep_project_logging(**kwargs: Any) -> None:
    """Apply ``settings.LOGGING`` (django.setup() may not have run yet in a worker)."""
    from django.conf import settings
    from django.utils.log import configure_logging

    configure_logging(settings.LOGGING_CONFIG, settings.LOGGING)
    logging.getLogger(__name__).debug("worker logging configured from settings.LOGGING")


@signals.before_task_publish.connect
def carry_request_id(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    request_id = request_id_var.get()
    if request_id and headers is not None and not headers.get(HEADER):
        headers[HEADER] = request_id


@signals.task_prerun.connect
def enter_task_context(task_id: str | None = None, task: Any = None, **kwargs: Any) -> None:
    if not task_id or task is None:
        return
    # From a broker the header is an attribute of the request; ``apply(headers=...)`` keeps
    # it under ``headers``; eager runs without one already run in the request's context.
    request = task.request
    carried = getattr(request, HEADER, "") or (getattr(request, "headers", None) or {}).get(
        HEADER, ""
    )
    request_id = str(carried or "") or request_id_var.get()
    tokens = (
        request_id_var.set(request_id),
        task_id_var.set(str(task_id)),
        task_name_var.set(str(getattr(task, "name", "") or "")),
    )
    with _lock:
        _tokens[str(task_id)] = (tokens, task_scope())


@signals.task_postrun.connect
def leave_task_context(task_id: str | None = None, **kwargs: Any) -> None:
    with _lock:
        tokens = _tokens.pop(str(task_id), None)
    if tokens is None:
        return
    own, scope = tokens
    end_task_scope(scope)
    for var, token in zip((request_id_var, task_id_var, task_name_var), own, strict=True):
        try:
            var.reset(token)
        except ValueError:  # set in another context (never in Celery's own pools)
            var.set("")
