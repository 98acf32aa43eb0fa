"""The Django admin's login is throttled like the product's, in the same buckets
(failures only; see accounts.throttle)."""

from __future__ import annotations

from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client

from accounts import throttle
from accounts.throttle import LOGIN_FAILURES_PER_PAIR, LOGIN_FREE_FAILURES_PER_USERNAME

PASSWORD = "senha-certa-do-admin"


@pytest.fixture
def staff(db, settings):
    cache.clear()
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    yield get_user_model().objects.create_superuser(username="root", password=PASSWORD)
    cache.clear()


def _admin_login(username: str, password: str, ip: str = "10.9.0.1") -> int:
    response = Client().post(
        "/admin/login/", {"username": username, "password": password}, REMOTE_ADDR=ip
    )
    return response.status_code


@pytest.fixture
def spaced_failures():
    # Each attempt later than any username delay: the pair lock is what is looked at.
    now = [1_000_000.0]

    def tick() -> float:
        now[0] += throttle.LOGIN_MAX_DELAY_S + 1
        return now[0]

    with mock.patch.object(throttle, "_clock", side_effect=tick):
        yield


def test_wrong_admin_passwords_from_one_address_end_in_429(staff, spaced_failures):
    codes = [_admin_login("root", f"errada-{i}") for i in range(LOGIN_FAILURES_PER_PAIR)]
    assert set(codes) == {200}  # the admin's form again, with its error
    assert _admin_login("root", PASSWORD) == 429
    assert _admin_login("root", PASSWORD, ip="10.9.0.2") == 302  # another address logs in


def test_guessing_the_admin_username_from_many_addresses_is_throttled(staff):
    for i in range(LOGIN_FREE_FAILURES_PER_USERNAME):
        assert _admin_login("ROOT", "errada", ip=f"10.9.1.{i}") == 200
    assert _admin_login("root", PASSWORD, ip="10.9.2.1") == 429


def test_the_admin_and_the_product_login_share_one_budget(staff, spaced_failures):
    client = Client()
    for i in range(LOGIN_FAILURES_PER_PAIR):
        path = "/accounts/login/" if i % 2 else "/admin/login/"
        client.post(path, {"username": "root", "password": "x"}, REMOTE_ADDR="10.9.3.1")
    assert _admin_login("root", PASSWORD, ip="10.9.3.1") == 429


def test_the_admin_login_page_itself_still_renders(staff):
    assert Client().get("/admin/login/").status_code == 200
