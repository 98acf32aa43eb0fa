"""Rate limits on the cache: login failures (``throttled_login``) and webhooks (``hit``).

The login policy, measured against django-axes' (``AXES_LOCKOUT_PARAMETERS``) choices:

- **Only failures count.** A login that succeeds never spends anything, so an office of
  thirty people behind one NAT address logs in all morning (axes also counts failures only;
  the limit this replaced counted every POST and refused the eleventh correct login).
- **A hard lock needs the pair.** ``LOGIN_FAILURES_PER_PAIR`` wrong passwords for one
  username *from one address* lock that pair — axes' ``[["username", "ip_address"]]``.
  Neither a colleague at the same address nor the same person elsewhere is touched.
- **By username alone: a delay, never a lock.** Axes' ``["username"]`` alone lets anyone
  lock a real user out by typing wrong passwords from anywhere. Here, after
  ``LOGIN_FREE_FAILURES_PER_USERNAME`` failures for a username (from any addresses) each
  further attempt must wait an increasing delay since the last failure (2 s, 4 s, 8 s… up
  to ``LOGIN_MAX_DELAY_S``): a botnet spreading guesses over many addresses gets a few
  hundred tries a day instead of thousands a minute. Addresses from which that username
  has logged in successfully recently (``KNOWN_ADDRESS_TTL_S``) skip the delay — the real
  user at their own desk is never held up by someone else's guessing (the idea of OWASP's
  "device cookies", keyed by address so it needs no client state).
- **By address alone: a high ceiling** (``LOGIN_FAILURES_PER_ADDRESS``) for one address
  spraying many usernames — axes' ``["ip_address"]``, set far above what an office mistypes.

Keys are hashed: usernames never reach the cache (or its logs) in clear text. A locked or
delayed attempt is answered 429 with ``Retry-After`` and the product's pt-BR page, and
does not count as another failure (it was never checked).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.template.loader import render_to_string
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

LOGIN_WINDOW_S = 15 * 60
LOGIN_FAILURES_PER_PAIR = 10
LOGIN_FAILURES_PER_ADDRESS = 50
LOGIN_FREE_FAILURES_PER_USERNAME = 5
LOGIN_MAX_DELAY_S = 300
# The username's failure record lives this long after its last failure.
USERNAME_MEMORY_S = 60 * 60
KNOWN_ADDRESS_TTL_S = 30 * 24 * 60 * 60


def hit(key: str, *, limit: int, window_s: int) -> bool:
    """Count one hit; True while the key is within ``limit`` hits per window.

    Fails open: with the cache down or stalled (a Redis error, after the client's socket
    timeout) the hit is let through. What it guards, a webhook, is stored and answered
    later; refusing it would make a Redis outage an outage of every number (the provider
    would redeliver into the same wall)."""
    bucket = f"rl:{key}:{int(time.time() // window_s)}"
    try:
        return _count(bucket, timeout=window_s + 1) <= limit
    except RedisError as exc:
        log.warning(
            "rate limit not counted",
            extra={"limit_key": key.split(":", 1)[0], "error": type(exc).__name__},
        )
        return True


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


def _clock() -> float:
    # The username delay's clock (patched in tests; cache expiry keeps real time).
    return time.time()


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:32]


def _username_key(request: HttpRequest) -> str:
    return _digest(str(request.POST.get("username", "")).strip().casefold())


def too_many(message: str, *, retry_after_s: int) -> HttpResponse:
    """A bare 429 for machine clients (webhooks)."""
    response = HttpResponse(message, status=429)
    response["Retry-After"] = str(retry_after_s)
    return response


def too_many_page(request: HttpRequest, *, retry_after_s: int) -> HttpResponse:
    """The pt-BR 429 page in the product's layout, for people."""
    minutes = max(1, math.ceil(retry_after_s / 60))
    html = render_to_string(
        "429.html", {"retry_after_s": retry_after_s, "minutes": minutes}, request=request
    )
    response = HttpResponse(html, status=429)
    response["Retry-After"] = str(retry_after_s)
    return response


