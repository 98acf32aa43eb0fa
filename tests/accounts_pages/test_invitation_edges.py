"""Invitation links opened by the wrong person, the e-mail they travel in, and an admin
changing their own role: each ends on a page that says what happened and what to do."""

from __future__ import annotations

import html
import re

from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client

from accounts.models import Invitation, Membership, Organization
from accounts.services import invitation_create
from tests import factories

PASSWORD = "uma-senha-bem-longa-9"


def _code(world, email: str, role: str = "agent", capture=None) -> str:
    with capture(execute=True):
        world.client_for(world.admin).post(
            "/accounts/equipe/convidar/", {"email": email, "role": role}
        )
    match = re.search(r"/accounts/convite/\?c=(\S+)", mail.outbox[-1].body)
    assert match, mail.outbox[-1].body
    return match.group(1)


def test_someone_logged_in_cannot_make_an_account_from_another_persons_link(
    world, django_capture_on_commit_callbacks
):
    code = _code(world, "nova@example.com", capture=django_capture_on_commit_callbacks)
    outsider = world.client_for(world.outsider)

    page = outsider.get(f"/accounts/convite/?c={code}").content.decode()
    response = outsider.post(
        "/accounts/convite/",
        {"c": code, "username": "nova", "password1": PASSWORD, "password2": PASSWORD},
    )

    assert "nova@example.com" in page and world.outsider.get_username() in page
    assert 'action="/accounts/logout/"' in page
    assert response.status_code == 200
    assert not get_user_model().objects.filter(username="nova").exists()
    assert not Membership.objects.filter(organization=world.org_a, user=world.outsider).exists()
    assert Invitation.objects.get().accepted_at is None  # still usable by the right person


def test_an_existing_accounts_link_opened_as_another_user_offers_to_sign_out_not_a_loop(
    world, django_capture_on_commit_callbacks
):
    world.outsider.email = "fora@example.com"
    world.outsider.save(update_fields=["email"])
    code = _code(world, "fora@example.com", capture=django_capture_on_commit_callbacks)
    other = factories.make_user(world.org_b, "agent")

    page = world.client_for(other).get(f"/accounts/convite/?c={code}").content.decode()

    # "Entrar" would bounce a logged-in user straight back here (the login page redirects
    # whoever is logged in): the way out is to sign out, then come back to this link.
    assert 'action="/accounts/logout/"' in page
    assert "/accounts/login/?next=" not in page
    next_field = re.search(r'name="next" value="([^"]+)"', page)
    assert next_field and "/accounts/convite/?c=" in next_field.group(1)
    here = html.unescape(next_field.group(1))
    signed_out = world.client_for(other).post("/accounts/logout/", {"next": here})
    assert signed_out.status_code == 302 and signed_out["Location"] == here
    assert "Você já tem uma conta" in Client().get(here).content.decode()


def test_the_right_person_logged_in_accepts_with_one_click(
    world, django_capture_on_commit_callbacks
):
    world.outsider.email = "Fora@Example.com"
    world.outsider.save(update_fields=["email"])
    code = _code(world, "fora@example.com", capture=django_capture_on_commit_callbacks)
    outsider = world.client_for(world.outsider)
    assert "Aceitar convite" in outsider.get(f"/accounts/convite/?c={code}").content.decode()
    assert outsider.post("/accounts/convite/", {"c": code}).status_code == 302
    assert Membership.objects.filter(organization=world.org_a, user=world.outsider).exists()


def test_the_invitation_subject_is_plain_text(world, rf, django_capture_on_commit_callbacks):
    Organization.objects.filter(pk=world.org_a.pk).update(name="Pão & Cia d'Oeste")
    _code(world, "nova@example.com", capture=django_capture_on_commit_callbacks)
    assert mail.outbox[-1].subject == "Convite para a equipe de Pão & Cia d'Oeste na Retaguarda"
    assert "Pão & Cia d'Oeste" in mail.outbox[-1].body


def test_an_expired_invitation_shows_as_expired_on_the_team_page(world):
    invitation, _secret = invitation_create(
        organization=world.org_a, actor=world.admin, email="velha@example.com", role="agent"
    )
    Invitation.objects.filter(pk=invitation.pk).update(expires_at="2020-01-01T00:00:00Z")
    html = world.client_for(world.admin).get("/accounts/equipe/").content.decode()
    row = html.split("velha@example.com")[1].split("</li>")[0]
    assert "expirou" in row and "vale até" not in row


def test_an_admin_who_makes_themselves_a_manager_lands_on_a_page_they_may_open(world):
    factories.make_user(world.org_a, "admin")  # someone else stays admin
    own = Membership.objects.get(user=world.admin)
    admin = world.client_for(world.admin)

    response = admin.post(f"/accounts/equipe/{own.pk}/papel/", {"role": "manager"}, follow=True)

    own.refresh_from_db()
    assert own.role == "manager"
    assert response.status_code == 200
    assert response.redirect_chain[-1][0] == "/"
    assert "agora é Gestor" in response.content.decode()


def test_a_login_link_keeps_the_invitation_to_come_back_to(
    world, django_capture_on_commit_callbacks
):
    world.outsider.email = "fora@example.com"
    world.outsider.save(update_fields=["email"])
    code = _code(world, "fora@example.com", capture=django_capture_on_commit_callbacks)
    page = Client().get(f"/accounts/convite/?c={code}").content.decode()
    assert "/accounts/login/?next=" in page
