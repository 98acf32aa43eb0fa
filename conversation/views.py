"""Pages of the back office: conversations, handoff inbox, agents, knowledge base, simulator.

Thin views: parse, authorize (``role_required`` + ``access``), call one service, render.
Full-page POSTs redirect; htmx POSTs answer with the re-rendered fragments.
"""

from __future__ import annotations

import json
import uuid
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from accounts.access import access, role_required, scoped
from accounts.models import Membership
from conversation import handoff as handoffs_service
from conversation import selectors, services
from conversation.channels.base import WebhookError
from conversation.channels.simulator import SimulatorAdapter
from conversation.forms import (
    AgentCreateForm,
    AgentVersionForm,
    ConversationFilterForm,
    HandoffReplyForm,
    KnowledgeDocumentForm,
    SimulatorChannelForm,
    SimulatorMessageForm,
    SimulatorSessionForm,
)
from conversation.inbound import webhook_receive
from conversation.models import (
    Agent,
    AgentVersion,
    ChannelSession,
    Conversation,
    ConversationStatus,
    Handoff,
    HandoffStatus,
    KnowledgeDocument,
    Provider,
)

PAGE_SIZE = 25


class PageRequest(HttpRequest):
    """What the middleware stack guarantees on a page behind ``role_required``."""

    membership: Membership
    htmx: HtmxDetails


def _page(request: PageRequest, template: str, context: dict[str, Any]) -> HttpResponse:
    # The nav's handoff badge; one COUNT query per full page.
    context.setdefault("open_handoff_count", selectors.open_handoff_count(request.membership))
    return render(request, template, context)


def _fragments(request: PageRequest, *parts: tuple[str, dict[str, Any]]) -> HttpResponse:
    """Several partials in one htmx response (the first is the target, the rest swap OOB)."""
    return HttpResponse("".join(render_to_string(t, c, request) for t, c in parts))


# --- conversations ------------------------------------------------------------------------


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


# --- handoff inbox ------------------------------------------------------------------------


def _handoff_queryset() -> Any:
    return Handoff.objects.select_related(
        "conversation", "conversation__contact", "conversation__channel", "returned_by"
    )


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
    handoff = access(_handoff_queryset(), request.membership, pk=handoff_id)
    return _page(request, "conversation/handoff_detail.html", _handoff_context(request, handoff))


@role_required("viewer")
@require_GET
def handoff_messages(request: PageRequest, handoff_id: uuid.UUID) -> HttpResponse:
    handoff = access(_handoff_queryset(), request.membership, pk=handoff_id)
    context = {
        "handoff": handoff,
        "chat_messages": selectors.conversation_messages(handoff.conversation),
    }
    return render(request, "conversation/handoff_detail.html#messages", context)


@role_required("agent")
@require_POST
def handoff_reply(request: PageRequest, handoff_id: uuid.UUID) -> HttpResponse:
    handoff = access(_handoff_queryset(), request.membership, pk=handoff_id)
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
    handoff = access(_handoff_queryset(), request.membership, pk=handoff_id)
    if handoff.status != HandoffStatus.OPEN:
        messages.info(request, _("Este transbordo já tinha sido devolvido para a IA."))
        return redirect("conversation:handoff_detail", handoff_id=handoff.pk)
    handoffs_service.handoff_return_to_ai(handoff=handoff, actor=request.user)
    messages.success(request, _("Conversa devolvida para a IA."))
    return redirect("conversation:handoffs")


# --- agents -------------------------------------------------------------------------------


@role_required("viewer")
@require_GET
def agents(request: PageRequest) -> HttpResponse:
    context = {
        "agents": selectors.agent_list(request.membership),
        "can_edit": request.membership.has_role("admin"),
    }
    return _page(request, "conversation/agents.html", context)


@role_required("admin")
@require_http_methods(["GET", "POST"])
def agent_create(request: PageRequest) -> HttpResponse:
    form = AgentCreateForm(
        request.POST or None, initial=AgentCreateForm.initial_from(None) | {"publish": True}
    )
    if request.method == "POST" and form.is_valid():
        agent = services.agent_create(
            organization=request.membership.organization,
            name=form.cleaned_data["name"],
            actor=request.user,
            publish=form.cleaned_data["publish"],
            **form.version_fields(),
        )
        messages.success(request, _("Agente criado."))
        return redirect("conversation:agent_detail", agent_id=agent.pk)
    return _page(request, "conversation/agent_create.html", {"form": form})


