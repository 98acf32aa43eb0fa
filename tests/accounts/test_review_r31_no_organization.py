"""Someone logged in who belongs to no organization any more (removed from their only
team) is told so, and what to do — not "your role in this organization" with a "back to
the start" link that leads to the same refusal."""

from __future__ import annotations

from accounts.models import Membership


def _removed(world):
    membership = Membership.objects.get(user=world.viewer)
    client = world.client_for(world.viewer)
    world.client_for(world.admin).post(f"/accounts/equipe/{membership.pk}/remover/")
    assert not Membership.objects.filter(user=world.viewer).exists()
    return client


def test_a_member_removed_from_their_only_organization_is_told_they_belong_to_none(world):
    client = _removed(world)

    page = client.get("/")

    assert page.status_code == 403
    text = page.content.decode()
    assert "nenhuma organização" in text
    assert "convite" in text  # what to do: an admin's invitation brings them back
    assert "Seu papel nesta organização" not in text


def test_a_member_of_another_organization_still_gets_the_role_refusal(world):
    page = world.client_for(world.viewer).get("/accounts/equipe/")

    assert page.status_code == 403
    assert "nenhuma organização" not in page.content.decode()
