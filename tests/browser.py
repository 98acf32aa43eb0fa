"""Browser tests' harness (a pytest plugin, see tests/conftest.py): Debian's Chromium driven by
Playwright against pytest-django's live server.

Never downloads a browser: the executable is /usr/bin/chromium.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.signals import request_finished, request_started

# Playwright's sync API runs an event loop in this thread; Django refuses ORM calls from a
# thread with a running loop unless told it is fine (the test thread never awaits anything).
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
PHONE_VIEWPORT = {"width": 390, "height": 844}
DESKTOP_VIEWPORT = {"width": 1280, "height": 900}


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


# A page that was polling (the case counter, live lists) may still have a request running
# in the live server when the test ends; the teardown's flush then truncates every table
# while that request's transaction holds one of them — a deadlock that failed a test now
# and then. Closing a page therefore waits for the live server's requests that were in
# flight at that moment. Only requests served off the main thread count (the live server's
# threads): the test client's run on the main thread, and one that raises into the test
# never reaches ``request_finished``.
_active: set[object] = set()
_local = threading.local()
_idle = threading.Condition()


def _request_started(**_: Any) -> None:
    if threading.current_thread() is threading.main_thread():
        return
    _local.token = token = object()
    with _idle:
        _active.add(token)


def _request_finished(**_: Any) -> None:
    token = getattr(_local, "token", None)
    if token is None:
        return
    _local.token = None
    with _idle:
        _active.discard(token)
        _idle.notify_all()


request_started.connect(_request_started, dispatch_uid="browser-in-flight-started")
request_finished.connect(_request_finished, dispatch_uid="browser-in-flight-finished")


def close_context(context: Any) -> None:
    """Close the browser context, then wait (5 s at most) for the live server to finish
    every request it is serving.

    All of them, not only those in flight before the close: a poll that starts between a
    snapshot and the close would otherwise still hold its transaction when the test's
    teardown flushes the database (a deadlock in PostgreSQL). No request starts once the
    context is closed; one still "active" after the wait never reached ``request_finished``
    (its client went away mid-response) and is forgotten, so it delays no later test.
    """
    context.close()
    with _idle:
        if not _idle.wait_for(lambda: not _active, timeout=5):
            _active.clear()


@pytest.fixture
def phone_page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=PHONE_VIEWPORT, locale="pt-BR", is_mobile=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    close_context(context)


@pytest.fixture
def desktop_page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=DESKTOP_VIEWPORT, locale="pt-BR")
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    close_context(context)


def login(page: Any, base_url: str, user: Any) -> None:
    """Log in through the real form, as a person would."""
    from tests import factories

    page.goto(f"{base_url}/accounts/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", factories.PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base_url}/")
