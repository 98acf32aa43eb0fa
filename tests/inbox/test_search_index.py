"""The message-text search: Portuguese full-text search over the GIN index on PostgreSQL
(stems: "boletos" finds "boleto"), a substring on SQLite — the same selector either way.

Under the application role the tenant policy is a security barrier and ``@@`` /
``to_tsvector`` are not leakproof, so the app's own filter can never use the index (the
"before" test). In a tenant context the selector asks the door ``app_message_search``
(inbox.0003, SECURITY DEFINER, owned by the tables' owner), which matches over the index
within the context's organization and returns ids only (the "after" tests)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db import connection
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from accounts import rls
from conversation.models import Message
from inbox import search_sql, selectors
from inbox.selectors import ConversationFilters, conversation_list, message_matches
from tests import factories
from tests.inbox.conftest import conversation_with, membership_of

INDEX = "msg_body_fts_pt"
EXPRESSION = "to_tsvector('portuguese'::regconfig, COALESCE(body, ''::text))"


def on_postgres(test: Any) -> Any:
    """PostgreSQL only, like tests/security's RLS tests (SQLite has no index, no door)."""
    skip = pytest.mark.skipif(connection.vendor != "postgresql", reason="PG full-text search")
    return pytest.mark.postgres(skip(test))


def _ids(rows: Any, field: str = "pk") -> set[Any]:
    return set(rows.values_list(field, flat=True))


def _plan(cursor: Any, sql: str, params: Any = ()) -> str:
    cursor.execute(f"EXPLAIN {sql}", params)
    return "\n".join(row[0] for row in cursor.fetchall())


def _bound_by_rls(cursor: Any) -> bool:
    """Whether the tenant policy binds the current role (not the owner, no superuser)."""
    cursor.execute(
        "SELECT NOT (pg_has_role(current_user, c.relowner, 'USAGE') OR r.rolsuper "
        "OR r.rolbypassrls) FROM pg_class c, pg_roles r "
        "WHERE c.oid = 'conversation_message'::regclass AND r.rolname = current_user"
    )
    return bool(cursor.fetchone()[0])


@contextmanager
def _as_function_owner(cursor: Any) -> Iterator[None]:
    """The role the door runs as (SECURITY DEFINER): its owner's planner, no policy."""
    cursor.execute("SELECT current_user")
    (previous,) = cursor.fetchone()
    cursor.execute(
        "SELECT proowner::regrole::text FROM pg_proc WHERE proname = %s",
        [search_sql.FUNCTION_NAME],
    )
    (owner,) = cursor.fetchone()
    cursor.execute(f"SET ROLE {connection.ops.quote_name(owner)}")
    try:
        yield
    finally:
        cursor.execute(f"SET ROLE {connection.ops.quote_name(previous)}")


def _door(cursor: Any, query: Any, max_rows: Any = 100) -> set[Any]:
    cursor.execute("SELECT app_message_search(%s, %s)", [query, max_rows])
    return {row[0] for row in cursor.fetchall()}


def _set_org(cursor: Any, org: Any, *, bypass: str = "off") -> None:
    cursor.execute(
        "SELECT set_config('app.organization_id', %s, true), "
        "set_config('app.bypass_rls', %s, true)",
        [str(org or ""), bypass],
    )


def test_message_search_matches_words_of_the_text(world):
    hit = conversation_with(world.channel_a, phone="5511900000001", text="Meu boleto venceu ontem")
    conversation_with(world.channel_a, phone="5511900000002", text="quero trocar o tamanho")
    # Outside a context (the test session's lifted walls) and inside one (the door on PG).
    assert _ids(message_matches(world.org_a.pk, "boleto"), "conversation_id") == {hit.pk}
    with rls.tenant_context(world.org_a.pk):
        assert _ids(message_matches(world.org_a.pk, "boleto"), "conversation_id") == {hit.pk}
        if connection.vendor == "postgresql":
            # Portuguese stemming and accents: plural and inflected forms find the line.
            for query in ("boletos", "vencer"):
                rows = message_matches(world.org_a.pk, query)
                assert _ids(rows, "conversation_id") == {hit.pk}, query


def test_sqlite_searches_a_substring_and_never_the_door(world):
    conversation_with(world.channel_a, phone="5511900000001", text="boleto")
    with rls.tenant_context(world.org_a.pk):
        sql = str(message_matches(world.org_a.pk, "boleto").query)
    if connection.vendor == "postgresql":
        assert search_sql.FUNCTION_NAME in sql and "LIKE" not in sql.upper()
    else:
        # SQLite has no text-search config: no index, no door, ``icontains``.
        assert "LIKE" in sql.upper() and search_sql.FUNCTION_NAME not in sql


