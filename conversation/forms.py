"""Forms of the conversation pages: they only turn input into domain values for a service."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.validators import RegexValidator
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _

from conversation.channels.simulator import MAX_NAME_LENGTH, MAX_TEXT_LENGTH
from conversation.models import (
    Agent,
    AgentVersion,
    ChannelSession,
    ConversationStatus,
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
    model = forms.CharField(label=_("Modelo"), max_length=80)
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
    cases_enabled = forms.BooleanField(label=_("Casos humanos ativados"), required=False)
    runtime_profile = forms.ChoiceField(
        label=_("Perfil de runtime"), choices=RuntimeProfile.choices, required=False
    )
    runtime_mode = forms.ChoiceField(label=_("Modo do runtime"), choices=RuntimeMode.choices)
    publish = forms.BooleanField(label=_("Publicar esta versão"), required=False)

    @classmethod
    def initial_from(cls, version: AgentVersion | None) -> dict[str, Any]:
        if version is None:
            return {
                "provider": ModelProvider.ANTHROPIC,
                "model": "claude-haiku-4-5",
                "max_steps": 4,
                "history_window": 20,
                "handoff_tool_enabled": True,
                "runtime_mode": RuntimeMode.OFF,
            }
        fields = {f: getattr(version, f) for f in VERSION_FIELDS}
        fields["handoff_keywords"] = "\n".join(str(k) for k in version.handoff_keywords or ())
        return fields

    def clean_handoff_keywords(self) -> list[str]:
        lines = (line.strip() for line in self.cleaned_data["handoff_keywords"].splitlines())
        return list(dict.fromkeys(line for line in lines if line))  # keep order, drop repeats

    def version_fields(self) -> dict[str, Any]:
        return {f: self.cleaned_data[f] for f in VERSION_FIELDS}


class AgentCreateForm(AgentVersionForm):
    name = forms.CharField(label=_("Nome"), max_length=120)
    field_order = ["name"]


class KnowledgeDocumentForm(forms.Form):
    title = forms.CharField(label=_("Título"), max_length=200)
    body = forms.CharField(label=_("Conteúdo"), widget=forms.Textarea(attrs={"rows": 12}))
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
