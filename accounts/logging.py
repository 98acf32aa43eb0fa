"""Structured logs: one JSON object a line, carrying the request/task id and other ids.

Every record gets, from context variables (so no call site has to pass them):

- ``request_id`` — the web request's id (``RequestIdMiddleware``); in a Celery task, the id
  of the request that scheduled it (carried in the task's headers, ``accounts.task_logging``);
- ``task_id`` and ``task`` — inside a Celery task;
- ``organization_id`` — inside a tenant context (``accounts.rls``);
- whatever ``bind_log_ids(...)`` bound around a block, or ``set_log_ids(...)`` for the rest
  of a task (the turn package binds ``turn_id`` when it claims a turn).

A value given explicitly in ``extra`` always wins. Ids only: never message text.
"""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")
task_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("task_id", default="")
task_name_var: contextvars.ContextVar[str] = contextvars.ContextVar("task_name", default="")
# A tuple of pairs: an immutable default, copied on every bind.
_bound_ids: contextvars.ContextVar[tuple[tuple[str, str], ...]] = contextvars.ContextVar(
    "log_ids", default=()
)

_STANDARD = set(
    logging.LogRecord("", 0, "", 0, "", (), None).__dict__.keys() | {"message", "asctime"}
)


@contextmanager
def bind_log_ids(**ids: Any) -> Iterator[None]:
    """Every record logged inside the block carries these ids (``None`` values skipped)."""
    values = {k: str(v) for k, v in ids.items() if v is not None and v != ""}
    token = _bound_ids.set(tuple({**dict(_bound_ids.get()), **values}.items()))
    try:
        yield
    finally:
        _bound_ids.reset(token)


def set_log_ids(**ids: Any) -> None:
    """Bind ids for the rest of the current context — inside a Celery task, until the task
    ends (``accounts.task_logging`` scopes every task's bindings to it)."""
    values = {k: str(v) for k, v in ids.items() if v is not None and v != ""}
    _bound_ids.set(tuple({**dict(_bound_ids.get()), **values}.items()))


def task_scope() -> contextvars.Token[tuple[tuple[str, str], ...]]:
    """A task starts with no bound ids; the token puts the caller's back (task_postrun)."""
    return _bound_ids.set(())


def end_task_scope(token: contextvars.Token[tuple[tuple[str, str], ...]]) -> None:
    try:
        _bound_ids.reset(token)
    except ValueError:  # set in another context (never in Celery's own pools)
        _bound_ids.set(())


def _organization_id() -> str:
    try:  # imported late: logging is configured before the apps are loaded
        from accounts.rls import current_organization_id
    except Exception:  # a log line never fails for its context
        return ""
    organization = current_organization_id()
    return str(organization) if organization else ""


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = getattr(record, "request_id", "") or request_id_var.get()
        context = {
            "task_id": task_id_var.get(),
            "task": task_name_var.get(),
            "organization_id": _organization_id(),
            **dict(_bound_ids.get()),
        }
        for key, value in context.items():
            if value and not getattr(record, key, None):
                setattr(record, key, value)
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "event": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = (
                    value if isinstance(value, str | int | float | bool | None) else str(value)
                )
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)
