"""Pages: handoff inbox."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from accounts.access import access, role_required
from conversation import handoff as handoffs_service
from conversation import selectors
from conversation.forms import (
    HandoffReplyForm,
)
from conversation.models import (
    Handoff,
    HandoffStatus,
)
from conversation.views._common import PAGE_SIZE, PageRequest, _fragments, _page


def _handoff(request: PageRequest, handoff_id: uuid.UUID) -> Handoff:
    queryset = Handoff.objects.select_related(
        "conversation", "conversation__contact", "conversation__channel", "returned_by"
    )
    return access(queryset, request.membership, pk=handoff_id)


def _handoff_context(
    request: PageRequest, handoff: Handoff, form: HandoffReplyForm | None = None
) -> dict[str, Any]:
    return {
        "handoff": handoff,
        "conversation": handoff.conversation,
        "chat_messages": selectors.conversation_messages(handoff.conversation),
        "form": form or HandoffReplyForm(),
        "can_reply": request.membership.has_role("agent") and handoff.status == HandoffStatus.OPEN,
    }


@role_required("viewer")
@require_GET
def handoffs(request: PageRequest) -> HttpResponse:
    page = Paginator(selectors.handoff_inbox(request.membership), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    return _page(request, "conversation/handoffs.html", {"page": page})


@role_required("viewer")
@require_GET
def handoff_badge(request: PageRequest) -> HttpResponse:
    count = selectors.open_handoff_count(request.membership)
    return render(request, "conversation/_handoff_badge.html", {"open_handoff_count": count})


@role_required("viewer")
@require_GET
def handoff_detail(request: PageRequest, handoff_id: uuid.UUID) -> HttpResponse:
    handoff = _handoff(request, handoff_id)
    return _page(request, "conversation/handoff_detail.html", _handoff_context(request, handoff))


@role_required("viewer")
@require_GET
def handoff_messages(request: PageRequest, handoff_id: uuid.UUID) -> HttpResponse:
    handoff = _handoff(request, handoff_id)
    context = {
        "handoff": handoff,
        "chat_messages": selectors.conversation_messages(handoff.conversation),
    }
    return render(request, "conversation/handoff_detail.html#messages", context)


@role_required("agent")
@require_POST
def handoff_reply(request: PageRequest, handoff_id: uuid.UUID) -> HttpResponse:
    handoff = _handoff(request, handoff_id)
    if handoff.status != HandoffStatus.OPEN:
        messages.error(request, _("Este transbordo já foi devolvido para a IA."))
        url = reverse("conversation:handoff_detail", kwargs={"handoff_id": handoff.pk})
        return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    form = HandoffReplyForm(request.POST)
    if form.is_valid():
        handoffs_service.handoff_reply(
            handoff=handoff, actor=request.user, text=form.cleaned_data["text"]
        )
        if not request.htmx:
            return redirect("conversation:handoff_detail", handoff_id=handoff.pk)
        form = HandoffReplyForm()
    context = _handoff_context(request, handoff, form)
    if request.htmx:
        return _fragments(
            request,
            ("conversation/handoff_detail.html#messages", context),
            ("conversation/handoff_detail.html#reply_form", {**context, "oob": True}),
        )
    return _page(request, "conversation/handoff_detail.html", context)


@role_required("agent")
@require_POST
def handoff_return(request: PageRequest, handoff_id: uuid.UUID) -> HttpResponse:
    handoff = _handoff(request, handoff_id)
    if handoff.status != HandoffStatus.OPEN:
        messages.info(request, _("Este transbordo já tinha sido devolvido para a IA."))
        return redirect("conversation:handoff_detail", handoff_id=handoff.pk)
    handoffs_service.handoff_return_to_ai(handoff=handoff, actor=request.user)
    messages.success(request, _("Conversa devolvida para a IA."))
    return redirect("conversation:handoffs")