@role_required("viewer")
@require_http_methods(["GET", "POST"])
def agent_detail(request: PageRequest, agent_id: uuid.UUID) -> HttpResponse:
    membership = request.membership
    agent = access(
        Agent.objects.select_related("published_version"),
        membership,
        for_write_role="admin" if request.method == "POST" else None,
        pk=agent_id,
    )
    versions = selectors.agent_versions(agent)
    can_edit = membership.has_role("admin")
    if request.method == "POST":
        form = AgentVersionForm(request.POST)
        if form.is_valid():
            with transaction.atomic():  # a version saved "and published" is both or neither
                version = services.agent_version_create(
                    agent=agent, actor=request.user, **form.version_fields()
                )
                if form.cleaned_data["publish"]:
                    services.agent_publish(agent=agent, version=version, actor=request.user)
            if form.cleaned_data["publish"]:
                messages.success(
                    request, _("Versão %(n)s salva e publicada.") % {"n": version.number}
                )
            else:
                messages.success(
                    request, _("Versão %(n)s salva (não publicada).") % {"n": version.number}
                )
            return redirect("conversation:agent_detail", agent_id=agent.pk)
    else:
        form = AgentVersionForm(
            initial=AgentVersionForm.initial_from(versions[0] if versions else None)
        )
        if not can_edit:
            for field in form.fields.values():
                field.disabled = True
    context = {"agent": agent, "versions": versions, "form": form, "can_edit": can_edit}
    return _page(request, "conversation/agent_detail.html", context)


@role_required("admin")
@require_POST
def agent_version_publish(
    request: PageRequest, agent_id: uuid.UUID, version_id: uuid.UUID
) -> HttpResponse:
    agent = access(Agent.objects.all(), request.membership, pk=agent_id)
    version = access(AgentVersion.objects.all(), request.membership, pk=version_id, agent=agent)
    services.agent_publish(agent=agent, version=version, actor=request.user)
    messages.success(request, _("Versão %(n)s publicada.") % {"n": version.number})
    return redirect("conversation:agent_detail", agent_id=agent.pk)


# --- knowledge base -----------------------------------------------------------------------


@role_required("viewer")
@require_GET
def knowledge(request: PageRequest) -> HttpResponse:
    context = {
        "documents": selectors.knowledge_list(request.membership),
        "can_edit": request.membership.has_role("manager"),
    }
    return _page(request, "conversation/knowledge.html", context)


@role_required("manager")
@require_http_methods(["GET", "POST"])
def knowledge_create(request: PageRequest) -> HttpResponse:
    form = KnowledgeDocumentForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        services.knowledge_document_save(
            organization=request.membership.organization, actor=request.user, **form.cleaned_data
        )
        messages.success(request, _("Documento criado."))
        return redirect("conversation:knowledge")
    context = {"form": form, "document": None, "can_edit": True}
    return _page(request, "conversation/knowledge_form.html", context)


@role_required("viewer")
@require_http_methods(["GET", "POST"])
def knowledge_edit(request: PageRequest, document_id: uuid.UUID) -> HttpResponse:
    document = access(
        KnowledgeDocument.objects.all(),
        request.membership,
        for_write_role="manager" if request.method == "POST" else None,
        pk=document_id,
    )
    can_edit = request.membership.has_role("manager")
    initial = {"title": document.title, "body": document.body, "is_active": document.is_active}
    form = KnowledgeDocumentForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        services.knowledge_document_save(
            organization=request.membership.organization,
            actor=request.user,
            document=document,
            **form.cleaned_data,
        )
        messages.success(request, _("Documento salvo."))
        return redirect("conversation:knowledge")
    if not can_edit:
        for field in form.fields.values():
            field.disabled = True
    context = {"form": form, "document": document, "can_edit": can_edit}
    return _page(request, "conversation/knowledge_form.html", context)


@role_required("manager")
@require_POST
def knowledge_delete(request: PageRequest, document_id: uuid.UUID) -> HttpResponse:
    document = access(KnowledgeDocument.objects.all(), request.membership, pk=document_id)
    services.knowledge_document_delete(document=document, actor=request.user)
    messages.success(request, _("Documento excluído."))
    return redirect("conversation:knowledge")


# --- WhatsApp simulator -------------------------------------------------------------------


def _simulator_channel(membership: Membership, raw: str | None) -> ChannelSession:
    """One of the org's active simulator channels, else 404 (a malformed id included)."""
    try:
        channel_id = uuid.UUID(str(raw))
    except ValueError as exc:
        raise Http404 from exc
    return access(selectors.simulator_channels(membership), membership, pk=channel_id)


def _new_message_id() -> str:
    return f"c-{uuid.uuid4().hex}"


def _simulator_url(channel: ChannelSession, phone: str, name: str) -> str:
    query = urlencode({"canal": channel.pk, "telefone": phone, "nome": name})
    return f"{reverse('conversation:simulator')}?{query}"


