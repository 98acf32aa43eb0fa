"""Security headers on every response, pages that keep to their CSP, production settings
that pass ``check --deploy``, and hardened cookies."""

from __future__ import annotations

import html
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

from cryptography.fernet import Fernet
from django.conf import settings
from django.test import Client

from accounts.models import Membership, Organization
from tests.security.conftest import client_for
from tests.security.routes import ROUTES, covered_routes, request

ROOT = Path(__file__).resolve().parents[2]
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)
HANDLER = re.compile(r"""\son[a-z]+\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)
STYLE_ATTR = re.compile(r"""\sstyle\s*=""", re.IGNORECASE)


def _pages(tenants) -> dict[str, str]:
    """Every page and endpoint an admin of A can GET, rendered (with a second membership,
    so the organization switcher is on the page too)."""
    admin = tenants.user("A", "admin")
    other = Organization.objects.create(name="Outra", slug=f"outra-{admin.pk}")
    Membership.objects.create(organization=other, user=admin, role="viewer")
    client = client_for(admin)
    out = {}
    for route in covered_routes():
        rule = ROUTES[route.name]
        if "GET" not in rule.methods or rule.methods["GET"] == "public":
            continue
        query = rule.query(tenants, "A") if rule.query else None
        response = request(client, route, "GET", route.url(tenants, "A"), query)
        out[route.name] = response.content.decode(errors="replace")
    out["accounts:login"] = Client().get("/accounts/login/").content.decode()
    return out


def test_every_response_carries_the_security_headers(tenants):
    client = client_for(tenants.user("A", "viewer"))
    for url in ("/", "/accounts/login/", "/api/v1/ai/cases", "/nao-existe/"):
        response = client.get(url)
        assert response["Content-Security-Policy"] == settings.CONTENT_SECURITY_POLICY, url
        assert response["X-Frame-Options"] == "DENY", url
        assert response["X-Content-Type-Options"] == "nosniff", url
        assert response["Referrer-Policy"] == "same-origin", url
        assert response["Cross-Origin-Opener-Policy"] == "same-origin", url
        assert "camera=()" in response["Permissions-Policy"], url
    webhook = Client().post("/webhooks/simulator/00000000-0000-0000-0000-000000000000")
    assert "default-src 'self'" in webhook["Content-Security-Policy"]


def test_the_policy_allows_only_this_origin():
    policy = dict(
        part.strip().split(" ", 1) for part in settings.CONTENT_SECURITY_POLICY.split(";")
    )
    assert policy["default-src"] == "'self'"
    assert policy["frame-ancestors"] == "'none'"
    assert policy["object-src"] == "'none'"
    assert "unsafe-inline" not in settings.CONTENT_SECURITY_POLICY
    assert "unsafe-hashes" not in settings.CONTENT_SECURITY_POLICY
    assert "unsafe-eval" not in settings.CONTENT_SECURITY_POLICY
    assert "http" not in settings.CONTENT_SECURITY_POLICY  # no CDN


def test_pages_keep_to_the_content_security_policy(tenants):
    """No inline script, style or event handler: the policy allows none ('self' only), so
    one would silently do nothing in the browser (behaviour lives in static files)."""
    problems = []
    for name, page in _pages(tenants).items():
        if name == "api-docs":
            continue  # Swagger UI's own page: see the note in test_api_docs_page
        if INLINE_SCRIPT.search(page):
            problems.append(f"{name}: inline <script>")
        if STYLE_ATTR.search(page):
            problems.append(f"{name}: style attribute")
        for match in HANDLER.finditer(page):
            code = html.unescape(match.group(1) or match.group(2) or "")
            problems.append(f"{name}: inline handler {code!r}")
    assert not problems, problems


def test_every_form_posts_with_a_csrf_token_and_htmx_sends_it(tenants):
    forms = re.compile(r"<form\b[^>]*method=[\"']post[\"'][^>]*>(.*?)</form>", re.I | re.S)
    problems = []
    seen_forms = 0
    for name, page in _pages(tenants).items():
        for body in forms.findall(page):
            seen_forms += 1
            if 'name="csrfmiddlewaretoken"' not in body:
                problems.append(name)
        if "<body" in page and "hx-" in page and "X-CSRFToken" not in page:
            problems.append(f"{name}: htmx without the CSRF header")
    assert seen_forms >= 5
    assert not problems, problems


def test_post_without_a_csrf_token_is_refused_on_every_mutating_url(tenants):
    client = Client(enforce_csrf_checks=True)
    client.force_login(tenants.user("A", "admin"))
    refused, checked = [], 0
    for route in covered_routes():
        rule = ROUTES[route.name]
        for method in rule.methods:
            if method == "GET":
                continue
            checked += 1
            body = rule.body(tenants, "A") if rule.body else None
            url = route.url(tenants, "A")
            plain = request(client, route, method, url, body)
            # htmx the way each surface is called: the API speaks JSON only (a form body is
            # refused with 415 before CSRF is even read), the pages take forms.
            htmx = (
                getattr(client, method.lower())(
                    url, body or {}, content_type="application/json", HTTP_HX_REQUEST="true"
                )
                if route.is_api
                else getattr(client, method.lower())(url, body or {}, HTTP_HX_REQUEST="true")
            )
            if plain.status_code != 403 or htmx.status_code != 403:
                refused.append(f"{method} {url}: {plain.status_code}/{htmx.status_code}")
    assert checked >= 20
    assert not refused, refused


def test_a_post_with_the_token_goes_through(tenants):
    client = Client(enforce_csrf_checks=True)
    client.force_login(tenants.user("A", "admin"))
    page = client.get("/conhecimento/novo/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    assert token is not None
    response = client.post(
        "/conhecimento/novo/",
        {"csrfmiddlewaretoken": token.group(1), "title": "T", "body": "B", "is_active": "on"},
    )
    assert response.status_code == 302


def _deploy_env(**extra: str) -> dict[str, str]:
    # A clean environment: nothing of the test run (database, async-unsafe switches) leaks in.
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        DJANGO_ENV="production",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="retaguarda.example.com",
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    env.update({"FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(), **extra})
    return env


def _check_deploy(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def test_production_settings_pass_check_deploy():
    result = _check_deploy(_deploy_env())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_flags_postgresql_without_the_application_role():
    env = _deploy_env(DATABASE_URL="postgres://someone@127.0.0.1:5432/retaguarda")
    result = _check_deploy(env)
    assert result.returncode != 0
    assert "accounts.W001" in result.stdout + result.stderr


def test_check_deploy_refuses_production_without_its_own_encryption_keys():
    result = _check_deploy(_deploy_env(FIELD_ENCRYPTION_KEYS=""))
    assert result.returncode != 0
    assert "accounts.E010" in result.stdout + result.stderr


def test_production_cookies_are_secure_host_only_and_http_only():
    code = (
        "from django.conf import settings as s; "
        "print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SESSION_COOKIE_HTTPONLY, "
        "s.SESSION_COOKIE_NAME, s.CSRF_COOKIE_NAME, s.SESSION_COOKIE_SAMESITE, "
        "s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS >= 31536000, s.DEBUG)"
    )
    result = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=ROOT,
        env=_deploy_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert result.stdout.split() == [
        "True",
        "True",
        "True",
        "__Host-sessionid",
        "__Host-csrftoken",
        "Lax",
        "True",
        "True",
        "False",
    ]
