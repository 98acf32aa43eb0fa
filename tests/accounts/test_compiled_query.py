"""``accounts.db.compiled.CompiledQuery``: a hot-path lookup compiled once answers what its
queryset's ``.first()`` answers — same row, same field values, the same related objects
loaded and the same annotations — for every argument, and refuses a query whose SQL
depends on its values instead of running it wrong.

The oracle is Django's own queryset run on the same data, never the compiled path."""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from typing import Any

import pytest
from django.db import connection, transaction
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.db.compiled import CompiledQuery
from cases.models import Case
from cases.selectors import _OPEN_CASES, _open_cases_query
from conversation.inbound import _KNOWN, _known_lookup
from conversation.models import Agent, ConversationStatus, Message
from conversation.outbox.chain import _ANY_PENDING, _PENDING_HEAD, _head_query, _pending_since
from conversation.turns.claim import _LOCK_BY_MESSAGE, _UNANSWERED, _lock_query, _unanswered_query
from routers.loaders import _ROUTING, _ROUTING_STICKY, _routing_query
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)

PHONES = ["5511900000001", "5511900000002", "5511900000003", "5511900009999"]


def _fields(obj: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(obj).items() if k != "_state"}


def _same(compiled: Any, orm: Any, related: tuple[str, ...] = ()) -> None:
    assert (compiled is None) == (orm is None)
    if orm is None:
        return
    assert type(compiled) is type(orm)
    assert _fields(compiled) == _fields(orm)
    for name in related:
        with CaptureQueriesContext(connection) as captured:
            mine = getattr(compiled, name)
        assert not captured.captured_queries, f"{name} was not loaded with the row"
        theirs = getattr(orm, name)
        assert (mine is None) == (theirs is None)
        if theirs is not None:
            assert _fields(mine) == _fields(theirs)


@pytest.fixture
def world() -> dict[str, Any]:
    org = factories.make_org("Compilada")
    other = factories.make_org("Outra")
    channel = factories.make_channel(org, agent=factories.make_agent(org, "Suporte"))
    open_one = factories.make_conversation(channel, PHONES[0])
    closed = factories.make_conversation(channel, PHONES[1])
    closed.status = ConversationStatus.CLOSED
    closed.save(update_fields=["status"])
    factories.make_conversation(channel, PHONES[2])
    message = factories.make_message(open_one, "oi", provider_message_id="wamid.known")
    return {"org": org, "other": other, "channel": channel, "message": message}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    phone=st.sampled_from(PHONES),
    event=st.sampled_from(["wamid.known", "wamid.new", ""]),
    wrong_org=st.booleans(),
)
def test_the_webhook_lookup_answers_what_its_queryset_answers(world, phone, event, wrong_org):
    channel = world["channel"]
    org_id = world["other"].pk if wrong_org else channel.organization_id
    orm = _known_lookup(channel.pk, org_id, phone, event).first()
    compiled: Any = _KNOWN.first(channel.pk, org_id, phone, event)
    _same(compiled, orm, related=("contact",))
    if orm is not None:
        assert compiled.event_stored == orm.event_stored  # type: ignore[attr-defined]


def test_the_webhook_lookup_sees_a_stored_event(world):
    channel = world["channel"]
    found: Any = _KNOWN.first(channel.pk, channel.organization_id, PHONES[0], "wamid.known")
    assert found is not None and found.event_stored is True
    fresh: Any = _KNOWN.first(channel.pk, channel.organization_id, PHONES[0], "wamid.other")
    assert fresh is not None and fresh.event_stored is False
    assert _KNOWN.first(channel.pk, channel.organization_id, PHONES[1], "x") is None  # closed


@pytest.mark.parametrize("sticky", [False, True])
@pytest.mark.parametrize("agent_kind", ["channel", "unknown"])
def test_the_routing_lookup_answers_what_its_queryset_answers(world, sticky, agent_kind):
    channel = world["channel"]
    org_id = channel.organization_id
    agent_id = channel.agent_id if agent_kind == "channel" else uuid.uuid4()
    if sticky:
        orm = _routing_query(org_id, channel.pk, agent_id).first()
        compiled = _ROUTING_STICKY.first(org_id, channel.pk, agent_id)
    else:
        orm = _routing_query(org_id, channel.pk).first()
        compiled = _ROUTING.first(org_id, channel.pk)
    _same(compiled, orm, related=("agent",))
    names = ["router_id", "router_config", "members_stamp", "members_count"]
    names += ["sticky_version_id", "sticky_name"] if sticky else []
    for name in names:
        assert getattr(compiled, name) == getattr(orm, name)
    assert compiled is not None
    assert compiled.agent.published_version == orm.agent.published_version  # type: ignore[union-attr]


def test_the_routing_lookup_of_another_organization_finds_nothing(world):
    channel = world["channel"]
    assert _ROUTING.first(world["other"].pk, channel.pk) is None


def test_the_claim_lock_answers_what_its_queryset_answers(world):
    message = world["message"]
    with transaction.atomic():
        orm = _lock_query("message", str(message.pk), messages__pk=message.pk).first()
        compiled: Any = _LOCK_BY_MESSAGE.first("message", str(message.pk), str(message.pk))
        _same(compiled, orm, related=("contact", "channel", "organization"))
        assert (compiled.already_turned, compiled.busy) == (orm.already_turned, orm.busy)  # type: ignore[union-attr]
        assert _LOCK_BY_MESSAGE.first("message", "k", str(uuid.uuid4())) is None


