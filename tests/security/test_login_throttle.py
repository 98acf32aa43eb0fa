"""Login attempts are throttled per client address and per username; a forwarded-for
header counts only behind a trusted proxy."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.throttle import LOGIN_ATTEMPTS_PER_10_MIN, LOGIN_ATTEMPTS_PER_USERNAME_10_MIN

PASSWORD = "senha-certa-do-teste"


@pytest.fixture
def fast_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def user(db, fast_hashing):
    return get_user_model().objects.create_user(username="maria", password=PASSWORD)


def _login(username: str, password: str, ip: str = "10.0.0.1", **extra: str) -> int:
    response = Client().post(
        "/accounts/login/",
        {"username": username, "password": password},
        REMOTE_ADDR=ip,
        **extra,
    )
    return response.status_code


def test_too_many_attempts_from_one_address_get_429_even_with_the_right_password(user):
    codes = [_login("maria", "errada") for _ in range(LOGIN_ATTEMPTS_PER_10_MIN)]
    assert set(codes) == {200}  # the form again, with its error
    assert _login("maria", PASSWORD) == 429


def test_guessing_one_username_from_many_addresses_is_throttled_too(user):
    codes = [
        _login("Maria", "errada", ip=f"10.0.1.{i}")
        for i in range(LOGIN_ATTEMPTS_PER_USERNAME_10_MIN)
    ]
    assert set(codes) == {200}
    assert _login("maria", PASSWORD, ip="10.0.2.1") == 429
    assert _login("outra-pessoa", "x", ip="10.0.2.1") == 200


def test_a_forged_forwarded_for_header_does_not_reset_the_count(user):
    for i in range(LOGIN_ATTEMPTS_PER_10_MIN):
        _login(f"user{i}", "x", HTTP_X_FORWARDED_FOR=f"192.0.2.{i}")
    assert _login("maria", PASSWORD, HTTP_X_FORWARDED_FOR="192.0.2.250") == 429


def test_behind_a_trusted_proxy_the_forwarded_client_is_counted(user, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    for i in range(LOGIN_ATTEMPTS_PER_10_MIN):
        _login(f"user{i}", "x", ip="172.16.0.1", HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert _login("maria", PASSWORD, ip="172.16.0.1", HTTP_X_FORWARDED_FOR="203.0.113.7") == 429
    other_client = _login("maria", PASSWORD, ip="172.16.0.1", HTTP_X_FORWARDED_FOR="203.0.113.8")
    assert other_client == 302


def test_the_429_says_when_to_come_back(user):
    for _ in range(LOGIN_ATTEMPTS_PER_10_MIN):
        _login("maria", "errada")
    response = Client().post(
        "/accounts/login/", {"username": "maria", "password": "x"}, REMOTE_ADDR="10.0.0.1"
    )
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
