"""Forms of the cases pages: they only turn input into values for a service."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.core.validators import RegexValidator
from django.utils.translation import gettext_lazy as _

from accounts.models import Membership, Role, display_name
from cases.models import CaseNotificationSettings, HumanAction
from conversation.models import ChannelSession


class CaseAnswerForm(forms.Form):
    """The answer panel: the text for the AI and one of the three action buttons."""

    text = forms.CharField(
        label=_("Sua resposta para a IA"),
        max_length=4000,
        strip=True,
        widget=forms.Textarea(
            attrs={
                "rows": 4,
                "placeholder": _(
                    "O que você fez, o que precisa saber do cliente ou por que não consegue…"
                ),
            }
        ),
        error_messages={"required": _("Escreva a resposta antes de escolher a ação.")},
    )
    action = forms.ChoiceField(
        choices=HumanAction.choices,
        error_messages={"required": _("Escolha uma das três ações.")},
    )


class NotificationSettingsForm(forms.Form):
    reminders_enabled = forms.BooleanField(label=_("Cobrar casos parados"), required=False)
    reminder_after_hours = forms.IntegerField(
        label=_("Cobrar depois de (horas de espera)"), min_value=1, max_value=720
    )
    reminder_count = forms.IntegerField(
        label=_("Quantas cobranças por espera"), min_value=1, max_value=10
    )
    whatsapp_enabled = forms.BooleanField(
        label=_("Avisar um número da equipe no WhatsApp"), required=False
    )
    whatsapp_phone = forms.CharField(
        label=_("Número da equipe"),
        required=False,
        max_length=15,
        validators=[RegexValidator(r"^[0-9]{8,15}$", _("Use de 8 a 15 dígitos, sem “+”."))],
        help_text=_("Com DDI e DDD, só números. Ex.: 5511999990000."),
    )
    whatsapp_channel = forms.ModelChoiceField(
        label=_("Canal que envia o aviso"),
        queryset=ChannelSession.objects.none(),
        required=False,
        empty_label=_("— escolha um canal —"),
    )

    def __init__(self, *args: Any, organization_id: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["whatsapp_channel"].queryset = ChannelSession.objects.filter(  # type: ignore[attr-defined]
            organization_id=organization_id, is_active=True
        )

    @classmethod
    def initial_from(cls, row: CaseNotificationSettings) -> dict[str, Any]:
        return {
            "reminders_enabled": row.reminders_enabled,
            "reminder_after_hours": row.reminder_after_hours,
            "reminder_count": row.reminder_count,
            "whatsapp_enabled": row.whatsapp_enabled,
            "whatsapp_phone": row.whatsapp_phone,
            "whatsapp_channel": row.whatsapp_channel_id,
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        # On by default: the notice waits for both fields; one without the other is a slip.
        if bool(data.get("whatsapp_phone")) != bool(data.get("whatsapp_channel")):
            raise forms.ValidationError(
                _("Para avisar no WhatsApp, informe o número da equipe e o canal que envia.")
            )
        return data


class _MemberChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return display_name(obj)


# The roles that answer cases (and so can be made responsible for one).
ANSWERING_ROLES = (Role.AGENT, Role.MANAGER, Role.ADMIN)


def answering_users(organization_id: Any) -> Any:
    return (
        get_user_model()
        .objects.filter(
            memberships__organization_id=organization_id,
            memberships__role__in=ANSWERING_ROLES,
            is_active=True,  # a deactivated account answers nothing
        )
        .order_by("first_name", "username")
    )


class CaseAssignForm(forms.Form):
    """Who answers the case: one of the organization's answering members, or the team."""

    assignee = _MemberChoice(
        label=_("Responsável"),
        queryset=get_user_model().objects.none(),
        required=False,
        empty_label=_("— a equipe (sem responsável) —"),
    )

    def __init__(self, *args: Any, organization_id: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["assignee"].queryset = answering_users(organization_id)  # type: ignore[attr-defined]


class _MembershipChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        user = obj.user
        return f"{display_name(user)} ({obj.get_role_display()})"


class StaffNumberForm(forms.Form):
    """A member's staff number (empty removes it)."""

    membership = _MembershipChoice(
        label=_("Membro da equipe"),
        queryset=Membership.objects.none(),
        empty_label=_("— escolha um membro —"),
        error_messages={"required": _("Escolha um membro da equipe.")},
    )
    phone = forms.CharField(
        label=_("Número no WhatsApp"),
        required=False,
        max_length=20,
        help_text=_("Com DDI e DDD, só números. Vazio remove o número do membro."),
    )

    def __init__(self, *args: Any, organization_id: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["membership"].queryset = (  # type: ignore[attr-defined]
            Membership.objects.filter(organization_id=organization_id, role__in=ANSWERING_ROLES)
            .select_related("user")
            .order_by("user__username")
        )
