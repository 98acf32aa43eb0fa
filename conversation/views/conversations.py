"""Pages: conversations."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.access import access, role_required
from conversation import outbox, selectors
from conversation.models import (
    Conversation,
    ConversationStatus,
    Message,
)
from conversation.views import trace_words
from conversation.views._common import PAGE_SIZE, PageRequest, _page
from inbox import selectors as inbox_selectors
from inbox import services as inbox_services
from inbox.forms import VIEW_CHOICES, ConversationListForm


@role_required("viewer")
@require_GET
def conversations(request: PageRequest) -> HttpResponse:
    """The inbox list: views (Minhas / Sem responsável / Todas), search and filters
    (``inbox.selectors``); htmx polls re-render only the list (``#conversation-list``)."""
    choices = inbox_selectors.filter_choices(request.membership)
    form = ConversationListForm(request.GET, choices=choices)
    filters = form.filters()
    rows = inbox_selectors.conversation_list(request.membership, filters)
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "form": form,
        "filters": filters,
        "page": page,
        "views": VIEW_CHOICES,
        "query": request.GET.urlencode(),
    }
    if request.htmx and request.htmx.target == "conversation-list":
        return render(request, "conversation/conversations.html#list", context)
    return _page(request, "conversation/conversations.html", context)


# Past this a "turnos" value is no page of any conversation: the latest turns instead.
MAX_TURN_PAGE = 100_000


def _turn_page(value: str | None) -> int:
    """The page of turns asked for (``?turnos=2``: the 20 before the latest); 1 for a
    missing or bad value."""
    try:
        number = int(value or "")
    except ValueError:
        return 1
    return number if 1 <= number <= MAX_TURN_PAGE else 1


@role_required("viewer")
@require_GET
def conversation_detail(request: PageRequest, conversation_id: uuid.UUID) -> HttpResponse:
    """The conversation: its latest messages (the inbox's timeline page, with "Carregar
    mensagens anteriores"), one page of its turns (``?turnos=N``) with their model calls."""
    conversation = access(selectors.detail_conversations(), request.membership, pk=conversation_id)
    detail = selectors.conversation_detail(
        conversation,
        # One more than the timeline shows: it tells whether older messages exist.
        message_limit=inbox_selectors.TIMELINE_PAGE_SIZE + 1,
        turn_page=_turn_page(request.GET.get("turnos")),
    )
    # Names and sentences instead of ids (at most two queries for the whole page).
    trace_words.annotate_turns(conversation, detail.turns)
    trace_words.label_calls(detail.llm_calls)
    context = {
        "conversation": conversation,
        "detail": detail,
        # Only the latest turns tell who answers now (older pages: the channel's agent).
        "answered_by": trace_words.last_answering_agent(detail.turns)
        if not detail.turn_page.has_newer
        else "",
        # The team's internal notes between the messages, where they were written.
        "timeline": inbox_selectors.conversation_timeline(conversation, detail.messages),
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
    # The canonical handoff, and the conversation becomes the member's (inbox).
    try:
        handoff = inbox_services.conversation_take_over(
            conversation=conversation, assignee=request.membership, actor=request.user
        )
    except inbox_services.AlreadyTakenOver as taken:
        # A colleague was quicker: their handoff, still theirs.
        messages.info(request, str(taken))
        return redirect("conversation:handoff_detail", handoff_id=taken.handoff.pk)
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
