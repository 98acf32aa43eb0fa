"""Forms of the router pages: they only turn input into domain values for a service."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _

from accounts.models import Organization
from conversation.models import Agent, ChannelSession
from routers import selectors
from routers.classification import NONE_INTENT
from routers.loaders import RouterConfig, parse_router_config
from routers.models import Router
from routers.quality import MAX_PHRASE_CHARS
from routers.services import MAX_EXAMPLE_CHARS, MAX_EXAMPLES, MAX_MEMBERS, MemberSpec


def _agents(organization: Organization) -> QuerySet[Agent]:
    return Agent.objects.filter(organization=organization).order_by("name")


def organization_agents(organization: Organization) -> list[Agent]:
    """The agents an intent may point at, read once for every row of the intents formset
    (each row's select would otherwise query them again)."""
    return list(_agents(organization))


class RouterForm(forms.Form):
    name = forms.CharField(
        label=_("Nome"),
        max_length=120,
        help_text=_("Para você reconhecer o roteador, por exemplo “Atendimento geral”."),
    )
    channel = forms.ModelChoiceField(
        label=_("Canal (número de WhatsApp)"),
        queryset=ChannelSession.objects.none(),
        empty_label=_("Escolha o canal"),
        help_text=_("As conversas deste número passam pelo roteador."),
    )
    fallback_agent = forms.ModelChoiceField(
        label=_("Agente de reserva"),
        queryset=Agent.objects.none(),
        required=False,
        empty_label=_("Nenhum — responde com o atendimento padrão"),
        help_text=_("Atende quando o roteador não reconhece a intenção com segurança."),
    )
    is_active = forms.BooleanField(label=_("Roteador ativo"), required=False, initial=True)
    sticky = forms.BooleanField(
        label=_("Manter o mesmo agente na conversa (só troca com mudança clara de assunto)"),
        help_text=_(
            "Uma pergunta que continua o assunto sem nomear outro (“quanto custa?”, “pode ser "
            "sábado?”) fica com o agente. Uma mensagem que começa com “outra coisa” ou "
            "“aproveitando” troca de agente a partir de confiança 0,4."
        ),
        required=False,
        initial=True,
    )
    min_confidence = forms.FloatField(
        label=_("Confiança mínima"),
        min_value=0,
        max_value=1,
        help_text=_("De 0 a 1. Abaixo disso, a conversa vai para o agente de reserva."),
        widget=forms.NumberInput(attrs={"step": "0.05"}),
    )
    local_accept_threshold = forms.FloatField(
        label=_("Limiar do classificador local"),
        min_value=0,
        max_value=1,
        help_text=_(
            "De 0 a 1. Com confiança a partir daqui, o classificador local decide sozinho, "
            "sem consultar o modelo de linguagem."
        ),
        widget=forms.NumberInput(attrs={"step": "0.05"}),
    )
    classifier_model = forms.ChoiceField(label=_("Modelo do classificador"))
    # What the page showed (``selectors.router_version``): a save over someone else's
    # newer one is refused instead of silently undoing it (``services.router_save``).
    version = forms.CharField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args: Any, organization: Organization, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        keep = str(self.initial.get("classifier_model") or "")
        self.fields["classifier_model"].choices = [  # type: ignore[attr-defined]
            (name, name) for name in selectors.classifier_models(organization, keep=keep)
        ]
        self.fields["channel"].queryset = ChannelSession.objects.filter(  # type: ignore[attr-defined]
            organization=organization
        ).order_by("name")
        self.fields["fallback_agent"].queryset = _agents(organization)  # type: ignore[attr-defined]

    @classmethod
    def initial_from(cls, router: Router | None) -> dict[str, Any]:
        config = parse_router_config(router.config if router else None)
        base: dict[str, Any] = {
            "is_active": True,
            "sticky": config.sticky,
            "min_confidence": config.min_confidence,
            "local_accept_threshold": config.local_accept_threshold,
            "classifier_model": config.classifier_model,
        }
        if router is not None:
            base.update(
                name=router.name,
                channel=router.channel_id,
                fallback_agent=router.fallback_agent_id,
                is_active=router.is_active,
            )
        return base

    def config(self) -> dict[str, Any]:
        data = self.cleaned_data
        return RouterConfig(
            classifier_model=data["classifier_model"].strip(),
            sticky=data["sticky"],
            min_confidence=data["min_confidence"],
            local_accept_threshold=data["local_accept_threshold"],
        ).as_json()


class MemberForm(forms.Form):
    agent = forms.ChoiceField(label=_("Agente"))
    intent_name = forms.CharField(
        label=_("Nome da intenção"),
        max_length=60,
        widget=forms.TextInput(attrs={"placeholder": _("ex.: vendas")}),
    )
    intent_description = forms.CharField(
        label=_("Quando escolher esta intenção"),
        max_length=2000,
        help_text=_("Escreva como explicaria para um atendente novo."),
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    examples = forms.CharField(
        label=_("Exemplos de mensagens (um por linha)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
    )

    def __init__(self, *args: Any, agents: Sequence[Agent], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._agents = {str(a.pk): a for a in agents}
        self.fields["agent"].choices = [  # type: ignore[attr-defined]
            ("", _("Escolha o agente")),
            *((str(a.pk), a.name) for a in agents),
        ]

    def clean_agent(self) -> Agent:
        return self._agents[self.cleaned_data["agent"]]

    def clean_intent_name(self) -> str:
        name = str(self.cleaned_data["intent_name"]).strip()
        if name.casefold() == NONE_INTENT:
            raise forms.ValidationError(_("“none” é reservado: escolha outro nome."))
        return name

    def clean_examples(self) -> list[str]:
        lines = (line.strip() for line in self.cleaned_data["examples"].splitlines())
        examples = list(dict.fromkeys(line for line in lines if line))
        if len(examples) > MAX_EXAMPLES:
            raise forms.ValidationError(_("No máximo %(n)s exemplos.") % {"n": MAX_EXAMPLES})
        if any(len(e) > MAX_EXAMPLE_CHARS for e in examples):
            raise forms.ValidationError(
                _("Cada exemplo pode ter até %(n)s caracteres.") % {"n": MAX_EXAMPLE_CHARS}
            )
        return examples


class BaseMemberFormSet(forms.BaseFormSet):
    def clean(self) -> None:
        if any(self.errors):
            return
        seen: set[str] = set()
        for form in self.forms:
            if not form.cleaned_data or form.cleaned_data.get("DELETE"):
                continue
            name = form.cleaned_data["intent_name"].casefold()
            if name in seen:
                raise forms.ValidationError(_("Cada intenção deve ter um nome diferente."))
            seen.add(name)

    def member_specs(self) -> list[MemberSpec]:
        """The kept rows as intents; a row the page showed carries the name it had, so a
        renamed intent takes its labelled phrases along (``router_members_replace``)."""
        initial = self.initial_form_count()
        return [
            MemberSpec(
                agent=f.cleaned_data["agent"],
                intent_name=f.cleaned_data["intent_name"],
                intent_description=f.cleaned_data["intent_description"],
                examples=tuple(f.cleaned_data["examples"]),
                previous_name=str(f.initial.get("intent_name") or "") if i < initial else "",
            )
            for i, f in enumerate(self.forms)
            if f.cleaned_data and not f.cleaned_data.get("DELETE")
        ]


MemberFormSet = forms.formset_factory(
    MemberForm,
    formset=BaseMemberFormSet,
    extra=0,
    can_delete=True,
    max_num=MAX_MEMBERS,
    validate_max=True,
)


def member_initial(members: Any) -> list[dict[str, Any]]:
    return [
        {
            "agent": m.agent_id,
            "intent_name": m.intent_name,
            "intent_description": m.intent_description,
            "examples": "\n".join(str(e) for e in m.examples or ()),
        }
        for m in members
    ]


class RouterTestForm(forms.Form):
    message = forms.CharField(
        label=_("Mensagem de teste"),
        max_length=4000,
        widget=forms.Textarea(
            attrs={"rows": 2, "placeholder": _("Escreva como um cliente escreveria…")}
        ),
    )


def intent_choices(intent_names: list[str]) -> list[tuple[str, str]]:
    return [
        *((n, n) for n in intent_names),
        (NONE_INTENT, str(_("nenhuma — deve ir para a reserva"))),
    ]


class LabelledPhraseForm(forms.Form):
    text = forms.CharField(label=_("Frase"), max_length=MAX_PHRASE_CHARS)
    intent_name = forms.ChoiceField(
        label=_("Deveria ser"),
        error_messages={
            "required": _("Escolha a intenção certa."),
            "invalid_choice": _("A intenção «%(value)s» não existe neste roteador."),
        },
    )

    def __init__(self, *args: Any, intent_names: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["intent_name"].choices = intent_choices(intent_names)  # type: ignore[attr-defined]


class LabelledPasteForm(forms.Form):
    lines = forms.CharField(
        label=_("Frases rotuladas (uma por linha: frase;intenção)"),
        widget=forms.Textarea(
            attrs={
                "rows": 6,
                "placeholder": "quanto custa o plano anual?;vendas\n"
                "meu boleto venceu;financeiro\nbom dia;none",
            }
        ),
    )
