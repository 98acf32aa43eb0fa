"""Every cases table under the tenant wall (accounts.rls); the timeline and the notice
attempt log are append-only for the application."""

from django.db import migrations

from accounts.rls import EnableTenantRLS


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_tenant_rls"),
        ("cases", "0001_initial"),
    ]

    operations = [
        EnableTenantRLS("case"),
        EnableTenantRLS("caseevent", append_only=True),
        EnableTenantRLS("casefollowup"),
        EnableTenantRLS("casereminder"),
        EnableTenantRLS("casenotificationsettings"),
        EnableTenantRLS("casenotice"),
        EnableTenantRLS("casenoticeattempt", append_only=True),
    ]
