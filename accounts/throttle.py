"""A small fixed-window rate limit on the cache, for login attempts and webhooks."""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.utils.translation import gettext as _

LOGIN_ATTEMPTS_PER_10_MIN = 10
LOGIN_ATTEMPTS_PER_USERNAME_10_MIN = 20


def hit(key: str, *, limit: int, window_s: int) -> bool:
    """Count one hit; True while the key is within ``limit`` hits per window."""
    bucket = f"rl:{key}:{int(time.time() // window_s)}"
    cache.add(bucket, 0, timeout=window_s + 1)
    try:
        count = cache.incr(bucket)
    except ValueError:  # expired between add and incr
        cache.set(bucket, 1, timeout=window_s + 1)
        count = 1
    return count <= limit


def client_ip(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or behind ``TRUSTED_PROXY_COUNT`` reverse proxies
    the address the outermost trusted proxy saw (never a value the client chose)."""
    proxies = int(getattr(settings, "TRUSTED_PROXY_COUNT", 0))
    if proxies > 0:
        forwarded = [
            part.strip()
            for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
            if part.strip()
        ]
        if len(forwarded) >= proxies:
            return forwarded[-proxies]
    return str(request.META.get("REMOTE_ADDR", ""))


def _username_key(request: HttpRequest) -> str:
    # Hashed: usernames never reach the cache (or its logs) in clear text.
    username = str(request.POST.get("username", "")).strip().casefold()
    return hashlib.sha256(username.encode()).hexdigest()[:32]


def too_many(message: str, *, retry_after_s: int) -> HttpResponse:
    response = HttpResponse(message, status=429)
    response["Retry-After"] = str(retry_after_s)
    return response


def throttled_login(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """At most ``LOGIN_ATTEMPTS_PER_10_MIN`` login POSTs per client address and
    ``LOGIN_ATTEMPTS_PER_USERNAME_10_MIN`` per username (password guessing spread over
    many addresses), answering 429 beyond them."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.method == "POST":
            by_ip = hit(
                f"login:{client_ip(request)}", limit=LOGIN_ATTEMPTS_PER_10_MIN, window_s=600
            )
            by_user = hit(
                f"login-user:{_username_key(request)}",
                limit=LOGIN_ATTEMPTS_PER_USERNAME_10_MIN,
                window_s=600,
            )
            if not (by_ip and by_user):
                return too_many(
                    _("Muitas tentativas de login. Aguarde alguns minutos."), retry_after_s=600
                )
        return view(request, *args, **kwargs)

    return wrapped
