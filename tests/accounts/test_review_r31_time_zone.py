"""Each organization works in its own time zone. Brazil has four (Noronha UTC−2, Brasília
UTC−3, Manaus UTC−4, Acre UTC−5): a business in Manaus must read its times on its pages in
Manaus time, and its analytics days and budget months must roll over at its own midnight —
in a request of a member, and in a task working for the organization alike. An admin picks
the zone on the team page; an invalid name is refused in pt-BR and nothing is saved."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts import rls
from accounts.models import AuditLog, Organization
from accounts.services import OrganizationSettingsError, organization_time_zone_set
from accounts.time_zones import forget_time_zones
from analytics import budgets, rollups
from conversation.models import LlmCall, Message
from conversation.turns.tenancy import runs_in_tenant_session_of
from tests import factories
from tests.architecture.test_admin_policy import form_data

MANAUS, SAO_PAULO = "America/Manaus", "America/Sao_Paulo"
UTC = dt.UTC


def _in_zone(org: Organization, zone: str) -> None:
    # Straight to the row (not through the page): the page and its service are tested below.
    Organization.objects.filter(pk=org.pk).update(time_zone=zone)
    forget_time_zones()


def _message_at(channel: Any, when: dt.datetime) -> Message:
    conversation = factories.make_conversation(channel)
    message = factories.make_message(conversation, "bom dia")
    Message.objects.filter(pk=message.pk).update(created_at=when)
    return message


# --- pages --------------------------------------------------------------------------------


def test_a_message_time_shows_in_the_organizations_zone_on_the_conversation_page(world):
    # 15:30 UTC is 11:30 in Manaus and 12:30 in São Paulo.
    when = dt.datetime(2025, 3, 10, 15, 30, tzinfo=UTC)
    _in_zone(world.org_a, MANAUS)
    manaus = _message_at(world.channel_a, when)
    paulista = _message_at(world.channel_b, when)

    page_a = world.client_for(world.viewer).get(
        reverse("conversation:conversation_detail", args=[manaus.conversation_id])
    )
    page_b = world.client_for(world.outsider).get(
        reverse("conversation:conversation_detail", args=[paulista.conversation_id])
    )

    assert page_a.status_code == page_b.status_code == 200
    assert "10/03 11:30" in page_a.content.decode()
    assert "10/03 12:30" not in page_a.content.decode()
    assert "10/03 12:30" in page_b.content.decode()
    # The request's zone ends with the request.
    assert timezone.get_current_timezone_name() == SAO_PAULO


def test_a_new_organization_works_in_sao_paulo_time(db):
    assert factories.make_org("Nova").time_zone == SAO_PAULO


# --- work outside a request ---------------------------------------------------------------


def test_a_task_in_tenant_context_sees_the_organizations_zone(world):
    _in_zone(world.org_a, MANAUS)

    with rls.tenant_context(world.org_a.pk):
        inside_a = timezone.get_current_timezone_name()
        with rls.tenant_context(world.org_b.pk):
            inside_b = timezone.get_current_timezone_name()
        back_in_a = timezone.get_current_timezone_name()

    assert (inside_a, inside_b, back_in_a) == (MANAUS, SAO_PAULO, MANAUS)
    assert timezone.get_current_timezone_name() == SAO_PAULO


def test_tenant_context_reads_the_zone_once_then_remembers_it(world, django_assert_num_queries):
    _in_zone(world.org_a, MANAUS)
    # Expected queries: the organization's zone, the first time this process works for it.
    with django_assert_num_queries(1), rls.tenant_context(world.org_a.pk):
        pass
    # Then none: a task pays no query for its zone.
    with django_assert_num_queries(0), rls.tenant_context(world.org_a.pk):
        assert timezone.get_current_timezone_name() == MANAUS


def test_a_loaded_or_saved_organization_costs_tenant_context_no_query(
    world, django_assert_num_queries
):
    forget_time_zones()
    Organization.objects.get(pk=world.org_a.pk)  # a page or task that loaded the row
    org = factories.make_org("Nova")  # a row just created
    with django_assert_num_queries(0):
        with rls.tenant_context(world.org_a.pk):
            pass
        with rls.tenant_context(org.pk):
            pass


def test_a_turn_task_in_its_tenant_session_sees_the_organizations_zone(world):
    _in_zone(world.org_a, MANAUS)
    message = _message_at(world.channel_a, timezone.now())
    seen: list[str] = []

    @runs_in_tenant_session_of(Message, "message_id")
    def turn(message_id: str) -> None:
        seen.append(timezone.get_current_timezone_name())

    turn(str(message.pk))

    assert seen == [MANAUS]


def test_a_stored_name_no_longer_known_falls_back_to_the_default_zone(world):
    # A row edited by hand must not crash every task of the organization.
    _in_zone(world.org_a, "Mars/Olympus_Mons")
    with rls.tenant_context(world.org_a.pk):
        assert timezone.get_current_timezone_name() == SAO_PAULO


# --- analytics days and budget months ----------------------------------------------------


def _llm_call(org: Organization, channel: Any, when: dt.datetime) -> LlmCall:
    conversation = factories.make_conversation(channel)
    call = LlmCall.objects.create(
        organization=org,
        conversation=conversation,
        purpose="orchestrator",
        provider="anthropic",
        model="claude-haiku-4-5",
        input_tokens=1000,
        output_tokens=100,
    )
    LlmCall.objects.filter(pk=call.pk).update(created_at=when)
    return call


def test_an_analytics_day_at_23h30_manaus_time_belongs_to_that_day(world):
    _in_zone(world.org_a, MANAUS)
    # 2025-03-10 23:30 in Manaus is 2025-03-11 03:30 UTC (and 00:30 in São Paulo).
    late = dt.datetime(2025, 3, 10, 23, 30, tzinfo=ZoneInfo(MANAUS))
    _llm_call(world.org_a, world.channel_a, late)

    with time_machine.travel(late, tick=False), rls.tenant_context(world.org_a.pk):
        today = rollups.local_today()
        agg, _state = rollups.period(world.org_a.pk, today, today, usage_only=True)

    assert today == dt.date(2025, 3, 10)
    assert [key[0] for key in agg.usage] == [dt.date(2025, 3, 10)]


def test_a_rolled_up_day_ends_at_the_organizations_midnight(world):
    _in_zone(world.org_a, MANAUS)
    late = dt.datetime(2025, 3, 10, 23, 30, tzinfo=ZoneInfo(MANAUS))
    _llm_call(world.org_a, world.channel_a, late)
    after_midnight = late + dt.timedelta(hours=1)  # 00:30 of the 11th in Manaus

    with rls.tenant_context(world.org_a.pk):
        rollups.roll_up(world.org_a.pk, now=after_midnight)
        agg, _state = rollups.period(
            world.org_a.pk, dt.date(2025, 3, 10), dt.date(2025, 3, 11), usage_only=True
        )

    assert {key[0] for key in agg.usage} == {dt.date(2025, 3, 10)}


def test_a_budget_month_rolls_over_at_the_organizations_midnight(world):
    _in_zone(world.org_a, MANAUS)
    # 2025-03-31 23:30 in Manaus: still March there, already April in UTC and São Paulo.
    late = dt.datetime(2025, 3, 31, 23, 30, tzinfo=ZoneInfo(MANAUS))
    _llm_call(world.org_a, world.channel_a, late)

    with time_machine.travel(late, tick=False):
        with rls.tenant_context(world.org_a.pk):
            manaus = budgets.month_spend(world.org_a.pk)
        with rls.tenant_context(world.org_b.pk):
            paulista_month = budgets.month_key(rollups.local_today())

    assert manaus.month == "2025-03"
    assert manaus.total_usd > 0  # the call counts in March's spend
    assert paulista_month == "2025-04"


# --- the admin sets it --------------------------------------------------------------------


def test_an_admin_sets_the_zone_on_the_team_page_and_it_is_audited(world):
    admin = world.client_for(world.admin)
    page = admin.get(reverse("accounts:team"))
    assert page.status_code == 200
    assert "Fuso horário" in page.content.decode()
    assert "Manaus (UTC−4)" in page.content.decode()

    response = admin.post(reverse("accounts:organization_time_zone"), {"time_zone": MANAUS})

    assert response.status_code == 302
    world.org_a.refresh_from_db()
    assert world.org_a.time_zone == MANAUS
    row = AuditLog.objects.get(organization=world.org_a, action="organization.time_zone_set")
    assert row.actor_id == world.admin.pk
    assert row.diff == {"time_zone": [SAO_PAULO, MANAUS]}
    # The very next request, and the next task, work in Manaus time.
    with rls.tenant_context(world.org_a.pk):
        assert timezone.get_current_timezone_name() == MANAUS


@pytest.mark.parametrize("value", ["Mars/Olympus_Mons", "", "America/Sao Paulo", "../etc/passwd"])
def test_an_invalid_zone_is_refused_in_portuguese_and_nothing_is_saved(world, value):
    admin = world.client_for(world.admin)

    response = admin.post(reverse("accounts:organization_time_zone"), {"time_zone": value})

    assert response.status_code == 400
    assert "Escolha um fuso horário da lista" in response.content.decode()
    world.org_a.refresh_from_db()
    assert world.org_a.time_zone == SAO_PAULO
    assert not AuditLog.objects.filter(action="organization.time_zone_set").exists()


def test_the_service_refuses_an_unknown_zone_and_saves_nothing(world):
    with pytest.raises(OrganizationSettingsError, match="fuso horário"):
        organization_time_zone_set(
            organization=world.org_a, actor=world.admin, time_zone="Europe/Atlantis"
        )
    world.org_a.refresh_from_db()
    assert world.org_a.time_zone == SAO_PAULO
    assert not AuditLog.objects.filter(action="organization.time_zone_set").exists()


def test_setting_the_same_zone_again_changes_and_audits_nothing(world):
    organization_time_zone_set(organization=world.org_a, actor=world.admin, time_zone=SAO_PAULO)
    assert not AuditLog.objects.filter(action="organization.time_zone_set").exists()


@pytest.mark.parametrize("role", ["viewer", "agent", "manager"])
def test_only_an_admin_sets_the_zone(world, role):
    response = world.client_for(getattr(world, role)).post(
        reverse("accounts:organization_time_zone"), {"time_zone": MANAUS}
    )
    assert response.status_code == 403
    world.org_a.refresh_from_db()
    assert world.org_a.time_zone == SAO_PAULO


def test_the_django_admin_refuses_an_invalid_zone(world):
    root = get_user_model().objects.create_superuser("root", "root@example.com", "senha-root-1")
    staff = Client()
    staff.force_login(root)
    url = f"/admin/accounts/organization/{world.org_a.pk}/change/"

    response = staff.post(url, form_data(staff.get(url), time_zone="Mars/Olympus_Mons"))

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["time_zone"]
    world.org_a.refresh_from_db()
    assert world.org_a.time_zone == SAO_PAULO


def test_an_unknown_organization_id_still_enters_its_context(db):
    # Like before: tenant_context trusts the id it is given (the walls admit nothing).
    with rls.tenant_context(uuid.uuid4()):
        assert timezone.get_current_timezone_name() == SAO_PAULO
