"""The walls hold against the application role itself (issue 15, item 8).

Every existing policy is re-created with the bypass predicate of ``accounts.rls_policies``:
``app.bypass_rls = 'on'`` counts only in a session that logged in as the tables' owner, so
the application role — logging in as itself in production — cannot lift the walls with
``set_config``, ``RESET ROLE`` or ``SET ROLE``. Sweeps list organization ids through the
new ``app_organization_ids()`` door instead of the bypass.
"""

from django.db import migrations

from accounts import rls_policies


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(rls_policies.EXISTING_POLICIES_SQL)
        existing = [(table, bool(append_only)) for table, append_only in cursor.fetchall()]
    schema_editor.execute(rls_policies.ORGANIZATION_IDS_FUNCTION_SQL, params=None)
    for statement in rls_policies.reapply_policies_sql(existing):
        schema_editor.execute(statement, params=None)


def backwards(apps, schema_editor):
    # The policies keep the stricter predicate (nothing of the old one is worth restoring);
    # only the new function goes.
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(rls_policies.DROP_ORGANIZATION_IDS_FUNCTION_SQL, params=None)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0002_tenant_rls")]

    operations = [migrations.RunPython(forwards, backwards, elidable=False)]
