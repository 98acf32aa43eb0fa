"""Pages: WhatsApp simulator."""

from __future__ import annotations

import json
import uuid
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.access import access, role_required, scoped
from accounts.models import Membership
from accounts.pages import form_errors_text
from cases import selectors as case_selectors
from conversation import selectors, services
from conversation.channels.base import WebhookError
from conversation.channels.simulator import SimulatorAdapter
from conversation.forms import (
    SimulatorChannelForm,
    SimulatorMessageForm,
    SimulatorSessionForm,
)
from conversation.inbound import webhook_receive
from conversation.models import (
    Agent,
    ChannelSession,
    Provider,
)
from conversation.views import trace_words
from conversation.views._common import PageRequest, _fragments, _page


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
        chat = selectors.simulator_chat(channel, phone)
        trace_words.tag_replies(chat.messages)
        context.update(
            chat=chat,
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
    trace_words.tag_replies(chat.messages)
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
    if form.is_valid() and _someone_elses_staff_number(membership, form):
        form.add_error(
            "telefone",
            _(
                "Esse é o número de equipe de outro membro: as mensagens dele respondem casos "
                "em nome dele. Use o seu próprio número de equipe ou um número de cliente."
            ),
        )
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
        messages.error(request, form_errors_text(form))
        return redirect(_simulator_url(channel, phone, name))
    chat = selectors.simulator_chat(channel, phone)
    trace_words.tag_replies(chat.messages)
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


def _someone_elses_staff_number(membership: Any, form: SimulatorMessageForm) -> bool:
    """Whether the simulated customer's number is another member's staff number: a message
    from it answers cases as that member (human-cases §9), so the simulator must not let
    anyone speak for someone else (the audit row would name them)."""
    phone = form.cleaned_data["telefone"]
    if phone not in case_selectors.staff_phones(membership.organization):
        return False  # a customer's number (the common case: no query)
    owner = case_selectors.staff_number_owner(membership.organization_id, phone)
    return owner is not None and owner != membership.pk
