"""A small fixed-window rate limit on the cache, for login attempts and webhooks."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.utils.translation import gettext as _

LOGIN_ATTEMPTS_PER_10_MIN = 10


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
    return str(request.META.get("REMOTE_ADDR", ""))


def throttled_login(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.method == "POST" and not hit(
            f"login:{client_ip(request)}", limit=LOGIN_ATTEMPTS_PER_10_MIN, window_s=600
        ):
            return HttpResponse(
                _("Muitas tentativas de login. Aguarde alguns minutos."), status=429
            )
        return view(request, *args, **kwargs)

    return wrapped
