"""An invitation is a grant made with its inviter's authority: when that authority ends —
the inviter is removed from the team or is no longer an admin — their pending invitations
end with it (audited), so a removed admin cannot keep a way back in through a link sent to
an address of their own. Other admins' invitations are untouched."""

from __future__ import annotations

from django.core import mail
from django.test import Client

from accounts.models import AuditLog, Invitation, Membership
from tests import factories


def _invite(client: Client, email: str, capture) -> str:
    with capture(execute=True):
        response = client.post("/accounts/equipe/convidar/", {"email": email, "role": "admin"})
    assert response.status_code == 302
    body = mail.outbox[-1].body
    return body[body.index("/accounts/convite/") :].split()[0]


def test_a_removed_admins_pending_invitations_stop_working(
    world, django_capture_on_commit_callbacks
):
    leaving = factories.make_user(world.org_a, "admin")
    link = _invite(
        world.client_for(leaving), "eu-de-novo@example.com", django_capture_on_commit_callbacks
    )
    kept = _invite(
        world.client_for(world.admin), "colega@example.com", django_capture_on_commit_callbacks
    )
    membership = Membership.objects.get(user=leaving, organization=world.org_a)

    world.client_for(world.admin).post(f"/accounts/equipe/{membership.pk}/remover/")

    assert "não vale mais" in Client().get(link).content.decode()
    assert "não vale mais" not in Client().get(kept).content.decode()
    assert Invitation.objects.get(email="eu-de-novo@example.com").revoked_at is not None
    audit = AuditLog.objects.get(action="membership.remove")
    assert audit.diff["invitations_revoked"] == 1


def test_an_admin_made_a_manager_loses_their_pending_invitations(
    world, django_capture_on_commit_callbacks
):
    demoted = factories.make_user(world.org_a, "admin")
    link = _invite(
        world.client_for(demoted), "amigo@example.com", django_capture_on_commit_callbacks
    )
    membership = Membership.objects.get(user=demoted, organization=world.org_a)

    world.client_for(world.admin).post(
        f"/accounts/equipe/{membership.pk}/papel/", {"role": "manager"}
    )

    assert "não vale mais" in Client().get(link).content.decode()
    audit = AuditLog.objects.get(action="membership.role_change")
    assert audit.diff["invitations_revoked"] == 1
