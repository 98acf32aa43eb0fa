"""Forms of the team and account pages: they only translate input."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm, UsernameField
from django.utils.translation import gettext_lazy as _

from accounts import time_zones
from accounts.models import Role


class InviteForm(forms.Form):
    email = forms.EmailField(label=_("E-mail"), max_length=254)
    role = forms.ChoiceField(label=_("Papel"), choices=Role.choices, initial=Role.AGENT)


class TimeZoneForm(forms.Form):
    time_zone = forms.ChoiceField(
        label=_("Fuso horário"),
        choices=time_zones.TIME_ZONE_CHOICES,
        help_text=_(
            "Os horários das páginas, os dias dos resultados e o mês do orçamento seguem o "
            "fuso da organização. Vale para toda a equipe a partir da próxima página."
        ),
        error_messages={
            "required": time_zones.INVALID_TIME_ZONE,
            "invalid_choice": time_zones.INVALID_TIME_ZONE,
        },
    )


class RoleForm(forms.Form):
    role = forms.ChoiceField(label=_("Papel"), choices=Role.choices)


class AcceptInvitationForm(UserCreationForm):
    """A new person's account: a username and a password (twice, validated)."""

    class Meta:
        model = get_user_model()
        field_classes = {"username": UsernameField}
        fields = ("username", "first_name")
        labels = {"username": _("Usuário"), "first_name": _("Seu nome")}

    def __init__(self, *args: Any, email: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.email = email
        self.instance.email = email  # the password validators compare against it
        self.fields["username"].help_text = _("Letras, números e @ . + - _ (até 150).")

    def save(self, commit: bool = True) -> Any:
        user = super().save(commit=False)
        user.email = self.email
        if commit:
            user.save()
        return user
