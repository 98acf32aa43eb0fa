"""Row-level security for the accounts tables and the narrow ``app_organization_of`` door.

Organizations and memberships have policies of their own (``accounts.rls``): a user reads
their own memberships and organizations before choosing one. The audit log is a plain
tenant table, append-only for the application.
"""

from django.db import migrations

from accounts import rls


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for statement in [
        rls.ORGANIZATION_OF_FUNCTION_SQL,
        *rls.organization_policy_sql(),
        *rls.membership_policy_sql(),
    ]:
        schema_editor.execute(statement, params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in (rls.ORGANIZATION_TABLE, rls.MEMBERSHIP_TABLE):
        for statement in rls.drop_tenant_policy_sql(table):
            schema_editor.execute(statement, params=None)
    schema_editor.execute(rls.DROP_ORGANIZATION_OF_FUNCTION_SQL)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_initial")]

    operations = [
        migrations.RunPython(forwards, backwards, elidable=False),
        rls.EnableTenantRLS("auditlog", append_only=True),
    ]
