"""The frame every page shares: login, nav, org switcher, offline badge, htmx and CSRF."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from accounts.middleware import SESSION_ORG_KEY
from accounts.models import Membership
from conversation.models import Handoff
from tests import factories
from tests.pages import external_assets


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The shared world creates six users: PBKDF2 would cost seconds per test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def test_login_page_is_in_portuguese_and_logs_in(world):
    client = Client()
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    assert "Entrar" in page.content.decode()

    response = client.post(
        "/accounts/login/", {"username": world.agent.username, "password": factories.PASSWORD}
    )

    assert response.status_code == 302
    assert response["Location"] == "/"
    assert client.session["_auth_user_id"] == str(world.agent.pk)


def test_login_with_a_wrong_password_shows_an_error(world):
    response = Client().post(
        "/accounts/login/", {"username": world.agent.username, "password": "errada"}
    )
    assert response.status_code == 200
    assert "Usuário ou senha incorretos." in response.content.decode()


def test_pages_require_login(db):
    response = Client().get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_base_has_nav_csrf_header_and_vendored_htmx(world):
    html = world.client_for(world.viewer).get("/").content.decode()
    for label in ("Conversas", "Transbordos", "Agentes", "Base de conhecimento"):
        assert f">{label}" in html
    assert ">Simulador" not in html  # a viewer may not open it (tests/security/routes.py)
    agent_html = world.client_for(world.agent).get("/").content.decode()
    assert ">Simulador" in agent_html
    assert 'hx-headers=\'{"X-CSRFToken": "' in html
    assert "/static/vendor/htmx.min.js" in html
    assert external_assets(html) == []
    assert "/admin/" not in html  # not staff


def test_vendored_htmx_file_is_committed():
    htmx = Path(settings.BASE_DIR) / "static" / "vendor" / "htmx.min.js"
    assert htmx.stat().st_size > 10_000
    assert htmx.read_text()[:20].startswith("var htmx")


def test_admin_link_is_shown_to_staff(world):
    world.admin.is_staff = True
    world.admin.save(update_fields=["is_staff"])
    html = world.client_for(world.admin).get("/").content.decode()
    assert 'href="/admin/"' in html


def test_offline_badge_follows_the_api_key(world, settings):
    client = world.client_for(world.viewer)
    settings.ANTHROPIC_API_KEY = ""
    assert "Modo offline" in client.get("/").content.decode()
    settings.ANTHROPIC_API_KEY = "sk-test"
    assert "Modo offline" not in client.get("/").content.decode()


def test_nav_badge_counts_open_handoffs_of_own_org(world):
    conversation = factories.make_conversation(world.channel_a)
    Handoff.objects.create(
        organization=world.org_a, conversation=conversation, reason_code="manual"
    )
    other = factories.make_conversation(world.channel_b)
    Handoff.objects.create(organization=world.org_b, conversation=other, reason_code="manual")
    client = world.client_for(world.viewer)

    html = client.get("/").content.decode()
    badge = client.get("/transbordos/contador/").content.decode()

    assert 'id="handoff-badge"' in html
    assert ">1</span>" in html
    assert 'id="handoff-badge"' in badge and ">1</span>" in badge


def test_org_switcher_lists_memberships_and_switches_org(world):
    Membership.objects.create(organization=world.org_b, user=world.agent, role="viewer")
    factories.make_conversation(world.channel_b, phone="5511900000002")
    client = world.client_for(world.agent)

    html = client.get("/").content.decode()
    assert world.org_a.name in html and world.org_b.name in html
    assert "5511900000002" not in html

    response = client.post("/accounts/org/switch/", {"organization": str(world.org_b.pk)})

    assert response.status_code == 302
    assert client.session[SESSION_ORG_KEY] == str(world.org_b.pk)
    assert "5511900000002" in client.get("/").content.decode()


def test_org_switch_to_an_org_without_membership_is_404(world):
    client = world.client_for(world.agent)
    response = client.post("/accounts/org/switch/", {"organization": str(world.org_b.pk)})
    assert response.status_code == 404
    assert SESSION_ORG_KEY not in client.session


@pytest.mark.parametrize("value", ["", "nao-e-um-id", "1; DROP TABLE", None])
def test_org_switch_with_no_valid_id_is_404_not_an_error(world, value):
    client = world.client_for(world.agent)
    data = {} if value is None else {"organization": value}
    assert client.post("/accounts/org/switch/", data).status_code == 404


def test_logout_is_a_post_form(world):
    client = world.client_for(world.viewer)
    assert 'action="/accounts/logout/"' in client.get("/").content.decode()
    client.post("/accounts/logout/")
    assert "_auth_user_id" not in client.session


def test_an_asset_from_another_host_is_found_and_a_token_with_cdn_in_it_is_not() -> None:
    page = (
        '<script src="https://cdn.example.com/htmx.js"></script>'
        '<link rel="stylesheet" href="//fonts.example.com/a.css">'
        '<script src="/static/vendor/htmx.min.js"></script>'
        '<a href="https://example.com/ajuda">ajuda</a>'
        '<body hx-headers=\'{"X-CSRFToken": "1hhmzaqgcdnkexk3"}\'>'
    )
    found = external_assets(page)
    assert len(found) == 2
    assert "cdn.example.com" in found[0] and "fonts.example.com" in found[1]
