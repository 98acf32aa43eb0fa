"""Request id for every request, and the current membership from the session."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

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
    """Sets ``request.membership``: the logged-in user's membership in the org they chose.

    The organization never comes from the request body or query string — only from
    the session, and only among the user's own memberships.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.membership = None  # type: ignore[attr-defined]
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            memberships = Membership.objects.filter(user=user).select_related("organization")
            chosen = request.session.get(SESSION_ORG_KEY)
            membership = None
            if chosen:
                membership = memberships.filter(organization_id=chosen).first()
            if membership is None:
                membership = memberships.order_by("created_at").first()
            request.membership = membership  # type: ignore[attr-defined]
        return self.get_response(request)
