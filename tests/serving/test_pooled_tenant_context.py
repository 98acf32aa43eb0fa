"""The tenant walls hold when connections are shared: behind PgBouncer in transaction mode,
and on Django's psycopg pool across the threads of a turn worker.

``accounts.rls`` sets the organization with ``set_config(..., true)`` — transaction-local —
so a server connection handed from one client (or thread) to the next carries nothing of
the previous transaction. Both tests force the sharing (one server connection for two
clients) and interleave the two organizations' transactions on it, strictly alternating.

Behind PgBouncer the application logs in *as* the application role (no ``SET ROLE``: a
session-level ``SET ROLE`` would stay on whichever server connection ran it, and a later
transaction could land on one that never did). Migrations go straight to PostgreSQL as the
owner (README "Capacity").
"""

from __future__ import annotations

import copy
import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from celery.fixups.django import DjangoWorkerFixup
from django.db import DatabaseError, connection, connections

import accounts.db.base
from accounts import rls
from accounts.db.base import DatabaseWrapper
from config.celery import app as celery_app
from conversation.models import Contact
from tests import factories
from tests.serving.pgbouncer import INSTALL_HINT, pgbouncer

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the walls are PostgreSQL's"),
    pytest.mark.django_db(transaction=True),
]

ALIAS = "pooled"


def _app_role() -> str:
    role = str((connection.settings_dict.get("OPTIONS") or {}).get("assume_role") or "")
    if not role:
        pytest.fail("needs DATABASE_APP_ROLE, the non-owner role (scripts/test.sh sets it)")
    return role


def _settings(**overrides: Any) -> dict[str, Any]:
    """The test database's settings with ``overrides`` (host, user, options...)."""
    settings_dict = copy.deepcopy(connection.settings_dict)
    settings_dict.update(overrides)
    return settings_dict


def _close_pool() -> None:
    pool = DatabaseWrapper._connection_pools.pop(ALIAS, None)
    if pool is not None:
        pool.close()


