"""The team page (issue 16 item 8): invite by e-mail with a one-time link, accept it,
change roles, remove members — every change audited, the last admin kept."""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client

from accounts.models import AuditLog, Invitation, Membership
from cases.services import case_assign
from inbox.services import conversation_assign
from tests import factories
from tests.cases.conftest import enable_cases, open_case


def _invite(client: Client, email: str, role: str = "agent", capture=None):
    with capture(execute=True):
        return client.post("/accounts/equipe/convidar/", {"email": email, "role": role})


def _link(message: mail.EmailMessage) -> str:
    match = re.search(r"http://testserver(/accounts/convite/\?c=\S+)", message.body)
    assert match, message.body
    return match.group(1)


def test_an_admin_invites_by_email_and_the_link_makes_a_member(
    world, django_capture_on_commit_callbacks
):
    admin = world.client_for(world.admin)
    response = _invite(admin, "Nova@Example.com", "manager", django_capture_on_commit_callbacks)
    assert response.status_code == 302
    invitation = Invitation.objects.get(organization=world.org_a)
    assert invitation.email == "nova@example.com" and invitation.role == "manager"
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["nova@example.com"]
    link = _link(mail.outbox[0])
    assert invitation.token_hash not in link  # only the secret travels, never its hash

    guest = Client()
    page = guest.get(link)
    assert page.status_code == 200
    assert "Entrar na equipe de" in page.content.decode()
    accepted = guest.post(
        "/accounts/convite/",
        {
            "c": link.split("c=")[1],
            "first_name": "Nova",
            "username": "nova",
            "password1": "uma-senha-bem-longa-9",
            "password2": "uma-senha-bem-longa-9",
        },
    )
    assert accepted.status_code == 302 and accepted["Location"] == "/"
    user = get_user_model().objects.get(username="nova")
    assert user.email == "nova@example.com" and user.check_password("uma-senha-bem-longa-9")
    assert Membership.objects.get(user=user).role == "manager"
    assert guest.get("/").status_code == 200  # logged in, in the new organization
    actions = set(
        AuditLog.objects.filter(organization=world.org_a).values_list("action", flat=True)
    )
    assert {"invitation.create", "invitation.accept"} <= actions

    again = Client().get(link)
    assert "não vale mais" in again.content.decode()  # one-time


def test_a_tampered_or_revoked_link_does_not_work(world, django_capture_on_commit_callbacks):
    admin = world.client_for(world.admin)
    _invite(admin, "x@example.com", capture=django_capture_on_commit_callbacks)
    link = _link(mail.outbox[0])
    assert "não vale mais" in Client().get(link[:-3] + "abc").content.decode()
    invitation = Invitation.objects.get()
    admin.post(f"/accounts/equipe/convites/{invitation.pk}/cancelar/")
    invitation.refresh_from_db()
    assert invitation.revoked_at is not None
    assert "não vale mais" in Client().get(link).content.decode()
    assert AuditLog.objects.filter(action="invitation.revoke").count() == 1


def test_an_existing_account_accepts_while_logged_in(world, django_capture_on_commit_callbacks):
    world.outsider.email = "fora@example.com"
    world.outsider.save(update_fields=["email"])
    _invite(
        world.client_for(world.admin),
        "fora@example.com",
        "viewer",
        django_capture_on_commit_callbacks,
    )
    link = _link(mail.outbox[0])
    anonymous = Client().get(link).content.decode()
    assert "Você já tem uma conta" in anonymous
    outsider = world.client_for(world.outsider)
    response = outsider.post("/accounts/convite/", {"c": link.split("c=")[1]})
    assert response.status_code == 302
    assert Membership.objects.get(user=world.outsider, organization=world.org_a).role == "viewer"


def test_inviting_a_current_member_is_refused(world, django_capture_on_commit_callbacks):
    world.agent.email = "agente@example.com"
    world.agent.save(update_fields=["email"])
    response = _invite(
        world.client_for(world.admin),
        "agente@example.com",
        capture=django_capture_on_commit_callbacks,
    )
    assert response.status_code == 400
    assert "já faz parte da equipe" in response.content.decode()
    assert not Invitation.objects.exists() and not mail.outbox


def test_an_admin_changes_a_role_and_removes_a_member_audited(world):
    admin = world.client_for(world.admin)
    agent_membership = Membership.objects.get(user=world.agent)
    admin.post(f"/accounts/equipe/{agent_membership.pk}/papel/", {"role": "manager"})
    agent_membership.refresh_from_db()
    assert agent_membership.role == "manager"
    viewer_membership = Membership.objects.get(user=world.viewer)
    admin.post(f"/accounts/equipe/{viewer_membership.pk}/remover/")
    assert not Membership.objects.filter(pk=viewer_membership.pk).exists()
    assert get_user_model().objects.filter(pk=world.viewer.pk).exists()  # the account stays
    rows = AuditLog.objects.filter(actor=world.admin).values_list("action", "diff")
    assert (
        "membership.role_change",
        {"role": ["agent", "manager"], "user_id": world.agent.pk},
    ) in list(rows)
    assert "membership.remove" in {a for a, _ in rows}


