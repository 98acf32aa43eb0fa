"""Logins that don't lock offices out (issue 16 item 9): successes never count, someone
else's guessing never locks the real user out from their own address."""

from __future__ import annotations

from unittest import mock

from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from accounts import throttle
from tests import factories

OFFICE = "198.51.100.10"


def _login(username: str, password: str, ip: str) -> int:
    client = Client()
    response = client.post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=ip
    )
    return response.status_code


def test_ten_right_logins_in_a_row_from_one_address_all_succeed(world):
    users = [factories.make_user(world.org_a, "agent") for _ in range(12)]
    codes = [_login(u.username, factories.PASSWORD, OFFICE) for u in users]
    codes += [_login(world.admin.username, factories.PASSWORD, OFFICE) for _ in range(10)]
    assert codes == [302] * 22


def test_a_few_typos_in_the_office_do_not_stop_the_next_colleague(world):
    for _ in range(3):
        assert _login(world.agent.username, "errada", OFFICE) == 200
    assert _login(world.agent.username, factories.PASSWORD, OFFICE) == 302
    assert _login(world.viewer.username, factories.PASSWORD, OFFICE) == 302


def test_twenty_wrong_passwords_elsewhere_do_not_lock_the_user_out_at_their_desk(world):
    assert _login(world.agent.username, factories.PASSWORD, OFFICE) == 302  # yesterday
    for i in range(20):
        _login(world.agent.username, f"chute-{i}", f"203.0.113.{i}")
    assert _login(world.agent.username, factories.PASSWORD, OFFICE) == 302


def test_at_a_new_address_the_real_user_only_waits_a_bounded_delay(world):
    for i in range(20):
        _login(world.agent.username, f"chute-{i}", f"203.0.113.{i}")
    client = Client()
    response = client.post(
        "/accounts/login/",
        {"username": world.agent.username, "password": factories.PASSWORD},
        REMOTE_ADDR="192.0.2.99",
    )
    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= throttle.LOGIN_MAX_DELAY_S
    later = throttle._clock() + throttle.LOGIN_MAX_DELAY_S + 1
    with mock.patch.object(throttle, "_clock", return_value=later):
        assert _login(world.agent.username, factories.PASSWORD, "192.0.2.99") == 302


def test_the_429_page_is_portuguese_in_the_products_layout(world):
    with mock.patch.object(throttle, "_refusal", return_value=120):
        response = Client().post(
            "/accounts/login/", {"username": "x", "password": "y"}, REMOTE_ADDR=OFFICE
        )
    assert response.status_code == 429
    assert response["Retry-After"] == "120"
    html = response.content.decode()
    assert "Muitas tentativas de entrar" in html
    assert "espere 2 minutos" in html
    assert 'class="topbar"' in html  # base.html
    assert "Too Many" not in html


def test_a_refused_attempt_is_not_counted_as_another_failure(world):
    for i in range(throttle.LOGIN_FREE_FAILURES_PER_USERNAME):
        _login(world.agent.username, "errada", f"203.0.113.{i}")
    record_before = throttle.cache.get(f"login-fail:user:{throttle._digest(world.agent.username)}")
    assert _login(world.agent.username, "errada", "203.0.113.200") == 429
    record_after = throttle.cache.get(f"login-fail:user:{throttle._digest(world.agent.username)}")
    assert record_after == record_before


@given(st.integers(min_value=0, max_value=10_000), st.integers(min_value=0, max_value=10_000))
def test_the_username_delay_grows_and_stays_bounded(a, b):
    low, high = sorted((a, b))
    assert 0 <= throttle.delay_after(low) <= throttle.delay_after(high)
    assert throttle.delay_after(high) <= throttle.LOGIN_MAX_DELAY_S
    if high < throttle.LOGIN_FREE_FAILURES_PER_USERNAME:
        assert throttle.delay_after(high) == 0