def _alternate(settings_dict: dict[str, Any], *threads: list[Callable[[], Any]]) -> list[list[Any]]:
    """Run the steps of each thread in strict rotation (t0 step 0, t1 step 0, t0 step 1...),
    each list on its own thread with its own ``ALIAS`` connection (``settings_dict``), not
    registered in settings (Django's test case refuses threads on a declared alias it was
    not told about); returns each thread's results (an exception is a result)."""
    turn = threading.Condition()
    state = {"next": 0}
    width = len(threads)
    results: list[list[Any]] = [[] for _ in threads]

    def run(index: int) -> None:
        connections[ALIAS] = DatabaseWrapper(settings_dict, ALIAS)
        for step_no, step in enumerate(threads[index]):
            me = step_no * width + index
            with turn:
                if not turn.wait_for(lambda me=me: state["next"] == me, timeout=30):
                    results[index].append(TimeoutError(f"step {me} never came"))
                    return
            try:
                results[index].append(step())
            except Exception as exc:  # recorded, asserted by the test
                results[index].append(exc)
            finally:
                with turn:
                    state["next"] += 1
                    turn.notify_all()
        connections[ALIAS].close()
        del connections[ALIAS]

    workers = [threading.Thread(target=run, args=(i,)) for i in range(width)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    return results


def _backend() -> tuple[int, str]:
    with connections[ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid(), current_user")
        pid, user = cursor.fetchone()
    return int(pid), str(user)


def _phones(organization_id: uuid.UUID) -> Callable[[], tuple[list[str], tuple[int, str]]]:
    def step() -> tuple[list[str], tuple[int, str]]:
        with rls.tenant_context(organization_id, using=ALIAS):
            phones = sorted(Contact.objects.using(ALIAS).values_list("phone", flat=True))
            backend = _backend()
        return phones, backend

    return step


def _no_context_count() -> int:
    return Contact.objects.using(ALIAS).count()


def _insert_into(context_org: uuid.UUID, row_org: uuid.UUID) -> Callable[[], str]:
    def step() -> str:
        try:
            with rls.tenant_context(context_org, using=ALIAS):
                Contact.objects.using(ALIAS).create(organization_id=row_org, phone="5511900000099")
        except DatabaseError:
            return "refused"
        return "stored"

    return step


@pytest.fixture
def two_orgs(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, list[str], list[str]]:
    org_a, org_b = factories.make_org("A"), factories.make_org("B")
    phones_a, phones_b = ["5511900000001", "5511900000002"], ["5511900000003"]
    for org, phones in ((org_a, phones_a), (org_b, phones_b)):
        for phone in phones:
            Contact.objects.create(organization=org, phone=phone)
    # The test process lifts the walls on every new connection (fixtures write any org);
    # the pooled connections must be the application's, walls up.
    monkeypatch.setattr(accounts.db.base, "_test_session", False)
    return org_a, org_b, phones_a, phones_b


def _assert_walls_held(
    results: list[list[Any]], org_a: Any, phones_a: list[str], phones_b: list[str], role: str
) -> None:
    (a_first, a_none, a_again), (b_first, b_cross, b_again) = results
    for result in (a_first, a_again, b_first, b_again):
        assert not isinstance(result, BaseException), result
    assert a_first[0] == a_again[0] == phones_a
    assert b_first[0] == b_again[0] == phones_b
    assert a_none == 0  # the transaction after B's on the same server connection: no context
    assert b_cross == "refused"  # B's context cannot write A's row
    backends = {a_first[1], a_again[1], b_first[1], b_again[1]}
    assert backends == {a_first[1]}, "the two clients did not share one server connection"
    assert a_first[1][1] == role
    assert Contact.objects.filter(organization=org_a).count() == len(phones_a)


def test_tenant_context_holds_behind_pgbouncer_transaction_pooling(two_orgs):
    org_a, org_b, phones_a, phones_b = two_orgs
    role = _app_role()
    try:
        pooler = pgbouncer(users=[role], pool_size=1)
        port = pooler.__enter__()
    except RuntimeError as exc:
        pytest.fail(f"{exc} — {INSTALL_HINT}")
    try:
        # Logged in as the application role itself; no SET ROLE (see the module docstring).
        options = {k: v for k, v in (connection.settings_dict["OPTIONS"] or {}).items()}
        options.pop("assume_role", None)
        options.pop("pool", None)
        results = _alternate(
            _settings(HOST="127.0.0.1", PORT=str(port), USER=role, PASSWORD="", OPTIONS=options),
            [_phones(org_a.pk), _no_context_count, _phones(org_a.pk)],
            [_phones(org_b.pk), _insert_into(org_b.pk, org_a.pk), _phones(org_b.pk)],
        )
    finally:
        pooler.__exit__(None, None, None)
    _assert_walls_held(results, org_a, phones_a, phones_b, role)


def test_tenant_context_holds_on_the_connection_pool_across_worker_threads(two_orgs):
    """``DB_POOL_MAX_SIZE``: one pooled connection, two task threads. Celery's Django fixup
    closes the thread's connection before and after every task — with the pool, that hands
    it back, and the next task (on the other thread) takes the same connection."""
    org_a, org_b, phones_a, phones_b = two_orgs
    role = _app_role()
    fixup = DjangoWorkerFixup(celery_app)
    task = celery_app.tasks["conversation.run_inbound_turn"]

    def as_task(step: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            fixup.on_task_prerun(sender=task)
            connections["default"].ensure_connection()
            try:
                return step()
            finally:
                fixup.on_task_postrun(sender=task)
                # The fixup closed this thread's connections (it walks the configured
                # aliases; ``ALIAS`` is not one, so close it the same way)...
                assert connections["default"].connection is None
                connections[ALIAS].close()
                # ...and, pooled, close hands the connection back to the pool.
                assert connections[ALIAS].connection is None

        return run

    options = dict(connection.settings_dict["OPTIONS"] or {})
    options["pool"] = {"min_size": 1, "max_size": 1, "timeout": 10}
    try:
        results = _alternate(
            _settings(OPTIONS=options, CONN_MAX_AGE=0),
            [as_task(s) for s in (_phones(org_a.pk), _no_context_count, _phones(org_a.pk))],
            [
                as_task(s)
                for s in (
                    _phones(org_b.pk),
                    _insert_into(org_b.pk, org_a.pk),
                    _phones(org_b.pk),
                )
            ],
        )
    finally:
        _close_pool()
    _assert_walls_held(results, org_a, phones_a, phones_b, role)


def _session_steps(organization_id: uuid.UUID, other: uuid.UUID) -> list[Callable[[], Any]]:
    """A turn's ``tenant_session`` spread over three steps, one transaction each on the
    shared server connection: open it and read with no transaction (the decide step's
    reads), write another organization's row in an ``atomic`` (the finish), read again
    and close it. The other client's steps run between them on the same server
    connection."""
    from django.db import transaction

    from conversation.turns.tenancy import tenant_session

    opened: list[Any] = []

    def open_and_read() -> tuple[list[str], tuple[int, str]]:
        session = tenant_session(organization_id, using=ALIAS)
        session.__enter__()
        opened.append(session)
        return sorted(Contact.objects.using(ALIAS).values_list("phone", flat=True)), _backend()

    def cross_write() -> str:
        try:
            with transaction.atomic(using=ALIAS):
                Contact.objects.using(ALIAS).create(organization_id=other, phone="5511900000098")
        except DatabaseError:
            return "refused"
        return "stored"

    def read_and_close() -> tuple[list[str], tuple[int, str]]:
        try:
            return (
                sorted(Contact.objects.using(ALIAS).values_list("phone", flat=True)),
                _backend(),
            )
        finally:
            opened.pop().__exit__(None, None, None)

    return [open_and_read, cross_write, read_and_close]


def test_turn_tenant_session_holds_behind_pgbouncer_transaction_pooling(two_orgs):
    """The turn's walls are per transaction: two turns of two organizations, interleaved
    on one server connection, each see only their own rows in every step — the reads with
    no transaction open too — and cannot write the other's."""
    org_a, org_b, phones_a, phones_b = two_orgs
    role = _app_role()
    try:
        pooler = pgbouncer(users=[role], pool_size=1)
        port = pooler.__enter__()
    except RuntimeError as exc:
        pytest.fail(f"{exc} — {INSTALL_HINT}")
    try:
        options = {k: v for k, v in (connection.settings_dict["OPTIONS"] or {}).items()}
        options.pop("assume_role", None)
        options.pop("pool", None)
        results = _alternate(
            _settings(HOST="127.0.0.1", PORT=str(port), USER=role, PASSWORD="", OPTIONS=options),
            _session_steps(org_a.pk, org_b.pk),
            _session_steps(org_b.pk, org_a.pk),
        )
    finally:
        pooler.__exit__(None, None, None)
    (a_first, a_cross, a_again), (b_first, b_cross, b_again) = results
    for result in (a_first, a_again, b_first, b_again):
        assert not isinstance(result, BaseException), result
    assert a_first[0] == a_again[0] == phones_a
    assert b_first[0] == b_again[0] == phones_b
    assert a_cross == b_cross == "refused"
    assert {a_first[1], a_again[1], b_first[1], b_again[1]} == {a_first[1]}
    assert a_first[1][1] == role


def test_tenant_context_holds_on_prepared_statements(two_orgs):
    """``DB_PREPARED_STATEMENTS``: psycopg prepares a statement on its connection and runs
    the cached plan after. One pooled connection, two organizations' transactions on it in
    turn, every statement prepared at its first run: the same prepared read returns each
    organization's rows only, and nothing without a context — the policy reads the
    transaction's setting at every execution, the plan does not keep it."""
    org_a, org_b, phones_a, phones_b = two_orgs
    role = _app_role()
    options = dict(connection.settings_dict["OPTIONS"] or {})
    options.update(server_side_binding=True, prepare_threshold=0)
    options["pool"] = {"min_size": 1, "max_size": 1, "timeout": 10}

    def handing_back(step: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            try:
                return step()
            finally:
                connections[ALIAS].close()  # pooled: back to the pool, for the other thread

        return run

    def prepared_here() -> list[str]:
        with connections[ALIAS].cursor() as cursor:
            cursor.execute("SELECT statement FROM pg_prepared_statements")
            return [str(row[0]) for row in cursor.fetchall()]

    try:
        results = _alternate(
            _settings(OPTIONS=options, CONN_MAX_AGE=0),
            [
                handing_back(s)
                for s in (_phones(org_a.pk), _no_context_count, _phones(org_a.pk), prepared_here)
            ],
            [
                handing_back(s)
                for s in (_phones(org_b.pk), _insert_into(org_b.pk, org_a.pk), _phones(org_b.pk))
            ],
        )
    finally:
        _close_pool()
    *walls, statements = results[0]
    _assert_walls_held([walls, results[1]], org_a, phones_a, phones_b, role)
    assert not isinstance(statements, BaseException), statements
    # The reads above ran as prepared statements on that one connection.
    assert any('FROM "conversation_contact"' in sql for sql in statements), statements
