"""The channel pages' pt-BR words: what "Testar conexão" found, why a provider cannot reach
the webhook URL shown, what switching a number off stops, which number a router answers."""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from conversation.channels.probe import ProbeResult
from conversation.models import ChannelSession, Provider
from routers.models import Router

# Names only a private network resolves.
PRIVATE_SUFFIXES = (".local", ".lan", ".internal", ".home.arpa", ".test", ".example")


def webhook_url_warning(url: str, provider: str) -> str:
    """Why the provider cannot reach ``url`` (built from the address this page was opened
    at), or "": Meta calls only public HTTPS addresses; a WAHA in another container or
    server never reaches this machine's ``localhost``."""
    host = (urlsplit(url).hostname or "").lower()
    try:
        ip: Any = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    loopback = host == "localhost" or host.endswith(".localhost") or bool(ip and ip.is_loopback)
    if provider == Provider.META:
        public = ip.is_global if ip else "." in host and not host.endswith(PRIVATE_SUFFIXES)
        if urlsplit(url).scheme != "https" or loopback or not public:
            return _(
                "A Meta só chama uma URL de callback pública com HTTPS, e esta não é: abra o "
                "Retaguarda pelo endereço público dele (https://…) e copie a URL de lá."
            )
    elif provider == Provider.WAHA and loopback:
        return _(
            "“%(host)s” é esta própria máquina: um WAHA em outro contêiner ou servidor não a "
            "alcança. Abra o Retaguarda pelo endereço que o WAHA alcança (ex.: "
            "http://web:8000) e copie a URL de lá."
        ) % {"host": host}
    return ""


def already_connected(channel: ChannelSession) -> str:
    return _(
        "Este número já está conectado no canal «%(name)s»: abra-o para mudar as "
        "configurações ou gerar um novo segredo (dois canais do mesmo número responderiam "
        "duas vezes a cada mensagem)."
    ) % {"name": channel.name}


def deactivate_question(open_count: int) -> str:
    """The confirmation before switching a number off: what stops, for how many chats."""
    question = _(
        "Desativar este canal? Os webhooks passam a ser recusados: as mensagens dos clientes "
        "deixam de chegar aqui."
    )
    if not open_count:
        return question
    chats = ngettext(
        "Este número tem %(n)d conversa aberta.",
        "Este número tem %(n)d conversas abertas.",
        open_count,
    ) % {"n": open_count}
    return f"{chats} {question}"


def router_label(router: Router, channel: ChannelSession) -> str:
    if router.is_active and router.channel_id and router.channel_id != channel.pk:
        return _("%(router)s (responde em «%(channel)s»)") % {
            "router": router.name,
            "channel": router.channel.name,
        }
    return router.name


def describe_probe(channel: ChannelSession, result: ProbeResult | None) -> tuple[bool, str]:
    """(ok, what to tell the admin in pt-BR)."""
    if result is None:
        return True, _("O simulador não depende de provedor: está sempre pronto.")
    d = result.details
    waha = channel.provider == Provider.WAHA
    # The host, never a "user:password@" an address typed in the Django admin may carry.
    address = urlsplit(channel.api_base_url).netloc or channel.api_base_url
    host = address.rpartition("@")[2] or "graph.facebook.com"
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
        blockers = _inbound_blockers(channel)
        return not blockers, " ".join([text, *blockers])
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


def _inbound_blockers(channel: ChannelSession) -> list[str]:
    """What keeps the customers' messages from arriving although the provider answered:
    the probe reads with the token, it does not see the webhook's side."""
    found = []
    if not channel.is_active:
        found.append(_("Mas o canal está desativado: ative-o para receber as mensagens."))
    if not channel.webhook_secret:
        found.append(
            _(
                "Mas falta a Chave secreta do app (App secret): a Meta assina cada webhook "
                "com ela e, sem ela, todos são recusados. Informe-a nas configurações."
            )
            if channel.provider == Provider.META
            else _(
                "Mas falta o segredo do webhook: todos os webhooks são recusados. Gere um "
                "novo segredo e cole-o no WAHA."
            )
        )
    return [str(text) for text in found]
