"""The organization of a turn across its steps.

A turn runs in three steps — claim (a short transaction), decide (no transaction: the
router's classifier, the billing backend and the model are network calls), finish (a
short transaction). On PostgreSQL ``rls.tenant_context`` is one transaction, so it cannot
span the decide step, and a session-level setting would be wrong behind PgBouncer in
transaction mode (the next transaction may run on another server connection, and this
one's next client would inherit the walls). So ``tenant_session`` never sets anything at
session level: for the length of the task it puts the walls (this organization, no
bypass) into **every transaction** the task opens, transaction-locally, exactly as
``rls.tenant_context`` does —

- a transaction the turn opens (``atomic``: the claim, the finish, the ledger) gets the
  walls before its first statement;
- a statement run outside any transaction (a read of the decide step) becomes a
  transaction of its own with the walls: ``BEGIN; set_config(..., true); <statement>;
  COMMIT`` — a few loopback round trips, and no transaction is ever open while the turn
  waits on the network.

This is a Django execute wrapper on the task's connection: it looks at the server's
transaction status before each statement and acts only on the first statement of a
transaction. ``rls.tenant_context``/``bypass_rls`` set their own walls before their first
statement, so they win inside the session. Inside an open transaction (the test process, or
a caller's ``atomic``) ``tenant_session`` is ``tenant_context``. On SQLite only the context
variable is set.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from django.db import connections, models, transaction

from accounts import rls

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
# The stack of organizations of the tenant sessions open on a connection wrapper (a wrapper
# belongs to one thread); the innermost one names the walls of each new transaction.
_STACK_ATTR = "_tenant_session_organizations"


def _walls(organization_id: uuid.UUID) -> dict[str, str]:
    return {rls.ORG_SETTING: str(organization_id), rls.BYPASS_SETTING: "off"}


def _needs_walls(wrapper: Any) -> bool:
    """True before the first statement of a transaction (or of an autocommit statement):
    the server has no transaction open on this connection yet."""
    from psycopg import pq

    raw = wrapper.connection
    return raw is not None and raw.info.transaction_status == pq.TransactionStatus.IDLE


def _per_transaction_walls(
    execute: Callable[..., Any], sql: Any, params: Any, many: bool, context: dict[str, Any]
) -> Any:
    """Django execute wrapper: the walls of the innermost tenant session, set
    transaction-locally in front of a transaction's first statement."""
    wrapper = context["connection"]
    stack: list[uuid.UUID] = getattr(wrapper, _STACK_ATTR, [])
    if not stack or not _needs_walls(wrapper):
        return execute(sql, params, many, context)
    values = _walls(stack[-1])
    if wrapper.in_atomic_block:
        rls._swap(wrapper.alias, values)  # opens the server transaction, walls first
        return execute(sql, params, many, context)
    with transaction.atomic(using=wrapper.alias):
        rls._swap(wrapper.alias, values)
        return execute(sql, params, many, context)


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
        stack: list[uuid.UUID] = getattr(wrapper, _STACK_ATTR, None) or []
        setattr(wrapper, _STACK_ATTR, stack)
        stack.append(organization_id)
        try:
            if len(stack) == 1:  # one wrapper per connection, however deep the nesting
                with wrapper.execute_wrapper(_per_transaction_walls):
                    yield
            else:
                yield
        finally:
            stack.pop()
    finally:
        rls._organization.reset(token)


def runs_in_tenant_session_of(model: type[models.Model], arg: str) -> Callable[[F], F]:
    """Task decorator like ``rls.runs_in_tenant_of`` — the task's ``arg`` names a ``model``
    row, the body works for its organization; a vanished row ends it quietly (None) — but
    with ``tenant_session``: the body opens its own short transactions."""
    return rls.runs_in_tenant_of(model, arg, context=tenant_session)
