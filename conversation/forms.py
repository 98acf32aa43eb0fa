"""Forms of the conversation pages: they only turn input into domain values for a service."""

from __future__ import annotations

import copy
import re
from datetime import date
from typing import Any
from urllib.parse import urlsplit

from django import forms
from django.core.validators import RegexValidator
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from conversation.channels.simulator import MAX_NAME_LENGTH, MAX_TEXT_LENGTH
from conversation.llm import catalog
from conversation.models import (
    Agent,
    AgentVersion,
    ChannelSession,
    ConversationStatus,
    LlmUnavailableAction,
    ModelProvider,
    RuntimeMode,
    RuntimeProfile,
)
from conversation.services import VERSION_FIELDS

phone_validator = RegexValidator(r"^[0-9]{8,15}$", _("Use de 8 a 15 dígitos, sem espaços nem “+”."))
message_id_validator = RegexValidator(r"^[A-Za-z0-9_.:-]{1,128}$")


class ConversationFilterForm(forms.Form):
    status = forms.ChoiceField(
        label=_("Situação"),
        choices=[("", _("Todas")), *ConversationStatus.choices],
        required=False,
    )


class HandoffReplyForm(forms.Form):
    text = forms.CharField(
        label=_("Resposta"),
        max_length=MAX_TEXT_LENGTH,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": _("Escreva para o cliente…")}),
    )


