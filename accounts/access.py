"""Tenant access helpers: scope by the membership's organization, check the role.

"Missing" and "not yours" raise the same 404 (Zulip's access_* pattern).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render, resolve_url
from django.utils.http import url_has_allowed_host_and_scheme

from accounts.models import Membership

M = TypeVar("M", bound=Model)
View = Callable[..., HttpResponse]


def current_membership(request: HttpRequest) -> Membership | None:
    return getattr(request, "membership", None)


def role_required(role: str) -> Callable[[View], View]:
    """Login + a membership with at least ``role``; else login redirect or 403."""

    def decorator(view: View) -> View:
        @functools.wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            htmx = bool(request.headers.get("HX-Request"))
            if not request.user.is_authenticated:
                if htmx:
                    # An htmx poll after the session expired: the whole page goes to the
                    # login form (never swapped into a fragment), and back to it after.
                    response = HttpResponse(status=204)
                    response["HX-Redirect"] = _login_url(request)
                    return response
                return redirect_to_login(request.get_full_path())
            membership = current_membership(request)
            if membership is None or not membership.has_role(role):
                if htmx and request.method != "GET":
                    # htmx swaps no 403, so the click would do nothing: reload the page,
                    # which now shows what this member may do (a GET poll is left alone:
                    # refused every time, it would reload for ever).
                    return refresh_page(status=403)
                if membership is None and not htmx:
                    # Removed from their only team: no role to speak of, and "back to the
                    # start" would lead to the same refusal.
                    return render(request, "accounts/no_organization.html", status=403)
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


def refresh_page(*, status: int) -> HttpResponse:
    """An htmx answer that reloads the whole page (htmx honours ``HX-Refresh`` on any
    status)."""
    response = HttpResponse(status=status)
    response["HX-Refresh"] = "true"
    return response


def _login_url(request: HttpRequest) -> str:
    """The login page, coming back to the page the htmx request came from when that page
    is on this site (``HX-Current-URL``)."""
    current = request.headers.get("HX-Current-URL", "")
    if not current or not url_has_allowed_host_and_scheme(
        current, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return resolve_url(settings.LOGIN_URL)
    parts = urlsplit(current)
    back = parts.path + (f"?{parts.query}" if parts.query else "")
    return str(redirect_to_login(back).url)


def scoped(queryset: QuerySet[M], membership: Membership) -> QuerySet[M]:
    return queryset.filter(organization_id=membership.organization_id)


def access(
    queryset: QuerySet[M],
    membership: Membership,
    *,
    for_write_role: str | None = None,
    **lookup: Any,
) -> M:
    """One object of the membership's organization, or 404; 403 if the role may not write."""
    obj = scoped(queryset, membership).filter(**lookup).first()
    if obj is None:
        raise Http404
    if for_write_role is not None and not membership.has_role(for_write_role):
        raise PermissionDenied
    return obj
