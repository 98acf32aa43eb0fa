"""Pages: conversations."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.access import access, role_required
from conversation import handoff as handoffs_service
from conversation import outbox, selectors
from conversation.forms import (
    ConversationFilterForm,
)
from conversation.models import (
    Conversation,
    ConversationStatus,
    Message,
)
from conversation.views._common import PAGE_SIZE, PageRequest, _page


@role_required("viewer")
@require_GET
def conversations(request: PageRequest) -> HttpResponse:
    form = ConversationFilterForm(request.GET)
    status = form.cleaned_data["status"] if form.is_valid() else ""
    rows = selectors.conversation_list(request.membership, status=status)
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    return _page(request, "conversation/conversations.html", {"form": form, "page": page})


@role_required("viewer")
@require_GET
def conversation_detail(request: PageRequest, conversation_id: uuid.UUID) -> HttpResponse:
    conversation = access(
        Conversation.objects.select_related("contact", "channel", "channel__agent"),
        request.membership,
        pk=conversation_id,
    )
    context = {
        "conversation": conversation,
        "detail": selectors.conversation_detail(conversation),
        "can_take_over": request.membership.has_role("agent"),
        "can_resend": request.membership.has_role("agent"),
    }
    return _page(request, "conversation/conversation_detail.html", context)


@role_required("agent")
@require_POST
def conversation_take_over(request: PageRequest, conversation_id: uuid.UUID) -> HttpResponse:
    conversation = access(
        Conversation.objects.select_related("contact"), request.membership, pk=conversation_id
    )
    if conversation.status == ConversationStatus.CLOSED:
        messages.error(request, _("Esta conversa está encerrada."))
        return redirect("conversation:conversation_detail", conversation_id=conversation.pk)
    handoff = handoffs_service.conversation_take_over(conversation=conversation, actor=request.user)
    messages.success(
        request, _("Você assumiu a conversa. A IA fica em silêncio até ser devolvida.")
    )
    return redirect("conversation:handoff_detail", handoff_id=handoff.pk)


@role_required("agent")
@require_POST
def message_resend(request: PageRequest, message_id: uuid.UUID) -> HttpResponse:
    """The "Reenviar" button: a failed outbound message goes back to the tail of its
    delivery chain (audited)."""
    message = access(Message.objects.all(), request.membership, pk=message_id)
    if outbox.message_resend(message=message, actor=request.user):
        messages.success(request, _("Mensagem na fila para reenvio."))
    else:
        messages.error(request, _("Só mensagens que falharam podem ser reenviadas."))
    return redirect("conversation:conversation_detail", conversation_id=message.conversation_id)
