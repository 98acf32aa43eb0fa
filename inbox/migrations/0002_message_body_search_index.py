"""The Portuguese full-text index over message text (PostgreSQL only).

The expression is built by Django's own ``SearchVector`` so that it is the very expression
``inbox.selectors`` queries with (``to_tsvector('portuguese'::regconfig, COALESCE(body,
''))``) — a hand-written one that differs by the COALESCE would never be used. SQLite has
no full-text config: there the search falls back to ``icontains`` and this does nothing.
"""

from __future__ import annotations

from typing import Any

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector
from django.db import migrations

INDEX_NAME = "msg_body_fts_pt"


def _index() -> GinIndex:
    return GinIndex(SearchVector("body", config="portuguese"), name=INDEX_NAME)


def create_index(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.add_index(apps.get_model("conversation", "Message"), _index())


def drop_index(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.remove_index(apps.get_model("conversation", "Message"), _index())


class Migration(migrations.Migration):
    dependencies = [
        ("inbox", "0001_initial"),
        ("conversation", "0010_conversation_assignment_and_resolution"),
    ]

    operations = [migrations.RunPython(create_index, drop_index)]
