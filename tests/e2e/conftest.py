"""Browser tests: the shared harness lives in ``tests/browser.py`` (a pytest plugin loaded
by ``tests/conftest.py``) so every browser test of the suite shares one Chromium session —
two sync Playwright sessions in one process refuse to start."""

from tests.browser import login

__all__ = ["login"]