class AgentVersionForm(forms.Form):
    """The fields of a new agent version; ``version_fields()`` is what the service takes."""

    prompt = forms.CharField(label=_("Instruções"), widget=forms.Textarea(attrs={"rows": 8}))
    provider = forms.ChoiceField(label=_("Provedor do modelo"), choices=ModelProvider.choices)
    # Choices from the Anthropic SDK within the organization's enabled list (__init__).
    model = forms.ChoiceField(label=_("Modelo"))
    max_steps = forms.IntegerField(label=_("Máximo de passos"), min_value=1, max_value=20)
    history_window = forms.IntegerField(
        label=_("Janela de histórico (mensagens)"), min_value=1, max_value=200
    )
    handoff_keywords = forms.CharField(
        label=_("Palavras de transbordo"),
        help_text=_(
            "Uma por linha. Se o cliente escrever uma delas, a conversa vai para a equipe."
        ),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    handoff_tool_enabled = forms.BooleanField(
        label=_("A IA pode pedir transbordo (ferramenta)"), required=False
    )
    cases_enabled = forms.BooleanField(
        label=_("Casos humanos ativados"),
        required=False,
        help_text=_(
            "Ligado: quando a IA não consegue resolver sozinha, ela abre um caso para a equipe "
            "e continua a conversa com o cliente, repassando a resposta de vocês. Desligado: "
            "se a IA prometer que alguém da equipe vai agir, a mensagem não é enviada e a "
            "conversa passa para a equipe (transbordo)."
        ),
    )
    runtime_profile = forms.ChoiceField(
        label=_("Perfil de runtime"), choices=RuntimeProfile.choices, required=False
    )
    runtime_mode = forms.ChoiceField(label=_("Modo do runtime"), choices=RuntimeMode.choices)
    llm_unavailable_action = forms.ChoiceField(
        label=_("Se o modelo estiver indisponível"),
        choices=LlmUnavailableAction.choices,
        required=False,  # a form posted without it (older clients) keeps the default
        help_text=_(
            "O cliente recebe um aviso curto. Transferir: a conversa vai para a equipe na hora. "
            "Tentar de novo: a IA tenta mais algumas vezes e, se o modelo seguir fora, transfere."
        ),
    )
    publish = forms.BooleanField(label=_("Publicar esta versão"), required=False)
    # The newest version when the page was drawn: saving over a newer one is refused (views).
    based_on = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=0)

    def __init__(
        self,
        *args: Any,
        org_settings: object = None,
        current_model: str = "",
        today: date | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        today = today or timezone.localdate()
        # Only a saved version's model is kept outside the list (a new agent's default is not).
        keep = "" if current_model == OFFLINE_MODEL else current_model
        claude = [
            (name, _model_label(state))
            for name, state in catalog.choosable_models(org_settings, today, keep=keep)
        ]
        self.fields["model"].choices = [  # type: ignore[attr-defined]
            (_("Anthropic (Claude)"), claude),
            (_("Sem rede"), [(OFFLINE_MODEL, _("Offline (determinístico)"))]),
        ]
        self.fields["model"].help_text = _(
            "A lista vem do SDK da Anthropic e das permissões da organização; modelos em fim "
            "de vida aparecem marcados."
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        provider, model = data.get("provider"), data.get("model")
        if provider == ModelProvider.OFFLINE:
            data["model"] = OFFLINE_MODEL  # the offline model has one name
        elif provider == ModelProvider.ANTHROPIC and model == OFFLINE_MODEL:
            self.add_error("model", _("Escolha um modelo Claude para o provedor Anthropic."))
        return data

    @classmethod
    def initial_from(cls, version: AgentVersion | None) -> dict[str, Any]:
        if version is None:
            return {
                "provider": ModelProvider.ANTHROPIC,
                "model": "claude-haiku-4-5",
                "max_steps": 4,
                "history_window": 20,
                "handoff_tool_enabled": True,
                "cases_enabled": True,  # DESIGN §10.3: new agents have cases on
                "runtime_mode": RuntimeMode.OFF,
                "llm_unavailable_action": LlmUnavailableAction.HANDOFF,
            }
        fields = {f: getattr(version, f) for f in VERSION_FIELDS}
        fields["handoff_keywords"] = "\n".join(str(k) for k in version.handoff_keywords or ())
        return fields

    def clean_handoff_keywords(self) -> list[str]:
        lines = (line.strip() for line in self.cleaned_data["handoff_keywords"].splitlines())
        return list(dict.fromkeys(line for line in lines if line))  # keep order, drop repeats

    def clean_llm_unavailable_action(self) -> str:
        return self.cleaned_data["llm_unavailable_action"] or LlmUnavailableAction.HANDOFF

    def version_fields(self) -> dict[str, Any]:
        return {f: self.cleaned_data[f] for f in VERSION_FIELDS}


OFFLINE_MODEL = "offline"


def _model_label(state: catalog.Lifecycle) -> str:
    if state.end_of_life is None:
        return state.model
    when = state.end_of_life.strftime("%d/%m/%Y")
    if state.status == "past_eol":
        return str(
            _("%(model)s — fim de vida desde %(date)s") % {"model": state.model, "date": when}
        )
    return str(_("%(model)s — fim de vida em %(date)s") % {"model": state.model, "date": when})


class AgentCreateForm(AgentVersionForm):
    name = forms.CharField(label=_("Nome"), max_length=120)
    field_order = ["name"]


class KnowledgeDocumentForm(forms.Form):
    title = forms.CharField(label=_("Título"), max_length=200)
    body = forms.CharField(label=_("Conteúdo"), max_length=50_000, widget=forms.Textarea)
    is_active = forms.BooleanField(
        label=_("Ativo (a IA pode consultar)"), required=False, initial=True
    )


class SimulatorSessionForm(forms.Form):
    """Who the simulated customer is and which channel they write to (read from GET)."""

    canal = forms.ModelChoiceField(
        label=_("Canal"), queryset=ChannelSession.objects.none(), empty_label=None
    )
    telefone = forms.CharField(
        label=_("Telefone do cliente"),
        validators=[phone_validator],
        widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "off"}),
    )
    nome = forms.CharField(label=_("Nome do cliente"), max_length=MAX_NAME_LENGTH, required=False)

    def __init__(self, *args: Any, channels: QuerySet[ChannelSession], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["canal"].queryset = channels  # type: ignore[attr-defined]


class SimulatorMessageForm(SimulatorSessionForm):
    texto = forms.CharField(label=_("Mensagem"), max_length=MAX_TEXT_LENGTH, strip=True)
    # Generated when the form is rendered: a double submit carries the same id and the
    # webhook's dedup stores the message once.
    id = forms.CharField(validators=[message_id_validator], widget=forms.HiddenInput)


class SimulatorChannelForm(forms.Form):
    name = forms.CharField(label=_("Nome do canal"), max_length=120, initial=_("Simulador"))
    agent = forms.ModelChoiceField(
        label=_("Agente"),
        queryset=Agent.objects.none(),
        required=False,
        empty_label=_("Assistente genérico"),
    )

    def __init__(self, *args: Any, agents: QuerySet[Agent], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["agent"].queryset = agents  # type: ignore[attr-defined]


# --- channels ------------------------------------------------------------------------------

digits_validator = RegexValidator(r"^[0-9]{5,32}$", _("Só dígitos, como o painel da Meta mostra."))
session_validator = RegexValidator(
    r"^[A-Za-z0-9_.-]{1,64}$", _("Use letras, números, “-”, “_” ou “.”, sem espaços.")
)
KEEP_SECRET = _("Deixe em branco para manter o que está guardado.")
# Identifiers typed on a phone: no capital, no "correction" (sessions are case-sensitive).
VERBATIM = {"autocapitalize": "none", "autocorrect": "off", "spellcheck": "false"}
DIGITS = {**VERBATIM, "inputmode": "numeric"}
# A server as this one reaches it: a public name, an IP, a container's name ("waha", "waha_1").
_HOST = re.compile(r"^[a-z0-9]([a-z0-9_.-]*[a-z0-9])?\.?$|^[0-9a-f.]*:[0-9a-f:.]*$")


def validate_api_address(value: str) -> None:
    """http(s), a host as Docker or a LAN names it (``http://waha:3000``, docs/whatsapp.md),
    no user or password in it (a key goes in its own, encrypted, field)."""
    try:
        parts = urlsplit(value)
        ok = parts.port != 0 and parts.scheme in ("http", "https")  # a bad port raises
    except ValueError:
        parts, ok = urlsplit(""), False
    if parts.username is not None or parts.password is not None:
        raise forms.ValidationError(
            _("Não ponha usuário nem senha no endereço: a chave vai no campo da chave da API.")
        )
    if not ok or not _HOST.match(parts.hostname or ""):
        raise forms.ValidationError(
            _("Use um endereço http:// ou https://, como http://waha:3000.")
        )


class ApiAddressField(forms.URLField):
    default_validators = [validate_api_address]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(assume_scheme="https", max_length=200, **kwargs)  # the model's 200


def origin(url: str) -> tuple[str, str]:
    """(scheme, host:port) of an address: where a stored key is sent."""
    parts = urlsplit(url or "")
    return parts.scheme.lower(), parts.netloc.lower()


def _secret(label: Any, *, required: bool, help_text: Any = "") -> forms.CharField:
    # Never rendered back (render_value=False): a stored secret is not shown again.
    return forms.CharField(
        label=label,
        required=required,
        max_length=1000,
        strip=True,
        help_text=help_text,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
    )


class _ChannelForm(forms.Form):
    """What every channel form has: a name, the number shown to staff, who answers."""

    name = forms.CharField(label=_("Nome do canal"), max_length=120)
    phone_number = forms.CharField(
        label=_("Número (só para exibir)"),
        max_length=32,
        required=False,
        help_text=_("Ex.: +55 11 98888-7777. Não é usado para enviar."),
    )
    agent = forms.ModelChoiceField(
        label=_("Agente que responde"),
        queryset=Agent.objects.none(),
        required=False,
        empty_label=_("Assistente genérico"),
    )
    # Generated when the page is rendered: a resubmitted form connects the number once.
    form_id = forms.CharField(widget=forms.HiddenInput, validators=[message_id_validator])

    def __init__(self, *args: Any, agents: QuerySet[Agent], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["agent"].queryset = agents  # type: ignore[attr-defined]

    def channel_fields(self) -> dict[str, Any]:
        """The service's keyword arguments (``channel_create``)."""
        skip = {"name", "form_id"}
        return {k: v for k, v in self.cleaned_data.items() if k not in skip}


class WahaChannelForm(_ChannelForm):
    api_base_url = ApiAddressField(
        label=_("URL da API do WAHA"),
        help_text=_("O endereço onde o WAHA responde, ex.: https://waha.suaempresa.com.br"),
    )
    external_id = forms.CharField(
        label=_("Sessão"),
        initial="default",
        max_length=64,
        validators=[session_validator],
        help_text=_("O nome da sessão no painel do WAHA (Sessions)."),
        widget=forms.TextInput(attrs=VERBATIM),
    )
    api_token = _secret(
        _("Chave da API (X-Api-Key)"),
        required=False,
        help_text=_("A WAHA_API_KEY do seu WAHA. Em branco se ele não exige chave."),
    )
    field_order = ["name", "api_base_url", "external_id", "api_token", "phone_number", "agent"]


class MetaChannelForm(_ChannelForm):
    external_id = forms.CharField(
        label=_("ID do número de telefone (Phone number ID)"),
        max_length=32,
        validators=[digits_validator],
        widget=forms.TextInput(attrs=DIGITS),
    )
    business_account_id = forms.CharField(
        label=_("ID da conta do WhatsApp Business (WABA ID)"),
        max_length=32,
        validators=[digits_validator],
        widget=forms.TextInput(attrs=DIGITS),
    )
    api_token = _secret(
        _("Token de acesso do usuário do sistema"),
        required=True,
        help_text=_("Permanente, com as permissões whatsapp_business_messaging e _management."),
    )
    webhook_secret = _secret(
        _("Chave secreta do app (App secret)"),
        required=True,
        help_text=_("Meta assina cada webhook com ela; sem ela, nenhum webhook é aceito."),
    )
    webhook_verify_token = _secret(
        _("Token de verificação do webhook"),
        required=False,
        help_text=_("Em branco: geramos um e mostramos uma única vez."),
    )
    field_order = [
        "name",
        "external_id",
        "business_account_id",
        "api_token",
        "webhook_secret",
        "webhook_verify_token",
        "phone_number",
        "agent",
    ]


class ChannelSettingsForm(forms.Form):
    """A connected channel's settings; secrets left blank keep the stored ones — except the
    WAHA key when the address moves to another server: the stored key is only ever sent
    where it was typed for (a "Testar conexão" would hand it to the new server)."""

    name = forms.CharField(label=_("Nome do canal"), max_length=120)
    phone_number = forms.CharField(
        label=_("Número (só para exibir)"), max_length=32, required=False
    )

    def __init__(self, *args: Any, provider: str, stored_key: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stored_key = stored_key
        if provider == "waha":
            for name in ("api_base_url", "external_id"):
                self.fields[name] = copy.deepcopy(WahaChannelForm.base_fields[name])
            self.fields["api_token"] = _secret(
                _("Nova chave da API (X-Api-Key)"), required=False, help_text=KEEP_SECRET
            )
        elif provider == "meta":
            for name in ("external_id", "business_account_id"):
                self.fields[name] = copy.deepcopy(MetaChannelForm.base_fields[name])
            self.fields["api_token"] = _secret(
                _("Novo token de acesso"), required=False, help_text=KEEP_SECRET
            )
            self.fields["webhook_secret"] = _secret(
                _("Nova chave secreta do app (App secret)"), required=False, help_text=KEEP_SECRET
            )

    @classmethod
    def initial_from(cls, channel: ChannelSession) -> dict[str, Any]:
        names = ("name", "phone_number", "api_base_url", "external_id", "business_account_id")
        return {n: getattr(channel, n) for n in names}

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        address = data.get("api_base_url")
        moved = address and origin(address) != origin(str(self.initial.get("api_base_url", "")))
        if moved and self.stored_key and not data.get("api_token"):
            self.add_error(
                "api_token",
                _(
                    "O endereço mudou de servidor: digite a chave da API de novo. A chave "
                    "guardada só é enviada ao servidor para o qual foi informada."
                ),
            )
        return data


class ChannelAssignForm(forms.Form):
    """Who answers the number: an agent, a router (it picks the agent per message) or the
    generic assistant. Values: ``agent:<id>``, ``router:<id>`` or ""."""

    answered_by = forms.ChoiceField(label=_("Quem responde neste número"), required=False)

    def __init__(
        self,
        *args: Any,
        agents: QuerySet[Agent],
        routers: list[tuple[str, str]],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        choices: list[Any] = [("", _("Assistente genérico"))]
        agent_choices = [(f"agent:{a.pk}", a.name) for a in agents]
        if agent_choices:
            choices.append((_("Agentes"), agent_choices))
        if routers:
            choices.append((_("Roteadores"), [(f"router:{pk}", name) for pk, name in routers]))
        self.fields["answered_by"].choices = choices  # type: ignore[attr-defined]

    def chosen(self) -> tuple[str, str]:
        """("agent" | "router" | "", id)."""
        kind, _sep, pk = str(self.cleaned_data.get("answered_by") or "").partition(":")
        return kind, pk
