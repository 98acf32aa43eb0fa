"""The organization of a turn across its steps.

A turn runs in three steps — claim (a short transaction), decide (no transaction: the
router's classifier, the billing backend and the model are network calls), finish (a
short transaction). On PostgreSQL ``rls.tenant_context`` is one transaction, so it cannot
span the decide step: ``tenant_session`` puts up the same walls (this organization, no
bypass) at session level for the length of the task, and puts back what was there when it
ends; a connection that cannot be reset is closed rather than left with them. Inside an
open transaction (the test process, or a caller's ``atomic``) it is ``tenant_context``.
On SQLite only the context variable is set.

TODO(accounts): this belongs in ``accounts.rls`` beside ``tenant_context`` (it reaches
for its private ``_swap``/``_organization``); move it there and keep the name.
"""

from __future__ import annotations

import functools
import inspect
import logging
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from django.db import connections, models

from accounts import rls

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
_WALLS = (rls.ORG_SETTING, rls.BYPASS_SETTING)


@contextmanager
def tenant_session(organization_id: uuid.UUID, *, using: str = "default") -> Iterator[None]:
    """Work for one organization across several transactions (see the module docstring)."""
    wrapper = connections[using]
    if wrapper.in_atomic_block:
        with rls.tenant_context(organization_id, using=using):
            yield
        return
    token = rls._organization.set(organization_id)
    try:
        if not rls.enforced(using):
            yield
            return
        values = {rls.ORG_SETTING: str(organization_id), rls.BYPASS_SETTING: "off"}
        previous = rls._swap(using, values, local=False)
        try:
            yield
        finally:
            try:
                rls._swap(using, {k: previous[k] for k in _WALLS}, local=False)
            except Exception:
                log.warning("tenant session not reset: connection closed")
                wrapper.close()
    finally:
        rls._organization.reset(token)


def runs_in_tenant_session_of(model: type[models.Model], arg: str) -> Callable[[F], F]:
    """Task decorator like ``rls.runs_in_tenant_of`` — the task's ``arg`` names a ``model``
    row, the body works for its organization; a vanished row ends it quietly (None) — but
    with ``tenant_session``: the body opens its own short transactions."""

    def decorator(fn: F) -> F:
        signature = inspect.signature(fn)
        if arg not in signature.parameters:
            raise TypeError(f"{fn.__name__} has no argument {arg!r}")

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            pk = signature.bind(*args, **kwargs).arguments[arg]
            organization_id = rls.organization_of(model, pk)
            if organization_id is None:
                log.info(
                    "task row vanished",
                    extra={"task": fn.__name__, "model": model._meta.label, "id": str(pk)},
                )
                return None
            with tenant_session(organization_id):
                return fn(*args, **kwargs)

        return wrapped  # type: ignore[return-value]

    return decorator
