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
from urllib.parse import urlsplit

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
)
from conversation.models import Agent, ChannelSession, Provider
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
        if not cache.add(once_key, 1, timeout=FORM_ONCE_S):
            messages.info(request, _("Este formulário já foi enviado: o canal já foi conectado."))
            return redirect("conversation:channels")
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
    context = {"form": form, "provider": provider}
    return _page(request, "conversation/channels_connect.html", context)


def _secret_page(
    request: PageRequest, channel: ChannelSession, shown: dict[str, str], *, created: bool
) -> HttpResponse:
    context = {
        "channel": channel,
        "webhook_url": webhook_url(request, channel),
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
    routers = list(scoped(Router.objects.order_by("name"), request.membership))
    active = next((r for r in routers if r.is_active and r.channel_id == channel.pk), None)
    answered_by = (
        f"router:{active.pk}"
        if active
        else (f"agent:{channel.agent_id}" if channel.agent_id else "")
    )
    assign = _assign_form(request, routers, initial={"answered_by": answered_by})
    return {
        "channel": channel,
        "form": form,
        "assign_form": assign,
        "active_router": active,
        "webhook_url": webhook_url(request, channel),
        "has_api_token": bool(channel.api_token),
        "has_webhook_secret": bool(channel.webhook_secret),
        "has_verify_token": bool(channel.webhook_verify_token),
    }


def _assign_form(
    request: PageRequest, routers: Iterable[Router], *args: Any, **kwargs: Any
) -> ChannelAssignForm:
    """The "who answers" form, choosing among the org's agents and ``routers``."""
    choices = [(str(r.pk), r.name) for r in routers]
    return ChannelAssignForm(*args, agents=_agents(request), routers=choices, **kwargs)


@role_required("admin")
@require_POST
def channel_assign(request: PageRequest, channel_id: uuid.UUID) -> HttpResponse:
    channel = _channel(request, channel_id)
    routers = scoped(Router.objects.all(), request.membership)
    form = _assign_form(request, routers, request.POST)
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
                router_services.router_update(
                    router=chosen, actor=request.user, channel=channel, is_active=True
                )
                messages.success(
                    request, _("O roteador «%(name)s» responde neste número.") % {"name": chosen}
                )
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
        messages.success(request, _("Canal desativado: webhooks recusados e nada é enviado."))
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
    ok, text = describe_probe(channel, run_probe(channel))
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


def describe_probe(channel: ChannelSession, result: ProbeResult | None) -> tuple[bool, str]:
    """(ok, what to tell the admin in pt-BR)."""
    if result is None:
        return True, _("O simulador não depende de provedor: está sempre pronto.")
    d = result.details
    waha = channel.provider == Provider.WAHA
    host = urlsplit(channel.api_base_url).netloc or channel.api_base_url or "graph.facebook.com"
    names: dict[str, object] = {
        "session": channel.external_id,
        "status": d.get("status", ""),
        "host": host,
        "phone": d.get("phone", ""),
        "name": d.get("name", ""),
        "http": result.http_status,
    }
    if result.ok:
        if waha:
            text = _("Conectado: a sessão “%(session)s” está funcionando.") % names
        else:
            text = _("Conectado: %(name)s (%(phone)s).") % names
        if waha and d.get("phone"):
            text += " " + _("Número: %(phone)s.") % names
        return True, text
    messages_by_code = {
        "invalid_config": (
            _("Faltam dados: informe a URL da API e a sessão.")
            if waha
            else _("Faltam dados: informe o ID do número e o token de acesso.")
        ),
        "unauthorized": (
            _("A chave da API foi recusada (401). Confira a WAHA_API_KEY do seu WAHA.")
            if waha
            else _(
                "O token foi recusado (401): está errado, expirou ou foi revogado. "
                "Gere um novo token do usuário do sistema."
            )
        ),
        "forbidden": (
            _("Acesso negado (403): esta chave não pode ler a sessão.")
            if waha
            else _(
                "O token não tem acesso a este número (403). Dê ao usuário do sistema "
                "acesso à conta do WhatsApp e as permissões whatsapp_business_messaging "
                "e whatsapp_business_management."
            )
        ),
        "not_found": (
            _("A sessão “%(session)s” não existe neste WAHA (404). Crie-a ou corrija o nome.")
            if waha
            else _(
                "Este ID de número não existe ou o token não o enxerga. Copie o “Phone "
                "number ID” em WhatsApp › Configuração da API."
            )
        )
        % names,
        "not_working": (
            _("A sessão existe, mas aguarda o QR code: escaneie-o no painel do WAHA.")
            if d.get("status") == "SCAN_QR_CODE"
            else _("A sessão existe, mas está “%(status)s”: inicie-a no painel do WAHA.") % names
        ),
        "unreachable": _(
            "Não foi possível conectar a %(host)s. Confira a URL e se o servidor está no ar "
            "e acessível a partir daqui."
        )
        % names,
        "timeout": _("%(host)s não respondeu a tempo. Tente de novo em instantes.") % names,
        "provider_error": _("O provedor respondeu com erro (HTTP %(http)s). Tente de novo.")
        % names,
        "unexpected_response": _(
            "A resposta não é a esperada: confira se a URL aponta para a API do provedor."
        ),
    }
    return False, str(messages_by_code.get(result.code, messages_by_code["provider_error"]))
