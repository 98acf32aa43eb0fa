"""Input of the inbox pages, translated into domain values (no writes here)."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from conversation.models import ConversationStatus
from inbox.models import LabelColor
from inbox.selectors import ConversationFilters, FilterChoices, View

MAX_NOTE_LENGTH = 4000

VIEW_CHOICES = [
    (View.ALL, _("Todas")),
    (View.MINE, _("Minhas")),
    (View.UNASSIGNED, _("Sem responsável")),
]


def _choices(form: forms.Form, name: str, choices: list[tuple[str, Any]]) -> None:
    field = form.fields[name]
    assert isinstance(field, forms.ChoiceField)
    field.choices = choices


def _uuid(value: str) -> uuid.UUID | None:
    return uuid.UUID(value) if value else None


class ConversationListForm(forms.Form):
    """The list's GET parameters; an unknown value is ignored rather than a 400."""

    ver = forms.ChoiceField(choices=VIEW_CHOICES, required=False)
    q = forms.CharField(
        label=_("Buscar"),
        required=False,
        max_length=200,
        widget=forms.SearchInput(attrs={"placeholder": _("Nome, telefone ou texto da mensagem")}),
    )
    status = forms.ChoiceField(
        label=_("Situação"),
        choices=[("", _("Todas as situações")), *ConversationStatus.choices],
        required=False,
    )
    canal = forms.ChoiceField(label=_("Canal"), required=False)
    agente = forms.ChoiceField(label=_("Agente"), required=False)
    responsavel = forms.ChoiceField(label=_("Responsável"), required=False)
    etiqueta = forms.ChoiceField(label=_("Etiqueta"), required=False)

    def __init__(self, data: Any, *, choices: FilterChoices) -> None:
        super().__init__(data)
        _choices(self, "canal", [("", _("Todos os canais")), *choices.channels])
        _choices(self, "agente", [("", _("Todos os agentes")), *choices.agents])
        _choices(self, "responsavel", [("", _("Qualquer responsável")), *choices.members])
        _choices(self, "etiqueta", [("", _("Todas as etiquetas")), *choices.labels])

    def filters(self) -> ConversationFilters:
        if not self.is_valid():
            # Keep whatever fields are valid: a stale label id must not hide the search.
            data = {k: v for k, v in self.cleaned_data.items() if k not in self.errors}
        else:
            data = self.cleaned_data
        return ConversationFilters(
            view=data.get("ver") or View.ALL,
            q=data.get("q") or "",
            status=data.get("status") or "",
            channel_id=_uuid(data.get("canal") or ""),
            agent_id=_uuid(data.get("agente") or ""),
            assignee_id=_uuid(data.get("responsavel") or ""),
            label_id=_uuid(data.get("etiqueta") or ""),
        )


class AssignForm(forms.Form):
    responsavel = forms.ChoiceField(label=_("Responsável"), required=False)

    def __init__(self, data: Any = None, *, members: list[tuple[str, str]]) -> None:
        super().__init__(data)
        _choices(self, "responsavel", [("", _("Equipe (sem responsável)")), *members])


class NoteForm(forms.Form):
    body = forms.CharField(
        label=_("Nota interna"),
        max_length=MAX_NOTE_LENGTH,
        error_messages={"required": _("Escreva a nota.")},
        widget=forms.Textarea(
            attrs={"rows": 2, "placeholder": _("Só a equipe vê. Nunca é enviada ao cliente.")}
        ),
    )


class LabelForm(forms.Form):
    name = forms.CharField(label=_("Nome"), max_length=40)
    color = forms.ChoiceField(label=_("Cor"), choices=LabelColor.choices)


class CannedReplyForm(forms.Form):
    title = forms.CharField(label=_("Título"), max_length=80)
    shortcut = forms.SlugField(
        label=_("Atalho"),
        max_length=40,
        required=False,
        help_text=_("Digite / e o atalho na caixa de resposta. Vazio: vem do título."),
    )
    body = forms.CharField(
        label=_("Texto"),
        max_length=MAX_NOTE_LENGTH,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_(
            "Variáveis: {{nome}}, {{nome_completo}}, {{telefone}}, {{atendente}}, {{empresa}}."
        ),
    )


class ContactForm(forms.Form):
    name = forms.CharField(label=_("Nome"), max_length=120, required=False)