def _composer(
    channels: Any, channel: ChannelSession, phone: str, name: str
) -> SimulatorMessageForm:
    initial = {"canal": channel.pk, "telefone": phone, "nome": name, "id": _new_message_id()}
    return SimulatorMessageForm(initial=initial, channels=channels)


@role_required("agent")
@require_GET
def simulator(request: PageRequest) -> HttpResponse:
    membership = request.membership
    channels = selectors.simulator_channels(membership)
    channel_list = list(channels)
    context: dict[str, Any] = {
        "channels": channel_list,
        "can_create_channel": membership.has_role("admin"),
        "channel_form": SimulatorChannelForm(agents=scoped(Agent.objects.all(), membership)),
    }
    if not channel_list:
        return _page(request, "conversation/simulator.html", context)
    channel = (
        _simulator_channel(membership, request.GET["canal"])
        if request.GET.get("canal")
        else channel_list[0]
    )
    data = {
        "canal": str(channel.pk),
        "telefone": request.GET.get("telefone")
        or selectors.default_simulator_phone(int(request.user.pk or 0)),
        "nome": request.GET.get("nome", _("Cliente de teste")),
    }
    session = SimulatorSessionForm(data, channels=channels)
    context.update(channel=channel, session=session, fresh_phone=selectors.fresh_simulator_phone())
    if session.is_valid():
        phone, name = session.cleaned_data["telefone"], session.cleaned_data["nome"]
        context.update(
            chat=selectors.simulator_chat(channel, phone),
            composer=_composer(channels, channel, phone, name),
            phone=phone,
        )
    return _page(request, "conversation/simulator.html", context)


@role_required("agent")
@require_GET
def simulator_chat(request: PageRequest) -> HttpResponse:
    """The chat fragment the page polls every second; 204 (nothing to swap) when unchanged."""
    channel = _simulator_channel(request.membership, request.GET.get("canal"))
    phone = request.GET.get("telefone", "")
    try:
        SimulatorSessionForm.base_fields["telefone"].clean(phone)
    except ValidationError as exc:
        raise Http404 from exc
    chat = selectors.simulator_chat(channel, phone)
    if request.GET.get("v") == chat.version:
        return HttpResponse(status=204)
    context = {"chat": chat, "channel": channel, "phone": phone}
    return render(request, "conversation/simulator.html#chat", context)


@role_required("agent")
@require_POST
def simulator_send(request: PageRequest) -> HttpResponse:
    """Chat as the customer: build the simulator's webhook JSON and receive it in-process."""
    membership = request.membership
    channel = _simulator_channel(membership, request.POST.get("canal"))
    channels = selectors.simulator_channels(membership)
    form = SimulatorMessageForm(request.POST, channels=channels)
    if form.is_valid():
        data = form.cleaned_data
        payload: dict[str, Any] = {
            "from": data["telefone"],
            "text": data["texto"],
            "id": data["id"],
        }
        if data["nome"]:
            payload["name"] = data["nome"]
        try:
            parsed = SimulatorAdapter().parse_webhook(json.dumps(payload).encode())
        except WebhookError as exc:
            form.add_error(None, _("Mensagem recusada pelo canal (%(code)s).") % {"code": exc.code})
        else:
            webhook_receive(channel=channel, parsed=parsed)
            if not request.htmx:
                return redirect(_simulator_url(channel, data["telefone"], data["nome"]))
            form = _composer(channels, channel, data["telefone"], data["nome"])
    phone, name = str(form["telefone"].value() or ""), str(form["nome"].value() or "")
    if not request.htmx:
        messages.error(request, " ".join(str(e) for errors in form.errors.values() for e in errors))
        return redirect(_simulator_url(channel, phone, name))
    chat = selectors.simulator_chat(channel, phone)
    chat_context = {"chat": chat, "channel": channel, "phone": phone, "oob": True}
    return _fragments(
        request,
        ("conversation/simulator.html#composer", {"composer": form, "channel": channel}),
        ("conversation/simulator.html#chat", chat_context),
    )


@role_required("admin")
@require_POST
def simulator_channel_create(request: PageRequest) -> HttpResponse:
    membership = request.membership
    form = SimulatorChannelForm(request.POST, agents=scoped(Agent.objects.all(), membership))
    if not form.is_valid():
        messages.error(request, _("Não foi possível criar o canal: confira o nome e o agente."))
        return redirect("conversation:simulator")
    channel = services.channel_create(
        organization=membership.organization,
        name=form.cleaned_data["name"],
        provider=Provider.SIMULATOR,
        actor=request.user,
        agent=form.cleaned_data["agent"],
    )
    messages.success(request, _("Canal de simulador criado."))
    return redirect(f"{reverse('conversation:simulator')}?{urlencode({'canal': channel.pk})}")
