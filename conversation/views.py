from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from accounts.access import role_required, scoped
from conversation.models import Conversation


@role_required("viewer")
def conversations(request: HttpRequest) -> HttpResponse:
    membership = request.membership  # type: ignore[attr-defined]
    rows = scoped(Conversation.objects.select_related("contact", "channel"), membership)[:100]
    return render(request, "conversation/conversations.html", {"conversations": rows})
