"""The analytics services write their AuditLog rows (the audit walk cannot see global
prices or the organization's settings, so they are held here)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from accounts.models import AuditLog
from analytics import services
from analytics.budgets import BudgetConfig
from analytics.models import ModelPrice

DAY = dt.date(2026, 12, 1)


def _values(output: str = "5") -> services.PriceInput:
    one = Decimal(1)
    return services.PriceInput("claude-x", one, Decimal(output), one, one, DAY, DAY, "teste")


def test_saving_a_price_writes_an_audit_row_with_the_change(world):
    price = services.model_price_save(organization=world.org_a, actor=world.admin, values=_values())
    services.model_price_save(
        organization=world.org_a, actor=world.admin, values=_values("6"), price=price
    )
    rows = list(AuditLog.objects.filter(resource_id=str(price.pk)).order_by("created_at", "pk"))
    assert [r.action for r in rows] == ["analytics.price_created", "analytics.price_saved"]
    assert rows[1].diff["before"]["output_per_mtok"] == "5.0000" or rows[1].diff["before"][
        "output_per_mtok"
    ].startswith("5")
    assert rows[1].diff["after"]["output_per_mtok"].startswith("6")
    assert all(r.actor_id == world.admin.pk for r in rows)


def test_deleting_a_price_is_audited(world):
    price = services.model_price_save(organization=world.org_a, actor=world.admin, values=_values())
    services.model_price_delete(organization=world.org_a, actor=world.admin, price=price)
    assert not ModelPrice.objects.filter(model="claude-x").exists()
    assert AuditLog.objects.filter(action="analytics.price_deleted").count() == 1


def test_setting_the_budget_is_audited(world):
    config = BudgetConfig(monthly_limit_usd=Decimal("9.99"), on_limit="handoff")
    services.budget_set(organization=world.org_a, actor=world.admin, config=config)
    row = AuditLog.objects.get(action="analytics.budget_set")
    assert row.organization_id == world.org_a.pk and row.actor_id == world.admin.pk
    assert row.diff["after"]["monthly_limit_usd"] == "9.99"
    world.org_a.refresh_from_db()
    assert world.org_a.settings["budget"]["on_limit"] == "handoff"


def test_the_seeded_prices_say_where_and_when_they_were_taken(db):
    haiku = ModelPrice.objects.get(model="claude-haiku-4-5")
    assert (haiku.input_per_mtok, haiku.output_per_mtok) == (Decimal("1"), Decimal("5"))
    assert (haiku.cache_write_per_mtok, haiku.cache_read_per_mtok) == (
        Decimal("1.25"),
        Decimal("0.10"),
    )
    assert haiku.source_date == DAY and "claude.com" in haiku.source


def test_a_price_saved_in_the_django_admin_goes_through_the_audited_service(world):
    from django.contrib.auth import get_user_model
    from django.test import Client

    from accounts.models import Membership

    root = get_user_model().objects.create_superuser("raiz", "raiz@example.com", "senha-raiz-1")
    Membership.objects.create(organization=world.org_a, user=root, role="admin")
    client = Client()
    client.force_login(root)
    response = client.post(
        "/admin/analytics/modelprice/add/",
        {
            "model": "claude-admin",
            "input_per_mtok": "1",
            "output_per_mtok": "2",
            "cache_write_per_mtok": "1.25",
            "cache_read_per_mtok": "0.1",
            "effective_date": "2026-12-01",
            "source_date": "2026-12-01",
            "source": "admin",
        },
    )
    assert response.status_code == 302
    price = ModelPrice.objects.get(model="claude-admin")
    row = AuditLog.objects.get(action="analytics.price_created", resource_id=str(price.pk))
    assert row.organization_id == world.org_a.pk and row.actor_id == root.pk


def test_the_rollup_admin_list_reads_any_number_of_rows_in_the_same_queries(world):
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from analytics.models import DailyOutcome
    from tests import factories

    root = get_user_model().objects.create_superuser("raiz", "raiz@example.com", "senha-raiz-1")
    client = Client()
    client.force_login(root)

    def add_rows(n: int) -> None:
        for i in range(n):
            agent = factories.make_agent(world.org_a, f"Agente {DailyOutcome.objects.count()}")
            DailyOutcome.objects.create(
                organization=world.org_a,
                day=DAY + dt.timedelta(days=i),
                channel=factories.make_channel(world.org_a, agent=agent),
                agent=agent,
                counts={"turns": 1},
            )

    add_rows(1)
    client.get("/admin/analytics/dailyoutcome/")  # warm up
    with CaptureQueriesContext(connection) as one:
        assert client.get("/admin/analytics/dailyoutcome/").status_code == 200
    add_rows(5)
    with CaptureQueriesContext(connection) as six:
        assert client.get("/admin/analytics/dailyoutcome/").status_code == 200
    assert len(six) == len(one), "\n".join(q["sql"] for q in six.captured_queries)