def test_the_last_admin_cannot_be_demoted_and_nobody_removes_themselves(world):
    admin = world.client_for(world.admin)
    own = Membership.objects.get(user=world.admin)
    page = admin.post(f"/accounts/equipe/{own.pk}/papel/", {"role": "viewer"}, follow=True)
    assert "pelo menos um administrador" in page.content.decode()
    admin.post(f"/accounts/equipe/{own.pk}/remover/")
    own.refresh_from_db()
    assert own.role == "admin"


def test_only_admins_open_the_team_page_and_other_orgs_members_are_404(world):
    assert world.client_for(world.manager).get("/accounts/equipe/").status_code == 403
    other = Membership.objects.get(user=world.outsider)
    admin = world.client_for(world.admin)
    assert admin.post(f"/accounts/equipe/{other.pk}/remover/").status_code == 404
    assert Membership.objects.filter(pk=other.pk).exists()


def test_the_team_page_query_count_does_not_grow_with_members(world, django_assert_max_num_queries):
    admin = world.client_for(world.admin)
    admin.get("/accounts/equipe/")  # warm the session
    # session, user, memberships (middleware), memberships (context processor), members
    # with users, pending invitations, and the menu badges — the same with 3 or 13 members.
    with django_assert_max_num_queries(14) as small:
        assert admin.get("/accounts/equipe/").status_code == 200
    for _ in range(10):
        factories.make_user(world.org_a, "agent")
    with django_assert_max_num_queries(len(small.captured_queries)):
        page = admin.get("/accounts/equipe/")
    assert page.content.decode().count('class="row team-member"') == 14


def test_a_link_that_expires_before_the_form_is_sent_leaves_no_account(
    world, django_capture_on_commit_callbacks
):
    from unittest import mock

    from accounts import services

    _invite(
        world.client_for(world.admin),
        "tarde@example.com",
        capture=django_capture_on_commit_callbacks,
    )
    code = _link(mail.outbox[0]).split("c=")[1]
    form = {
        "c": code,
        "username": "tarde",
        "password1": "uma-senha-bem-longa-9",
        "password2": "uma-senha-bem-longa-9",
    }
    # The page was valid when opened; the invitation is used up by the time it is sent.
    with mock.patch.object(services.Invitation, "is_usable", side_effect=[True, False]):
        response = Client().post("/accounts/convite/", form)
    assert "não vale mais" in response.content.decode()
    assert not get_user_model().objects.filter(username="tarde").exists()
    assert not Membership.objects.filter(user__username="tarde").exists()


def _assigned_to_the_agent(world):
    """An open case and a conversation the agent answers."""
    enable_cases(world.agent_a)
    conversation = factories.make_conversation(world.channel_a, phone="5511955551111")
    case = open_case(conversation)
    case_assign(case=case, actor=world.admin, assignee=world.agent)
    membership = Membership.objects.get(user=world.agent, organization=world.org_a)
    conversation_assign(conversation=conversation, assignee=membership, actor=world.admin)
    return case, conversation, membership


def test_a_removed_member_gives_their_cases_and_conversations_back_to_the_team(world):
    case, conversation, membership = _assigned_to_the_agent(world)

    world.client_for(world.admin).post(f"/accounts/equipe/{membership.pk}/remover/")

    case.refresh_from_db()
    conversation.refresh_from_db()
    assert case.assigned_to_id is None and conversation.assigned_to_id is None
    # Back in the queue the team works from.
    listed = world.client_for(world.manager).get("/api/v1/ai/cases?resp=sem-responsavel")
    assert str(case.pk) in listed.content.decode()
    audit = AuditLog.objects.get(action="membership.remove")
    assert audit.diff["unassigned"] == 2


def test_a_member_made_a_viewer_gives_their_work_back_and_a_manager_keeps_it(world):
    case, conversation, membership = _assigned_to_the_agent(world)
    admin = world.client_for(world.admin)

    admin.post(f"/accounts/equipe/{membership.pk}/papel/", {"role": "manager"})
    case.refresh_from_db()
    assert case.assigned_to_id == world.agent.pk  # a manager still answers

    admin.post(f"/accounts/equipe/{membership.pk}/papel/", {"role": "viewer"})
    case.refresh_from_db()
    conversation.refresh_from_db()
    assert case.assigned_to_id is None and conversation.assigned_to_id is None
