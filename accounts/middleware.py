"""Request id for every request, and the current membership from the session."""

from __future__ import annotations

import functools
import re
import uuid
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from accounts import rls, time_zones
from accounts.logging import request_id_var
from accounts.models import Membership

_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")
SESSION_ORG_KEY = "current_org_id"


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get("X-Request-Id", "")
        request_id = incoming if _SAFE_ID.match(incoming) else uuid.uuid4().hex
        request.request_id = request_id  # type: ignore[attr-defined]
        token = request_id_var.set(request_id)
        try:
            response = self.get_response(request)
        finally:
            request_id_var.reset(token)
        response["X-Request-Id"] = request_id
        return response


class MembershipMiddleware:
    """Sets ``request.membership``: the logged-in user's membership in the org they chose,
    and the row-level-security context (``accounts.rls``) the rest of the request runs in.

    The organization never comes from the request body or query string — only from
    the session, and only among the user's own memberships. On PostgreSQL an
    authenticated request is one transaction whose walls admit that organization only;
    superusers in the Django admin work with the walls lifted (staff covering every
    organization). The request runs in the organization's time zone. Anonymous requests
    get no context: tenant rows are invisible to them
    (webhooks set their own from the channel in the URL).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.membership = None  # type: ignore[attr-defined]
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return self.get_response(request)
        with rls.user_context(user.pk):
            memberships = Membership.objects.filter(user=user).select_related("organization")
            chosen = request.session.get(SESSION_ORG_KEY)
            membership = None
            if chosen:
                membership = memberships.filter(organization_id=chosen).first()
            if membership is None:
                membership = memberships.order_by("created_at").first()
            request.membership = membership  # type: ignore[attr-defined]
            if _is_staff_admin(request, user):
                with rls.bypass_rls("django admin, superuser"):
                    return self.get_response(request)
            if membership is None:
                return self.get_response(request)
            # The organization's time zone, from the row just loaded: its pages show local
            # times (``timezone.override`` puts the default back after the request).
            local = time_zones.zone(membership.organization.time_zone)
            with rls.tenant_context(membership.organization_id), timezone.override(local):
                return self.get_response(request)


def _is_staff_admin(request: HttpRequest, user: Any) -> bool:
    return bool(
        user.is_active
        and user.is_staff
        and user.is_superuser
        and request.path.startswith(_admin_prefix())
    )


@functools.cache
def _admin_prefix() -> str:
    try:
        return reverse("admin:index")
    except NoReverseMatch:  # no admin mounted: nobody is lifted
        return "\0"


class SecurityHeadersMiddleware:
    """Content-Security-Policy and Permissions-Policy on every response.

    No CDN anywhere (vendored htmx, local static files), so ``'self'`` is enough; htmx
    runs with ``includeIndicatorStyles: false`` (base.html) and needs no inline script or
    style. Referrer-Policy, nosniff, frame DENY and COOP come from Django's own settings.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.csp = settings.CONTENT_SECURITY_POLICY
        self.permissions = settings.PERMISSIONS_POLICY

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", self.csp)
        response.headers.setdefault("Permissions-Policy", self.permissions)
        response.headers.setdefault("Cross-Origin-Resource-Policy", "same-origin")
        return response
