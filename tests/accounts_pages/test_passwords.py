"""Change the password; reset it by e-mail (Django's auth views, pt-BR templates)."""

from __future__ import annotations

import re

from django.core import mail
from django.test import Client

from tests import factories


def test_a_member_changes_their_password(world):
    client = world.client_for(world.agent)
    page = client.get("/accounts/senha/")
    assert "Trocar senha" in page.content.decode()
    response = client.post(
        "/accounts/senha/",
        {
            "old_password": factories.PASSWORD,
            "new_password1": "outra-senha-comprida-7",
            "new_password2": "outra-senha-comprida-7",
        },
        follow=True,
    )
    assert "Senha alterada" in response.content.decode()
    world.agent.refresh_from_db()
    assert world.agent.check_password("outra-senha-comprida-7")


def test_a_forgotten_password_is_reset_by_email(world):
    world.agent.email = "agente@example.com"
    world.agent.save(update_fields=["email"])
    client = Client()
    response = client.post("/accounts/senha/esqueci/", {"email": "agente@example.com"})
    assert response.status_code == 302
    assert len(mail.outbox) == 1
    assert mail.outbox[0].subject == "Redefinição de senha na Retaguarda"
    path = re.search(r"http://testserver(\S+)", mail.outbox[0].body).group(1)
    landed = client.get(path)
    assert landed.status_code == 302 and "?" not in landed["Location"]  # token off the URL
    form = client.get(landed["Location"])
    assert "Criar senha nova" in form.content.decode()
    done = client.post(
        landed["Location"],
        {"new_password1": "nova-senha-comprida-3", "new_password2": "nova-senha-comprida-3"},
    )
    assert done.status_code == 302
    world.agent.refresh_from_db()
    assert world.agent.check_password("nova-senha-comprida-3")
    reused = Client().get(path, follow=True)
    assert "O link expirou ou já foi usado" in reused.content.decode()


def test_an_unknown_email_gets_the_same_answer_and_no_mail(world):
    response = Client().post("/accounts/senha/esqueci/", {"email": "ninguem@example.com"})
    assert response.status_code == 302 and not mail.outbox
