"""The router page's suggested phrases: an admin accepts (as suggested, or as another
intent) or rejects each in one click; accepted phrases join the labelled set and teach
the local stage from the next turn on (DESIGN §10.5).

Kept apart from the other router pages (``routers.views``, near its size limit); the same
thin shape: authorize, call one service, answer htmx with the re-rendered list.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.access import access, role_required
from accounts.pages import PageRequest, act_and_tell
from routers import selectors, services
from routers.errors import RouterError
from routers.forms import intent_choices
from routers.models import Router, RouterSuggestion


def suggestions_context(router: Router, *, can_edit: bool) -> dict[str, Any]:
    """What ``routers/_suggestions.html`` needs (the router page includes it too)."""
    names = selectors.router_intent_names(router)
    return {
        "router": router,
        "suggestions": selectors.pending_suggestions(router),
        "suggestion_count": selectors.pending_suggestion_count(router),
        "suggestion_choices": intent_choices(names),
        "can_edit": can_edit,
    }


def _decide(
    request: PageRequest,
    router_id: uuid.UUID,
    suggestion_id: uuid.UUID,
    decide: Callable[..., Any],
    *,
    done: str,
    **fields: Any,
) -> HttpResponse:
    """Both buttons: the router and one of its suggestions, decided or not (a second click
    on a decided one is told so by the service, and sees the list as it is, not a 404
    page), then the one deciding service, then the list again (htmx) or the router page."""
    router = access(Router.objects.all(), request.membership, for_write_role="admin", pk=router_id)
    suggestion = access(
        RouterSuggestion.objects.all(), request.membership, pk=suggestion_id, router=router
    )
    act_and_tell(request, decide, done=done, refused=RouterError, suggestion=suggestion, **fields)
    if request.htmx:
        context = suggestions_context(router, can_edit=True)
        return render(request, "routers/_suggestions.html", context)
    return redirect("routers:router_edit", router_id=router.pk)


@role_required("admin")
@require_POST
def suggestion_accept(
    request: PageRequest, router_id: uuid.UUID, suggestion_id: uuid.UUID
) -> HttpResponse:
    return _decide(
        request,
        router_id,
        suggestion_id,
        services.suggestion_accept,
        done=_("Frase aceita: o roteador já aprende com ela."),
        intent_name=str(request.POST.get("intent_name", "")).strip(),
    )


@role_required("admin")
@require_POST
def suggestion_reject(
    request: PageRequest, router_id: uuid.UUID, suggestion_id: uuid.UUID
) -> HttpResponse:
    return _decide(
        request,
        router_id,
        suggestion_id,
        services.suggestion_reject,
        done=_("Sugestão recusada: ela não será sugerida de novo."),
    )
