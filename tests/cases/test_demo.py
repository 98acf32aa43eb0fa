"""The cases demo: a support agent with cases on its own simulator channel. Idempotent."""

from __future__ import annotations

from cases.demo import AGENT_NAME, CHANNEL_NAME, seed_demo_cases
from cases.models import CaseNotificationSettings
from conversation.models import Agent, ChannelSession
from tests import factories


def test_seeding_the_cases_demo_twice_changes_nothing(db):
    org = factories.make_org("Demo")
    admin = factories.make_user(org, "admin")

    first = seed_demo_cases(org, admin)
    second = seed_demo_cases(org, admin)

    assert first.pk == second.pk and first.name == CHANNEL_NAME
    assert ChannelSession.objects.filter(organization=org).count() == 1
    agent = Agent.objects.get(organization=org, name=AGENT_NAME)
    assert agent.published_version.cases_enabled is True
    assert first.agent_id == agent.pk and first.provider == "simulator"
    assert CaseNotificationSettings.objects.filter(organization=org).count() == 1


def test_the_admin_lists_cases_and_their_timeline(conversation, cases_world):
    from tests.cases.conftest import open_case

    case = open_case(conversation)
    cases_world.admin.is_staff = cases_world.admin.is_superuser = True
    cases_world.admin.save()
    client = cases_world.client_for(cases_world.admin)

    assert client.get("/admin/cases/case/").status_code == 200
    page = client.get(f"/admin/cases/case/{case.pk}/change/")
    assert page.status_code == 200 and case.title in page.content.decode()