@on_postgres
def test_the_index_the_filter_and_the_door_share_one_expression(world):
    conversation_with(world.channel_a, phone="5511900000001", text="boleto")
    outside = message_matches(world.org_a.pk, "boleto")  # no context: the plain filter
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [INDEX])
        (indexdef,) = cursor.fetchone()
        cursor.execute(
            "SELECT p.prosrc, p.prosecdef, p.provolatile, p.proconfig, "
            "pg_get_userbyid(p.proowner), pg_get_userbyid(c.relowner) "
            "FROM pg_proc p, pg_class c "
            "WHERE p.proname = %s AND c.oid = 'conversation_message'::regclass",
            [search_sql.FUNCTION_NAME],
        )
        source, definer, volatility, config, owner, table_owner = cursor.fetchone()
        plan = _plan(cursor, *outside.query.sql_with_params())
    assert "USING gin" in indexdef and EXPRESSION in indexdef
    assert EXPRESSION in plan  # Django's SearchVector, byte for byte the index's
    # The function is the migration's, defined by the table's owner, with a fixed path.
    assert source == search_sql.SEARCH_BODY_SQL
    assert EXPRESSION.replace("(body", "(m.body") in " ".join(source.split())
    assert (definer, volatility, config) == (True, "s", ["search_path=pg_catalog, public"])
    assert owner == table_owner


@on_postgres
def test_before_the_app_roles_own_filter_cannot_use_the_index(world):
    conversation_with(world.channel_a, phone="5511900000001", text="boleto")
    with rls.tenant_context(world.org_a.pk), connection.cursor() as cursor:
        bound = _bound_by_rls(cursor)
        cursor.execute("SET LOCAL enable_seqscan = off")
        # The old selector's query (the unscoped match, what the index alone could answer).
        unscoped = Message.objects.annotate(
            search=SearchVector("body", config="portuguese")
        ).filter(search=SearchQuery("boleto", config="portuguese", search_type="websearch"))
        plan = _plan(cursor, *unscoped.query.sql_with_params())
        cursor.execute("RESET enable_seqscan")
    assert EXPRESSION in plan
    if bound:
        # The policy (a security barrier) runs before the non-leakproof ``@@``: the match
        # is a Filter over the organization's rows, never an index condition.
        assert INDEX not in plan, plan
    else:  # an owner or superuser session: no policy, the index serves
        assert INDEX in plan, plan


def _crowd(world: Any, per_org: int) -> None:
    """Ordinary chatter in both organizations, so the planner weighs a real choice (on a
    handful of rows any plan is as cheap, and it picks the organization's btree)."""
    rows = []
    for n, (org, channel) in enumerate(
        ((world.org_a, world.channel_a), (world.org_b, world.channel_b))
    ):
        conversation = conversation_with(channel, phone=f"551190000009{n}")
        rows += [
            Message(
                organization=org,
                conversation=conversation,
                channel=channel,
                body=f"quero trocar o tamanho {i}",
                direction="inbound",
                sender_kind="customer",
                status="received",
            )
            for i in range(per_org)
        ]
    Message.objects.bulk_create(rows, batch_size=1000)


@on_postgres
def test_after_the_door_matches_over_the_index_under_the_app_role(world):
    hit = conversation_with(world.channel_a, phone="5511900000001", text="Meu boleto venceu")
    _crowd(world, per_org=1500)
    with rls.tenant_context(world.org_a.pk), connection.cursor() as cursor:
        bound = _bound_by_rls(cursor)
        # The door's query as the function runs it: as its owner, with a generic plan
        # (the arguments are parameters inside a SQL function).
        with _as_function_owner(cursor):
            cursor.execute("ANALYZE conversation_message")  # rolled back with the test
            cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
            cursor.execute(f"PREPARE door_body(text, integer) AS {search_sql.SEARCH_BODY_SQL}")
            try:
                inner = _plan(cursor, "EXECUTE door_body('boleto', 10)")
            finally:
                cursor.execute("DEALLOCATE door_body")
        # The function itself, called by the application role through the selector: the
        # GIN index's scan count in this transaction grows.
        cursor.execute("SELECT pg_stat_get_xact_numscans(%s::regclass)", [INDEX])
        (scans_before,) = cursor.fetchone()
        found = _ids(message_matches(world.org_a.pk, "boleto"), "conversation_id")
        cursor.execute("SELECT pg_stat_get_xact_numscans(%s::regclass)", [INDEX])
        (scans_after,) = cursor.fetchone()
        cursor.execute("RESET enable_seqscan")
        cursor.execute("RESET plan_cache_mode")
    assert bound  # the test runs as the application role (DATABASE_APP_ROLE)
    assert f"Bitmap Index Scan on {INDEX}" in inner, inner
    assert found == {hit.pk}
    assert scans_after > scans_before


