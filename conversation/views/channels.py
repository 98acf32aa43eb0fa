"""Pages: channels (admin) — connect a WAHA or Meta number, the webhook URL and secret to
paste into the provider (shown once), "Testar conexão", activate/deactivate, who answers,
a new webhook secret.

A stored secret is never rendered again: the secret page is the answer to the POST that
made the secret (``Cache-Control: no-store``), nothing keeps it for a later GET.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Iterable
from typing import Any

from django.contrib import messages
from django.core.cache import cache
from django.db import transaction
from django.db.models import Prefetch, QuerySet
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.access import access, role_required, scoped
from conversation import services
from conversation.channels.probe import ProbeResult, probe_meta, probe_waha
from conversation.forms import (
    ChannelAssignForm,
    ChannelSettingsForm,
    MetaChannelForm,
    WahaChannelForm,
    origin,
)
from conversation.models import (
    Agent,
    ChannelSession,
    Conversation,
    ConversationStatus,
    Provider,
)
from conversation.views import channel_words
from conversation.views._common import PageRequest, _fragments, _page
from routers import services as router_services
from routers.errors import RouterAlreadyExists, RouterInvalid
from routers.models import Router

# A resubmitted "connect" form (reload, double click) connects the number once.
FORM_ONCE_S = 6 * 3600


def _agents(request: PageRequest) -> QuerySet[Agent]:
    return scoped(Agent.objects.order_by("name"), request.membership)


def _channel(request: PageRequest, channel_id: uuid.UUID) -> ChannelSession:
    return access(ChannelSession.objects.select_related("agent"), request.membership, pk=channel_id)


def webhook_url(request: PageRequest, channel: ChannelSession) -> str:
    path = reverse("webhook", kwargs={"provider": channel.provider, "channel_id": channel.pk})
    return request.build_absolute_uri(path)


@role_required("admin")
@require_GET
def channels(request: PageRequest) -> HttpResponse:
    active_routers = Prefetch(
        "routers", queryset=Router.objects.filter(is_active=True), to_attr="active_routers"
    )
    rows = scoped(
        ChannelSession.objects.select_related("agent").prefetch_related(active_routers),
        request.membership,
    ).order_by("name")
    return _page(request, "conversation/channels.html", {"channels": rows})


@role_required("admin")
@require_http_methods(["GET", "POST"])
def channel_connect_waha(request: PageRequest) -> HttpResponse:
    return _connect(request, Provider.WAHA)


@role_required("admin")
@require_http_methods(["GET", "POST"])
def channel_connect_meta(request: PageRequest) -> HttpResponse:
    return _connect(request, Provider.META)


def _connect(request: PageRequest, provider: str) -> HttpResponse:
    form_class = WahaChannelForm if provider == Provider.WAHA else MetaChannelForm
    form = form_class(
        request.POST or None, agents=_agents(request), initial={"form_id": uuid.uuid4().hex}
    )
    if request.method == "POST" and form.is_valid():
        once_key = f"channel-connect:{request.membership.pk}:{form.cleaned_data['form_id']}"
        sent = cache.get(once_key) is not None
        taken = None if sent else _connected(request, provider, form.cleaned_data)
        # The key is taken only by a form that connects: fixed after a refusal, it still can.
        if sent or (taken is None and not cache.add(once_key, 1, FORM_ONCE_S)):
            messages.info(request, _("Este formulário já foi enviado: o canal já foi conectado."))
            return redirect("conversation:channels")
        if taken is None:
            return _create(request, form, provider)
        form.add_error("external_id", channel_words.already_connected(taken))
    context = {"form": form, "provider": provider}
    return _page(request, "conversation/channels_connect.html", context)


def _create(
    request: PageRequest, form: WahaChannelForm | MetaChannelForm, provider: str
) -> HttpResponse:
    fields = form.channel_fields()
    shown: dict[str, str] = {}
    if provider == Provider.WAHA:
        fields["webhook_secret"] = shown["webhook_secret"] = secrets.token_urlsafe(32)
    elif not fields.get("webhook_verify_token"):
        fields["webhook_verify_token"] = shown["verify_token"] = secrets.token_urlsafe(24)
    channel = services.channel_create(
        organization=request.membership.organization,
        name=form.cleaned_data["name"],
        provider=provider,
        actor=request.user,
        **fields,
    )
    return _secret_page(request, channel, shown, created=True)


def _connected(request: PageRequest, provider: str, data: dict[str, Any]) -> ChannelSession | None:
    """The organization's active channel of the same number: the same Meta phone number id,
    or the same session of the same WAHA server."""
    same = scoped(
        ChannelSession.objects.filter(
            provider=provider, external_id=data["external_id"], is_active=True
        ),
        request.membership,
    )
    if provider == Provider.WAHA:
        where = origin(data["api_base_url"])
        return next((c for c in same if origin(c.api_base_url) == where), None)
    return same.first()


def _secret_page(
    request: PageRequest, channel: ChannelSession, shown: dict[str, str], *, created: bool
) -> HttpResponse:
    url = webhook_url(request, channel)
    context = {
        "channel": channel,
        "webhook_url": url,
        "webhook_warning": channel_words.webhook_url_warning(url, channel.provider),
        "shown": shown,
        "created": created,
    }
    response = _page(request, "conversation/channels_secret.html", context)
    response["Cache-Control"] = "no-store"  # the secret exists in this one response only
    return response


@role_required("admin")
@require_http_methods(["GET", "POST"])
def channel_detail(request: PageRequest, channel_id: uuid.UUID) -> HttpResponse:
    channel = _channel(request, channel_id)
    form = ChannelSettingsForm(
        request.POST or None,
        provider=channel.provider,
        stored_key=bool(channel.api_token),
        initial=ChannelSettingsForm.initial_from(channel),
    )
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        services.channel_update(channel=channel, actor=request.user, name=data.pop("name"), **data)
        messages.success(request, _("Configurações do canal salvas."))
        return redirect("conversation:channel_detail", channel_id=channel.pk)
    return _page(
        request, "conversation/channels_detail.html", _detail_context(request, channel, form)
    )


def _detail_context(
    request: PageRequest, channel: ChannelSession, form: ChannelSettingsForm
) -> dict[str, Any]:
    ordered = Router.objects.select_related("channel").order_by("name")
    routers = list(scoped(ordered, request.membership))
    active = next((r for r in routers if r.is_active and r.channel_id == channel.pk), None)
    answered_by = (
        f"router:{active.pk}"
        if active
        else (f"agent:{channel.agent_id}" if channel.agent_id else "")
    )
    assign = _assign_form(request, routers, channel, initial={"answered_by": answered_by})
    url = webhook_url(request, channel)
    open_count = (
        scoped(Conversation.objects.filter(channel=channel), request.membership)
        .exclude(status=ConversationStatus.CLOSED)
        .count()
    )
    return {
        "channel": channel,
        "form": form,
        "assign_form": assign,
        "active_router": active,
        "webhook_url": url,
        "webhook_warning": channel_words.webhook_url_warning(url, channel.provider),
        "deactivate_question": channel_words.deactivate_question(open_count),
        "has_api_token": bool(channel.api_token),
        "has_webhook_secret": bool(channel.webhook_secret),
        "has_verify_token": bool(channel.webhook_verify_token),
    }


def _assign_form(
    request: PageRequest,
    routers: Iterable[Router],
    channel: ChannelSession,
    *args: Any,
    **kwargs: Any,
) -> ChannelAssignForm:
    """The "who answers" form, choosing among the org's agents and ``routers`` — a router
    that answers another number says so (choosing it takes it from there)."""
    choices = [(str(r.pk), channel_words.router_label(r, channel)) for r in routers]
    return ChannelAssignForm(*args, agents=_agents(request), routers=choices, **kwargs)


@role_required("admin")
@require_POST
def channel_assign(request: PageRequest, channel_id: uuid.UUID) -> HttpResponse:
    channel = _channel(request, channel_id)
    routers = scoped(Router.objects.select_related("channel"), request.membership)
    form = _assign_form(request, routers, channel, request.POST)
    if not form.is_valid():
        messages.error(request, _("Escolha um agente, um roteador ou o assistente genérico."))
        return redirect("conversation:channel_detail", channel_id=channel.pk)
    kind, pk = form.chosen()
    try:
        with transaction.atomic():
            chosen = routers.get(pk=pk) if kind == "router" else None
            # One active router per number: the others on this channel stop routing it.
            for router in routers.filter(channel=channel, is_active=True):
                if router != chosen:
                    router_services.router_update(
                        router=router, actor=request.user, is_active=False
                    )
            if chosen is not None:
                # Active on another number: it leaves that one (one channel per router).
                left = chosen.channel if chosen.is_active and chosen.channel_id else None
                router_services.router_update(
                    router=chosen, actor=request.user, channel=channel, is_active=True
                )
                text = _("O roteador «%(name)s» responde neste número.") % {"name": chosen}
                if left is not None and left.pk != channel.pk:
                    text += " " + _(
                        "Ele deixou de responder em «%(channel)s»: lá, volta a responder o "
                        "agente do canal."
                    ) % {"channel": left.name}
                messages.success(request, text)
            else:
                agent = _agents(request).get(pk=pk) if kind == "agent" else None
                services.channel_update(channel=channel, actor=request.user, agent=agent)
                messages.success(request, _("Quem responde neste número foi atualizado."))
    except (RouterInvalid, RouterAlreadyExists) as exc:
        messages.error(request, str(exc))
    return redirect("conversation:channel_detail", channel_id=channel.pk)


@role_required("admin")
@require_POST
def channel_set_active(request: PageRequest, channel_id: uuid.UUID) -> HttpResponse:
    channel = _channel(request, channel_id)
    wanted = request.POST.get("is_active", "")
    if wanted not in ("on", "off"):
        messages.error(request, _("Diga se o canal deve ficar ativo ou inativo."))
        return redirect("conversation:channel_detail", channel_id=channel.pk)
    services.channel_set_active(channel=channel, actor=request.user, is_active=wanted == "on")
    if channel.is_active:
        messages.success(request, _("Canal ativado: os webhooks voltam a ser aceitos."))
    else:
        messages.success(
            request,
            _(
                "Canal desativado: os webhooks são recusados e as mensagens dos clientes "
                "deixam de chegar."
            ),
        )
    return redirect("conversation:channel_detail", channel_id=channel.pk)


@role_required("admin")
@require_POST
def channel_new_secret(request: PageRequest, channel_id: uuid.UUID) -> HttpResponse:
    channel = _channel(request, channel_id)
    secret = services.channel_new_webhook_secret(channel=channel, actor=request.user)
    key = "verify_token" if channel.provider == Provider.META else "webhook_secret"
    return _secret_page(request, channel, {key: secret}, created=False)


@role_required("admin")
@require_POST
def channel_test(request: PageRequest, channel_id: uuid.UUID) -> HttpResponse:
    channel = _channel(request, channel_id)
    ok, text = channel_words.describe_probe(channel, run_probe(channel))
    if request.htmx:
        context = {"ok": ok, "text": text}
        return _fragments(request, ("conversation/channels_probe.html", context))
    (messages.success if ok else messages.error)(request, text)
    return redirect("conversation:channel_detail", channel_id=channel.pk)


def run_probe(channel: ChannelSession) -> ProbeResult | None:
    """The provider's answer, or None for the simulator (nothing to reach)."""
    if channel.provider == Provider.WAHA:
        return probe_waha(
            base_url=channel.api_base_url, session=channel.external_id, api_key=channel.api_token
        )
    if channel.provider == Provider.META:
        return probe_meta(
            phone_number_id=channel.external_id,
            access_token=channel.api_token,
            base_url=channel.api_base_url,
        )
    return None
