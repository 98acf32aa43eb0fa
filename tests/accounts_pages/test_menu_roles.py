"""Menu entries are shown only to roles that may open them: every link in the main menu
opens with 200 for the role that sees it, judged against tests/security/routes.py."""

from __future__ import annotations

import re

import pytest
from django.urls import resolve

from tests.security.routes import ANY, RANK, ROUTES

NAV = re.compile(r'<nav class="mainnav".*?</nav>', re.S)
HREF = re.compile(r'href="([^"]+)"')


def _menu(client) -> list[str]:
    html = client.get("/").content.decode()
    nav = NAV.search(html)
    assert nav, "no main menu"
    return HREF.findall(nav.group(0))


@pytest.mark.parametrize("role", ["viewer", "agent", "manager", "admin"])
def test_every_menu_link_opens_for_the_role_that_sees_it(world, role):
    client = world.client_for(getattr(world, role))
    links = _menu(client)
    assert links
    for href in links:
        match = resolve(href)
        name = f"{match.namespace}:{match.url_name}" if match.namespace else match.url_name
        minimum = ROUTES[name].role_for("GET")
        assert minimum == ANY or RANK[role] >= RANK[minimum], f"{role} sees {name} ({minimum})"
        assert client.get(href).status_code == 200, f"{role}: {href}"


def test_the_viewer_sees_no_simulator_and_only_admins_see_the_team(world):
    viewer = _menu(world.client_for(world.viewer))
    assert "/simulador/" not in " ".join(viewer)
    assert "/accounts/equipe/" not in viewer
    assert "/accounts/equipe/" in _menu(world.client_for(world.admin))
    assert "/accounts/equipe/" not in _menu(world.client_for(world.manager))