@on_postgres
def test_the_door_never_returns_another_organizations_ids(world):
    mine = factories.make_message(
        conversation_with(world.channel_a, phone="5511900000001"), "meu pix atrasou ontem"
    )
    theirs = factories.make_message(
        conversation_with(world.channel_b, phone="5511900000002"), "meu boleto venceu"
    )
    with connection.cursor() as cursor:
        _set_org(cursor, world.org_a.pk)
        in_a = (_door(cursor, "boleto"), _door(cursor, "pix"), _door(cursor, "ontem"))
        _set_org(cursor, world.org_b.pk)
        in_b = _door(cursor, "boleto")
        _set_org(cursor, "")
        nowhere = _door(cursor, "ontem")
        # The owner session's lifted walls (how fixtures run) open no door: no context, none.
        _set_org(cursor, "", bypass="on")
        lifted = _door(cursor, "ontem")
        _set_org(cursor, world.org_a.pk)
        odd = [_door(cursor, None), _door(cursor, "!!! & | <-> ()")]
        odd += [_door(cursor, "ontem", rows) for rows in (0, -1, None)]
    assert in_a == (set(), {mine.pk}, {mine.pk})
    assert in_b == {theirs.pk}
    assert (nowhere, lifted) == (set(), set())
    assert odd == [set()] * 5
    # Through the selector: A's member searching B's word sees nothing.
    with rls.tenant_context(world.org_a.pk):
        assert _ids(message_matches(world.org_a.pk, "boleto")) == set()
        assert _ids(message_matches(world.org_b.pk, "boleto")) == set()


@on_postgres
def test_the_door_keeps_the_newest_matches_up_to_its_cap(world, monkeypatch):
    conversation = conversation_with(world.channel_a, phone="5511900000001")
    rows = [factories.make_message(conversation, f"boleto {i}") for i in range(4)]
    for i, row in enumerate(rows):  # distinct, known ages: 0 oldest
        Message.objects.filter(pk=row.pk).update(created_at=row.created_at.replace(year=2020 + i))
    monkeypatch.setattr(selectors, "SEARCH_MAX_MESSAGES", 2)
    with rls.tenant_context(world.org_a.pk):
        capped = _ids(message_matches(world.org_a.pk, "boleto"))
    assert capped == {rows[3].pk, rows[2].pk}


_WORDS = ["boleto", "boletos", "venceu", "vencer", "troca", "trocar", "pix", "oi", "não", "ç"]
_QUERIES = st.lists(
    st.sampled_from([*_WORDS, "-", '"', " or ", "OR", "&", "!", "  "]), max_size=5
).map(" ".join)


@pytest.fixture
def small_world(world: Any) -> Any:
    texts_a = ["Meu boleto venceu ontem", "quero trocar o tamanho", "oi, o pix não caiu", ""]
    for i, text in enumerate(texts_a):
        conversation_with(world.channel_a, phone=f"551190000000{i}", text=text)
    for i, text in enumerate(["boletos vencidos", "oi", "troca"]):
        conversation_with(world.channel_b, phone=f"551190000001{i}", text=text)
    return world


@on_postgres
def test_the_small_world_has_matches_to_compare(small_world):
    # The comparison below is not vacuous: the door finds A's lines, never B's.
    with rls.tenant_context(small_world.org_a.pk):
        found = {
            query: sorted(
                message_matches(small_world.org_a.pk, query).values_list("body", flat=True)
            )
            for query in ("boletos", "trocar", "boleto or pix", "oi -pix")
        }
    assert found == {
        "boletos": ["Meu boleto venceu ontem"],
        "trocar": ["quero trocar o tamanho"],
        "boleto or pix": ["Meu boleto venceu ontem", "oi, o pix não caiu"],
        "oi -pix": [],
    }


@on_postgres
@example(query="boleto")
@example(query='"pix não" -boleto')
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=_QUERIES)
def test_the_door_finds_exactly_what_the_filter_finds(small_world, query):
    world = small_world
    filtered = _ids(message_matches(world.org_a.pk, query))  # no context: the plain filter
    member = membership_of(world.viewer)
    listed = _ids(conversation_list(member, ConversationFilters(q=query)))
    with rls.tenant_context(world.org_a.pk):
        door = _ids(message_matches(world.org_a.pk, query))
        listed_in_context = _ids(conversation_list(member, ConversationFilters(q=query)))
    assert door == filtered
    assert listed_in_context == listed
