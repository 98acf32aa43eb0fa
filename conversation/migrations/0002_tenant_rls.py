"""Every conversation table under the tenant wall (accounts.rls)."""

from django.db import migrations

from accounts.rls import EnableTenantRLS


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_tenant_rls"),
        ("conversation", "0001_initial"),
    ]

    operations = [
        EnableTenantRLS("channelsession"),
        EnableTenantRLS("agent"),
        EnableTenantRLS("agentversion"),
        EnableTenantRLS("contact"),
        EnableTenantRLS("conversation"),
        EnableTenantRLS("message"),
        EnableTenantRLS("turn"),
        EnableTenantRLS("llmcall"),
        EnableTenantRLS("handoff"),
        EnableTenantRLS("knowledgedocument"),
    ]
