"""Tenant access helpers: scope by the membership's organization, check the role.

"Missing" and "not yours" raise the same 404 (Zulip's access_* pattern).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import resolve_url

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
            if not request.user.is_authenticated:
                if request.headers.get("HX-Request"):
                    # An htmx poll after the session expired: reload the whole page to
                    # the login form instead of swapping it into a fragment.
                    response = HttpResponse(status=204)
                    response["HX-Redirect"] = resolve_url(settings.LOGIN_URL)
                    return response
                return redirect_to_login(request.get_full_path())
            membership = current_membership(request)
            if membership is None or not membership.has_role(role):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


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
