"""The message-text search door: ``app_message_search(query, max_rows)`` (PostgreSQL only).

Why a door: the application role is bound by the tenant policy of ``conversation_message``,
a security barrier, and ``to_tsvector``/``@@`` are not LEAKPROOF — so the planner must apply
the policy before the match and the GIN index ``msg_body_fts_pt`` (inbox.0002) can never
serve the app's own query: every search read every message of the organization.

The function runs as the tables' owner (SECURITY DEFINER, whom the policy does not bind;
the tables ENABLE, not FORCE, row-level security) and applies the wall itself: only rows of
the organization in the transaction's ``app.organization_id`` — an unset setting matches
nothing, and it never honours the owner's bypass. It returns message ids and nothing else,
so it lets through nothing the policy would not. Like ``app_organization_of`` and
``app_organization_ids`` (accounts.rls_policies) its search_path is fixed and it relies on
the default EXECUTE of PUBLIC.

The match is the index expression byte for byte (``to_tsvector('portuguese'::regconfig,
COALESCE(body, ''::text))``, what Django's ``SearchVector`` built the index from) and the
query is ``websearch_to_tsquery`` — what ``SearchQuery(search_type="websearch")`` sends.
Created by migration ``inbox.0003``; imported by it, so change the SQL only together with
a new migration that re-runs it.
"""

from __future__ import annotations

FUNCTION_NAME = "app_message_search"

# The organization the wall admits (the tenant policy's own expression).
_CURRENT_ORG = "NULLIF(current_setting('app.organization_id', true), '')::uuid"

# The body, with the arguments as ``$1`` (query) and ``$2`` (max_rows): the function is
# created from it and the tests EXPLAIN it as the owner, which is how the function runs.
# Newest matches first, so the cap keeps those the newest-first list shows.
SEARCH_BODY_SQL = f"""
  SELECT m.id FROM conversation_message m
  WHERE m.organization_id = {_CURRENT_ORG}
    AND to_tsvector('portuguese'::regconfig, COALESCE(m.body, ''::text))
        @@ websearch_to_tsquery('portuguese'::regconfig, $1)
  ORDER BY m.created_at DESC, m.id DESC
  LIMIT GREATEST(COALESCE($2, 0), 0)
"""  # noqa: S608 — constants only

MESSAGE_SEARCH_FUNCTION_SQL = f"""
CREATE OR REPLACE FUNCTION {FUNCTION_NAME}(query text, max_rows integer) RETURNS SETOF uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $fn${SEARCH_BODY_SQL}$fn$
"""
DROP_MESSAGE_SEARCH_FUNCTION_SQL = f"DROP FUNCTION IF EXISTS {FUNCTION_NAME}(text, integer)"