def delay_after(failures: int) -> int:
    """Seconds a username must wait after its last failure, given its failure count."""
    if failures < LOGIN_FREE_FAILURES_PER_USERNAME:
        return 0
    return int(min(2 ** (failures - LOGIN_FREE_FAILURES_PER_USERNAME + 1), LOGIN_MAX_DELAY_S))


class _Keys:
    def __init__(self, request: HttpRequest) -> None:
        ip = _digest(client_ip(request))
        user = _username_key(request)
        self.pair = f"login-fail:pair:{user}:{ip}"
        self.address = f"login-fail:ip:{ip}"
        self.username = f"login-fail:user:{user}"
        self.known = f"login-known:{user}:{ip}"


def _count(key: str, *, timeout: int) -> int:
    """Add one to the counter at ``key`` (created with ``timeout``); its new value.

    On Redis one round trip: ``SET NX EX`` and ``INCR`` pipelined (every webhook counts a
    hit, and Django's ``add`` + ``incr`` are three round trips). Django's Redis serializer
    stores integers as plain numbers, so ``cache.get`` reads the same counter."""
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        full_key = backend.make_and_validate_key(key)
        # ``_cache`` is the backend's client wrapper (Django ships no public accessor);
        # ``get_client`` hands out a client on the backend's own connection pool.
        client = backend._cache.get_client(full_key, write=True)  # type: ignore[attr-defined]
        pipe = client.pipeline(transaction=False)
        pipe.set(full_key, 0, ex=timeout, nx=True)
        pipe.incr(full_key)
        return int(pipe.execute()[1])
    cache.add(key, 0, timeout=timeout)
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=timeout)
        return 1


def _refusal(keys: _Keys, now: float) -> int:
    """Seconds to wait before this attempt may be checked (0: check it now)."""
    if cache.get(keys.pair, 0) >= LOGIN_FAILURES_PER_PAIR:
        return LOGIN_WINDOW_S
    if cache.get(keys.address, 0) >= LOGIN_FAILURES_PER_ADDRESS:
        return LOGIN_WINDOW_S
    record = cache.get(keys.username)
    if record and not cache.get(keys.known):
        failures, last = record
        wait = delay_after(failures) - (now - last)
        if wait > 0:
            return max(1, math.ceil(wait))
    return 0


def _record_failure(keys: _Keys, now: float) -> None:
    _count(keys.pair, timeout=LOGIN_WINDOW_S)
    _count(keys.address, timeout=LOGIN_WINDOW_S)
    # Read-modify-write: two concurrent failures may count once — a slightly shorter delay,
    # never a lockout.
    failures, _last = cache.get(keys.username) or (0, now)
    cache.set(keys.username, (failures + 1, now), timeout=USERNAME_MEMORY_S)


def _record_success(keys: _Keys) -> None:
    cache.delete(keys.pair)
    cache.set(keys.known, 1, timeout=KNOWN_ADDRESS_TTL_S)


def throttled_login(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """Login POSTs under the policy of this module's docstring. The wrapped view answers a
    success with a redirect and a failure with its form again (200): that is how the
    outcome is told apart, for the product's login and the Django admin's alike."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.method != "POST":
            return view(request, *args, **kwargs)
        keys = _Keys(request)
        now = _clock()
        wait = _refusal(keys, now)
        if wait:
            return too_many_page(request, retry_after_s=wait)
        response = view(request, *args, **kwargs)
        if response.status_code in (301, 302, 303):
            user = getattr(request, "user", None)
            posted = str(request.POST.get("username", "")).strip().casefold()
            # Only a real login as this username marks the address as known (a logged-in
            # visitor posting someone else's name is redirected too).
            if (
                user is not None
                and user.is_authenticated
                and (user.get_username().casefold() == posted)
            ):
                _record_success(keys)
        elif response.status_code == 200:
            _record_failure(keys, now)
        return response

    return wrapped
