"""LGPD erasure reaches append-only timelines (issue 15).

Every existing policy is re-created from ``accounts.rls_policies``: an append-only table's
UPDATE now also passes inside a transaction that set ``app.erasing`` (``rls.erasure``), so
erasing a contact can blank the text their case timelines hold. Deletes stay owner-only.
"""

from django.db import migrations

from accounts import rls_policies


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(rls_policies.EXISTING_POLICIES_SQL)
        existing = [(table, bool(append_only)) for table, append_only in cursor.fetchall()]
    for statement in rls_policies.reapply_policies_sql(existing):
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0005_invitation"),
        # Every app's append-only tables exist by then.
        ("cases", "0003_assignment_attention_staff_numbers"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop, elidable=False)]
