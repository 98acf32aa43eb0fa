"""Login throttling counts failures only: a hard lock needs the (username, address) pair,
a username alone only earns an increasing delay that the user's own address skips, and a
forwarded-for header counts only behind a trusted proxy (accounts.throttle)."""

from __future__ import annotations

from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from accounts import throttle
from accounts.throttle import (
    LOGIN_FAILURES_PER_ADDRESS,
    LOGIN_FAILURES_PER_PAIR,
    LOGIN_FREE_FAILURES_PER_USERNAME,
)

PASSWORD = "senha-certa-do-teste"


@pytest.fixture
def user(db):
    return get_user_model().objects.create_user(username="maria", password=PASSWORD)


def _login(username: str, password: str, ip: str = "10.0.0.1", **extra: str) -> int:
    response = Client().post(
        "/accounts/login/",
        {"username": username, "password": password},
        REMOTE_ADDR=ip,
        **extra,
    )
    return response.status_code


@pytest.fixture
def frozen_clock():
    """Failures spaced past any delay: the pair lock is what these tests look at."""
    now = [1_000_000.0]

    def tick() -> float:
        now[0] += throttle.LOGIN_MAX_DELAY_S + 1
        return now[0]

    with mock.patch.object(throttle, "_clock", side_effect=tick):
        yield


def test_wrong_passwords_for_one_username_from_one_address_lock_that_pair(user, frozen_clock):
    codes = [_login("maria", "errada") for _ in range(LOGIN_FAILURES_PER_PAIR)]
    assert set(codes) == {200}  # the form again, with its error
    assert _login("maria", PASSWORD) == 429
    assert _login("maria", PASSWORD, ip="10.0.0.2") == 302  # elsewhere: not locked


def test_guessing_one_username_from_many_addresses_delays_strangers(user):
    for i in range(LOGIN_FREE_FAILURES_PER_USERNAME):
        assert _login("Maria", "errada", ip=f"10.0.1.{i}") == 200
    # A new address must now wait; the attempt is not even checked.
    assert _login("maria", PASSWORD, ip="10.0.2.1") == 429
    assert _login("outra-pessoa", "x", ip="10.0.2.1") == 200


def test_a_forged_forwarded_for_header_does_not_reset_the_count(user, frozen_clock):
    for i in range(LOGIN_FAILURES_PER_PAIR):
        _login("maria", "x", HTTP_X_FORWARDED_FOR=f"192.0.2.{i}")
    assert _login("maria", PASSWORD, HTTP_X_FORWARDED_FOR="192.0.2.250") == 429


def test_one_address_spraying_many_usernames_hits_the_address_ceiling(user):
    for i in range(LOGIN_FAILURES_PER_ADDRESS):
        _login(f"user{i}", "x", ip="10.0.3.1")
    assert _login("maria", PASSWORD, ip="10.0.3.1") == 429
    assert _login("maria", PASSWORD, ip="10.0.3.2") == 302


def test_behind_a_trusted_proxy_the_forwarded_client_is_counted(user, settings, frozen_clock):
    settings.TRUSTED_PROXY_COUNT = 1
    for _ in range(LOGIN_FAILURES_PER_PAIR):
        _login("maria", "x", ip="172.16.0.1", HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert _login("maria", PASSWORD, ip="172.16.0.1", HTTP_X_FORWARDED_FOR="203.0.113.7") == 429
    other_client = _login("maria", PASSWORD, ip="172.16.0.1", HTTP_X_FORWARDED_FOR="203.0.113.8")
    assert other_client == 302


def test_the_429_says_when_to_come_back(user, frozen_clock):
    for _ in range(LOGIN_FAILURES_PER_PAIR):
        _login("maria", "errada")
    response = Client().post(
        "/accounts/login/", {"username": "maria", "password": "x"}, REMOTE_ADDR="10.0.0.1"
    )
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