def test_a_locking_lookup_outside_a_transaction_is_refused(world):
    message = world["message"]
    with transaction.atomic():  # compiled here, where the compiler's own check passes
        _LOCK_BY_MESSAGE.first("message", str(message.pk), str(message.pk))
    with pytest.raises(TransactionManagementError):
        _LOCK_BY_MESSAGE.first("message", str(message.pk), str(message.pk))


def test_each_thread_compiles_for_its_own_connection(world):
    channel = world["channel"]
    query = CompiledQuery(lambda pk: Agent.objects.filter(pk=pk)[:1], (uuid.UUID(int=9),))
    assert query.first(channel.agent_id).pk == channel.agent_id  # type: ignore[union-attr]
    seen: list[Any] = []

    def other_thread() -> None:
        try:
            seen.append(query.first(channel.agent_id))
        finally:
            connection.close()

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert seen and seen[0] is not None and seen[0].pk == channel.agent_id


def test_a_query_whose_sql_depends_on_its_values_is_refused(world):
    # The argument is bound (the name) and also written into the SQL itself (the slice's
    # LIMIT): one compile cannot serve every value.
    query = CompiledQuery(lambda n: Agent.objects.filter(name=str(n))[:n], (5,))
    with pytest.raises(ValueError, match="depends on its values"):
        query.first(3)


def test_a_query_that_transforms_its_argument_is_refused(world):
    # "name LIKE 'x%'": the bound value is not the argument, so it cannot be swapped in.
    query = CompiledQuery(lambda prefix: Agent.objects.filter(name__startswith=prefix)[:1], ("S",))
    with pytest.raises(ValueError, match="every sample"):
        query.first("Su")


def test_samples_that_collide_are_refused(world):
    query = CompiledQuery(
        lambda a, b: Agent.objects.filter(name=a).exclude(name=b)[:1], ("same", "same")
    )
    with pytest.raises(ValueError, match="two samples"):
        query.first("x", "y")


def test_the_unanswered_lines_are_what_their_queryset_lists(world):
    conversation = world["message"].conversation
    for body in ("a", "b", "c"):
        factories.make_message(conversation, body)
    compiled = _UNANSWERED.all(conversation.pk)
    orm = list(_unanswered_query(conversation.pk))
    assert [m.pk for m in compiled] == [m.pk for m in orm] and len(orm) == 4
    for mine, theirs in zip(compiled, orm, strict=True):
        assert _fields(mine) == _fields(theirs)
    assert _UNANSWERED.all(uuid.uuid4()) == []


def test_the_open_cases_are_what_their_queryset_lists(world):
    conversation = world["message"].conversation
    for status in ("awaiting_human", "resolved", "awaiting_lead"):
        Case.objects.create(
            organization=conversation.organization,
            conversation=conversation,
            lead=conversation.contact,
            agent=world["channel"].agent,
            status=status,
            title=f"Caso {status}",
            summary="Resumo",
            blocker="Bloqueio",
            waiting_since=timezone.now(),
            opened_at=timezone.now(),
            closed_at=timezone.now() if status == "resolved" else None,
        )
    compiled = _OPEN_CASES.all(conversation.pk)
    orm = list(_open_cases_query(conversation.pk))
    assert [c.pk for c in compiled] == [c.pk for c in orm] and len(orm) == 2
    for mine, theirs in zip(compiled, orm, strict=True):
        assert _fields(mine) == _fields(theirs)  # the same deferred fields, too
        assert mine.get_deferred_fields() == theirs.get_deferred_fields()


@pytest.mark.parametrize("age_days", [0, 3, 30])
def test_the_outbox_head_is_what_its_queryset_finds(world, age_days):
    conversation = world["message"].conversation
    queued = factories.make_message(conversation, "resposta", direction="outbound", status="queued")
    since = timezone.now() - dt.timedelta(days=age_days)
    orm = _head_query(conversation.pk, _pending_since(since)).first()
    compiled: Any = _PENDING_HEAD.first(str(conversation.pk), since)
    _same(compiled, orm, related=("conversation", "channel"))
    assert compiled is not None and compiled.pk == queued.pk
    assert _ANY_PENDING.first(conversation.pk, since) is not None
    Message.objects.filter(pk=queued.pk).update(status="sent")
    assert _PENDING_HEAD.first(conversation.pk, since) is None
    assert _ANY_PENDING.first(conversation.pk, since) is None


def test_a_datetime_argument_is_bound_as_the_backend_adapts_it(world):
    # Created now: found since an hour ago, not since an hour ahead (on SQLite the bound
    # value is naive text, on PostgreSQL the aware datetime).
    conversation = world["message"].conversation
    query = CompiledQuery(
        lambda pk, since: Message.objects.filter(conversation_id=pk, created_at__gte=since)[:1],
        (uuid.UUID(int=4), dt.datetime(2000, 1, 1, tzinfo=dt.UTC)),
    )
    hour = dt.timedelta(hours=1)
    assert query.first(conversation.pk, timezone.now() - hour) is not None
    assert query.first(conversation.pk, timezone.now() + hour) is None
