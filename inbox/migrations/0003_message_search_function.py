"""The message-text search door ``app_message_search(query, max_rows)`` (PostgreSQL only).

Under the application role the tenant policy of ``conversation_message`` runs before the
(non-leakproof) full-text match, so the GIN index of inbox.0002 could not serve the app's
search. This SECURITY DEFINER function, owned by the migration role that owns the table,
matches over the index within the transaction's own organization and returns ids only
(``inbox.search_sql``). SQLite: nothing to do (the search is ``icontains`` there).
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

from inbox import search_sql


def create_function(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(search_sql.MESSAGE_SEARCH_FUNCTION_SQL, params=None)


def drop_function(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(search_sql.DROP_MESSAGE_SEARCH_FUNCTION_SQL, params=None)


class Migration(migrations.Migration):
    dependencies = [("inbox", "0002_message_body_search_index")]

    operations = [migrations.RunPython(create_function, drop_function, elidable=False)]
