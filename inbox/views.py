"""Pages of the inbox: the conversation panel (assign, resolve, labels, notes), the queue
the desktop alert polls, canned replies for the reply box, the contact profile and the
settings page (labels and canned replies). Thin: parse, authorize, call a service, render.

The conversation list itself is ``conversation.views.conversations`` (it reads
``inbox.selectors``)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import messages
from django.db.models import Q
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.access import access, role_required
from accounts.models import Membership
from accounts.pages import form_errors_text
from cases.models import Case
from conversation.models import Contact, Conversation, ConversationStatus, Message
from conversation.views._common import PageRequest, _page
from inbox import markers, selectors, services
from inbox.canned import canned_values, render_canned
from inbox.forms import AssignForm, CannedReplyForm, ContactForm, LabelForm, NoteForm
from inbox.models import CannedReply, Label

PANEL = "inbox/_conversation_panel.html"
TIMELINE = "inbox/_timeline.html"


def _conversation(request: PageRequest, conversation_id: uuid.UUID) -> Conversation:
    return access(
        Conversation.objects.select_related("contact", "assigned_to__user"),
        request.membership,
        pk=conversation_id,
    )


def _panel_context(request: PageRequest, conversation: Conversation, **extra: Any) -> dict:
    panel = selectors.conversation_panel(conversation)
    assigned = str(conversation.assigned_to_id) if conversation.assigned_to_id else ""
    return {
        "conversation": conversation,
        "panel": panel,
        "assign_form": AssignForm(
            {"responsavel": assigned}, members=selectors.member_choices(panel.members)
        ),
        "note_form": extra.pop("note_form", None) or NoteForm(),
        "can_act": request.membership.has_role("agent"),
        "assigned_name": (
            selectors.member_name(conversation.assigned_to) if conversation.assigned_to else ""
        ),
        **extra,
    }


def _panel_response(request: PageRequest, conversation: Conversation, **extra: Any) -> Any:
    """htmx: the re-rendered panel; a plain POST: back to the conversation page."""
    if request.htmx:
        return render(request, PANEL, _panel_context(request, conversation, **extra))
    return redirect("conversation:conversation_detail", conversation_id=conversation.pk)


@role_required("viewer")
@require_GET
def conversation_panel(request: PageRequest, conversation_id: uuid.UUID) -> HttpResponse:
    """The panel beside a conversation (loaded by htmx); opening it marks the conversation
    read for this member."""
    conversation = _conversation(request, conversation_id)
    markers.conversation_mark_read(conversation=conversation, membership=request.membership)
    return render(request, PANEL, _panel_context(request, conversation))


@role_required("viewer")
@require_GET
def conversation_messages(request: PageRequest, conversation_id: uuid.UUID) -> HttpResponse:
    """The page of a conversation's timeline older than the message ``antes`` (the oldest
    one shown), or the latest page without it: what "Carregar mensagens anteriores" loads.
    htmx swaps it in place of the control; a plain GET (the control's real ``href``) shows
    it as a page of its own. The same queries however long the conversation is."""
    conversation = _conversation(request, conversation_id)
    cursor = None
    before = request.GET.get("antes")
    if before is not None:
        try:
            before_id = uuid.UUID(before)
        except ValueError:
            raise Http404 from None
        # A message of this conversation only: another's (or another org's) is a 404.
        cursor = access(
            Message.objects.filter(conversation=conversation), request.membership, pk=before_id
        )
    timeline = selectors.conversation_timeline_page(conversation, before=cursor)
    context = {
        "conversation": conversation,
        "timeline": timeline,
        "can_resend": request.membership.has_role("agent"),
        "older_page": cursor is not None,
    }
    if request.htmx:
        return render(request, TIMELINE, context)
    return _page(request, "inbox/conversation_messages.html", context)


@role_required("agent")
@require_POST
def conversation_assign(request: PageRequest, conversation_id: uuid.UUID) -> HttpResponse:
    conversation = _conversation(request, conversation_id)
    members = list(selectors.assignable_members(request.membership.organization_id))
    form = AssignForm(request.POST, members=selectors.member_choices(members))
    if form.is_valid():
        chosen = form.cleaned_data["responsavel"]
        # The form only accepts one of these members: no second query for the choice.
        assignee = next((m for m in members if str(m.pk) == chosen), None) if chosen else None
        return _assign(request, conversation, assignee)
    error = _("Escolha alguém da equipe.")
    if not request.htmx:
        messages.error(request, error)
    return _panel_response(request, conversation, error=error)


@role_required("agent")
@require_POST
def conversation_assign_me(request: PageRequest, conversation_id: uuid.UUID) -> HttpResponse:
    """ "Atribuir a mim": one click from the panel."""
    conversation = _conversation(request, conversation_id)
    return _assign(request, conversation, request.membership)


def _assign(
    request: PageRequest, conversation: Conversation, assignee: Membership | None
) -> HttpResponse:
    """Assign, unless someone took the conversation since the panel showed its assignee
    (the form's ``atual``): then the panel again, with who has it now and why."""
    error = ""
    try:
        services.conversation_assign(
            conversation=conversation,
            assignee=assignee,
            actor=request.user,
            shown=request.POST.get("atual"),
        )
    except services.InboxError as exc:
        error = str(exc)
        conversation = _conversation(request, conversation.pk)  # who has it now
    if error and not request.htmx:
        messages.error(request, error)
    return _panel_response(request, conversation, error=error)


@role_required("agent")
@require_POST
def conversation_resolve(request: PageRequest, conversation_id: uuid.UUID) -> HttpResponse:
    conversation = _conversation(request, conversation_id)
    if conversation.status == ConversationStatus.CLOSED:
        messages.info(request, _("Esta conversa já estava encerrada."))
    else:
        services.conversation_resolve(conversation=conversation, actor=request.user)
        messages.success(
            request, _("Conversa resolvida. Se o cliente escrever de novo, ela é reaberta.")
        )
    return redirect("conversation:conversation_detail", conversation_id=conversation.pk)


@role_required("agent")
@require_POST
def conversation_label_toggle(
    request: PageRequest, conversation_id: uuid.UUID, label_id: uuid.UUID
) -> HttpResponse:
    conversation = _conversation(request, conversation_id)
    label = access(Label.objects.all(), request.membership, pk=label_id)
    # The button says what it asks for ("ligar" 1/0), so a stale panel cannot undo what a
    # colleague just did; without it (an older page) the label flips.
    wanted = {"1": True, "0": False}.get(request.POST.get("ligar", ""))
    services.conversation_label_toggle(
        conversation=conversation, label=label, actor=request.user, on=wanted
    )
    return _panel_response(request, conversation)


@role_required("agent")
@require_POST
def conversation_note_add(request: PageRequest, conversation_id: uuid.UUID) -> HttpResponse:
    conversation = _conversation(request, conversation_id)
    form = NoteForm(request.POST)
    if form.is_valid():
        services.internal_note_add(
            contact=conversation.contact,
            conversation=conversation,
            actor=request.user,
            body=form.cleaned_data["body"],
        )
        return _panel_response(request, conversation)
    if not request.htmx:
        messages.error(request, form_errors_text(form))
    return _panel_response(request, conversation, note_form=form)


@role_required("agent")
@require_GET
def conversation_canned_replies(request: PageRequest, conversation_id: uuid.UUID) -> JsonResponse:
    """The organization's canned replies with this conversation's variables filled in, for
    the reply box's ``/`` picker (static/inbox/inbox.js)."""
    conversation = _conversation(request, conversation_id)
    values = canned_values(
        contact_name=conversation.contact.name,
        contact_phone=conversation.contact.phone,
        member_name=selectors.member_name(request.membership),
        organization_name=request.membership.organization.name,
    )
    replies = [
        {"shortcut": r.shortcut, "title": r.title, "text": render_canned(r.body, values)}
        for r in selectors.canned_replies(request.membership.organization_id)
    ]
    return JsonResponse({"replies": replies})


@role_required("viewer")
@require_GET
def queue(request: PageRequest) -> JsonResponse:
    """The member's own queue (open handoffs assigned to them or to the team), polled by
    the desktop alert. Names and links only — never message text."""
    items = [
        {
            "id": str(h.pk),
            "contact": str(h.conversation.contact),
            "url": reverse("conversation:handoff_detail", kwargs={"handoff_id": h.pk}),
        }
        for h in selectors.queue_handoffs(request.membership)
    ]
    return JsonResponse({"handoffs": items})


def _contact(request: PageRequest, contact_id: uuid.UUID) -> Contact:
    return access(Contact.objects.all(), request.membership, pk=contact_id)


@role_required("viewer")
@require_GET
def contact_detail(request: PageRequest, contact_id: uuid.UUID) -> HttpResponse:
    contact = _contact(request, contact_id)
    profile = selectors.contact_profile(contact)
    cases = (
        Case.objects.filter(organization_id=request.membership.organization_id)
        .filter(Q(lead=contact) | Q(conversation__contact=contact))
        .select_related("conversation__channel")
        .order_by("-opened_at")
    )
    context = {
        "contact": contact,
        "profile": profile,
        "cases": list(cases),
        "contact_form": ContactForm(initial={"name": contact.name}),
        "note_form": NoteForm(),
        "can_act": request.membership.has_role("agent"),
    }
    return _page(request, "inbox/contact_detail.html", context)


@role_required("agent")
@require_POST
def contact_edit(request: PageRequest, contact_id: uuid.UUID) -> HttpResponse:
    contact = _contact(request, contact_id)
    form = ContactForm(request.POST)
    if form.is_valid():
        services.contact_update(contact=contact, actor=request.user, name=form.cleaned_data["name"])
        messages.success(request, _("Contato atualizado."))
    else:
        messages.error(request, form_errors_text(form))
    return redirect("inbox:contact_detail", contact_id=contact.pk)


@role_required("agent")
@require_POST
def contact_note_add(request: PageRequest, contact_id: uuid.UUID) -> HttpResponse:
    contact = _contact(request, contact_id)
    form = NoteForm(request.POST)
    if form.is_valid():
        services.internal_note_add(
            contact=contact, actor=request.user, body=form.cleaned_data["body"]
        )
        messages.success(request, _("Nota adicionada."))
    else:
        messages.error(request, form_errors_text(form))
    return redirect("inbox:contact_detail", contact_id=contact.pk)


def _settings_context(request: PageRequest, **forms: Any) -> dict[str, Any]:
    org = request.membership.organization_id
    return {
        "labels": list(Label.objects.filter(organization_id=org)),
        "replies": list(selectors.canned_replies(org)),
        "label_form": forms.get("label_form") or LabelForm(),
        "canned_form": forms.get("canned_form") or CannedReplyForm(),
        "can_edit": request.membership.has_role("manager"),
    }


@role_required("viewer")
@require_GET
def inbox_settings(request: PageRequest) -> HttpResponse:
    return _page(request, "inbox/settings.html", _settings_context(request))


def _settings_create(
    request: PageRequest,
    form: forms.Form,
    create: Callable[..., object],
    *,
    error_field: str,
    done: str,
    form_key: str,
) -> HttpResponse:
    """A creation form of the settings page: create through ``create`` (the service, given
    the organization, the actor and the cleaned fields), or the page again with the errors."""
    if form.is_valid():
        try:
            create(
                organization=request.membership.organization,
                actor=request.user,
                **form.cleaned_data,
            )
        except services.InboxError as exc:
            form.add_error(error_field, str(exc))
        else:
            messages.success(request, done)
            return redirect("inbox:settings")
    return _page(request, "inbox/settings.html", _settings_context(request, **{form_key: form}))


@role_required("manager")
@require_POST
def label_create(request: PageRequest) -> HttpResponse:
    return _settings_create(
        request,
        LabelForm(request.POST),
        services.label_create,
        error_field="name",
        done=_("Etiqueta criada."),
        form_key="label_form",
    )


@role_required("manager")
@require_POST
def label_delete(request: PageRequest, label_id: uuid.UUID) -> HttpResponse:
    label = access(Label.objects.all(), request.membership, pk=label_id)
    services.label_delete(label=label, actor=request.user)
    messages.success(request, _("Etiqueta excluída."))
    return redirect("inbox:settings")


@role_required("manager")
@require_POST
def canned_reply_create(request: PageRequest) -> HttpResponse:
    return _settings_create(
        request,
        CannedReplyForm(request.POST),
        services.canned_reply_create,
        error_field="shortcut",
        done=_("Resposta pronta criada."),
        form_key="canned_form",
    )


@role_required("manager")
@require_POST
def canned_reply_delete(request: PageRequest, canned_reply_id: uuid.UUID) -> HttpResponse:
    reply = access(CannedReply.objects.all(), request.membership, pk=canned_reply_id)
    services.canned_reply_delete(canned_reply=reply, actor=request.user)
    messages.success(request, _("Resposta pronta excluída."))
    return redirect("inbox:settings")
