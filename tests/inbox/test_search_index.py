"""The message-text search: Portuguese full-text search over the GIN index on PostgreSQL
(stems: "boletos" finds "boleto"), a substring on SQLite — the same selector either way.

The index serves sessions that row-level security does not bind (owner maintenance,
superusers); under the application role the policy runs first (see the last test)."""

from __future__ import annotations

from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db import connection

from conversation.models import Message
from inbox.selectors import message_matches
from tests.inbox.conftest import conversation_with


def test_message_search_matches_words_of_the_text(world):
    hit = conversation_with(world.channel_a, phone="5511900000001", text="Meu boleto venceu ontem")
    conversation_with(world.channel_a, phone="5511900000002", text="quero trocar o tamanho")
    found = set(message_matches(world.org_a.pk, "boleto").values_list("conversation_id", flat=True))
    assert found == {hit.pk}
    if connection.vendor == "postgresql":
        # Portuguese stemming and accents: plural and inflected forms find the line.
        for query in ("boletos", "vencer"):
            rows = message_matches(world.org_a.pk, query).values_list("conversation_id", flat=True)
            assert set(rows) == {hit.pk}, query


def test_the_search_expression_is_the_indexed_one(world):
    conversation_with(world.channel_a, phone="5511900000001", text="boleto")
    if connection.vendor != "postgresql":
        # SQLite has no text-search config: the migration adds nothing, the search is
        # ``icontains``.
        sql = str(message_matches(world.org_a.pk, "boleto").query)
        assert "LIKE" in sql.upper()
        return
    expression = "to_tsvector('portuguese'::regconfig, COALESCE(body, ''::text))"
    matches = message_matches(world.org_a.pk, "boleto")
    # The same match over every organization (what the index alone can answer).
    unscoped = Message.objects.annotate(search=SearchVector("body", config="portuguese")).filter(
        search=SearchQuery("boleto", config="portuguese", search_type="websearch")
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'msg_body_fts_pt'")
        (indexdef,) = cursor.fetchone()
        assert "USING gin" in indexdef and expression in indexdef
        cursor.execute(
            "EXPLAIN " + matches.query.sql_with_params()[0], matches.query.sql_with_params()[1]
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
        assert expression in plan  # the selector's expression is the index's, byte for byte
        cursor.execute("SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user")
        (unbound,) = cursor.fetchone()
        cursor.execute("SET LOCAL enable_seqscan = off")
        sql, params = unscoped.query.sql_with_params()
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    if unbound:
        assert "msg_body_fts_pt" in plan, plan
    else:
        # Under row-level security (the application role) PostgreSQL evaluates the tenant
        # policy before any non-leakproof operator — and ``@@``/``to_tsvector`` are not
        # leakproof — so the GIN index cannot serve the app's query: the match runs over
        # the organization's rows. Known limit, said in the report and the README notes.
        assert "msg_body_fts_pt" not in plan and expression in plan
