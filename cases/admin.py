"""The cases app in the Django admin, under the one policy of ``accounts.admin``.

Cases, events, follow-ups, reminders and notice deliveries are written only by the engine,
so the admin reads them. The notification settings go through the page's own service,
``notifications.notification_settings_save``, with the page's form rules: the pending
reminders follow a new cadence and the change is audited, whichever door it came through.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from accounts.admin import ReadOnlyAdmin, ReadOnlyInline, WritingAdmin, adopt_saved
from cases import notifications
from cases.forms import NotificationSettingsForm
from cases.models import (
    Case,
    CaseEvent,
    CaseFollowUp,
    CaseNotice,
    CaseNoticeAttempt,
    CaseNotificationSettings,
    CaseReminder,
    StaffNumber,
)
from cases.notifications import SETTINGS_FIELDS


class CaseEventInline(ReadOnlyInline, admin.TabularInline):
    model = CaseEvent
    fields = ("created_at", "kind", "actor_kind", "actor_user", "human_action", "body")


@admin.register(Case)
class CaseAdmin(ReadOnlyAdmin):
    list_display = ["title", "organization", "status", "source", "lead_unresponsive", "opened_at"]
    list_filter = ["status", "source", "lead_unresponsive", "attention", "organization"]
    list_select_related = ["organization"]
    search_fields = ["title", "summary"]
    raw_id_fields = ["conversation", "lead", "agent", "assigned_to"]
    inlines = [CaseEventInline]


@admin.register(CaseEvent)
class CaseEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "case", "kind", "actor_kind", "human_action"]
    list_filter = ["kind", "actor_kind"]
    list_select_related = ["case"]


@admin.register(CaseFollowUp)
class CaseFollowUpAdmin(ReadOnlyAdmin):
    list_display = ["case", "due_at", "status", "cancel_reason", "fired_at"]
    list_filter = ["status"]
    list_select_related = ["case"]


@admin.register(CaseReminder)
class CaseReminderAdmin(ReadOnlyAdmin):
    list_display = ["case", "sequence", "due_at", "status", "fired_at"]
    list_filter = ["status"]
    list_select_related = ["case"]


class NotificationSettingsAdminForm(forms.ModelForm):
    """The admin's form, checked by the page's own form (ranges, the team's number, an
    active channel of the same organization, WhatsApp needing both)."""

    class Meta:
        model = CaseNotificationSettings
        fields = ["organization", *SETTINGS_FIELDS]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        organization = data.get("organization")
        org_id = organization.pk if organization else self.instance.organization_id
        if org_id is None:
            return data  # the organization field reports its own error
        channel = data.get("whatsapp_channel")
        page = NotificationSettingsForm(
            {
                **{f: data.get(f) for f in SETTINGS_FIELDS if f != "whatsapp_channel"},
                "whatsapp_channel": channel.pk if channel else "",
            },
            organization_id=org_id,
        )
        if not page.is_valid():
            for field, errors in page.errors.items():
                self.add_error(field if field in self.fields else None, errors)
        return data


@admin.register(CaseNotificationSettings)
class CaseNotificationSettingsAdmin(WritingAdmin):
    """One row per organization, written by ``notification_settings_save`` (the page's
    service: it reschedules the pending reminders and writes the AuditLog row)."""

    form = NotificationSettingsAdminForm
    list_display = [
        "organization",
        "reminders_enabled",
        "reminder_after_hours",
        "reminder_count",
        "whatsapp_enabled",
    ]
    list_select_related = ["organization"]
    raw_id_fields = ["whatsapp_channel"]
    fixed_on_change = ("organization",)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # no service deletes the row; the page edits it

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        saved = notifications.notification_settings_save(
            organization_id=obj.organization_id,
            actor=request.user,
            **{f: form.cleaned_data[f] for f in SETTINGS_FIELDS if f in form.cleaned_data},
        )
        adopt_saved(obj, saved)


class CaseNoticeAttemptInline(ReadOnlyInline, admin.TabularInline):
    model = CaseNoticeAttempt
    fields = ("number", "outcome", "error_code", "created_at")


@admin.register(CaseNotice)
class CaseNoticeAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "case", "kind", "status", "attempts", "last_error"]
    list_filter = ["kind", "status"]
    list_select_related = ["case"]
    inlines = [CaseNoticeAttemptInline]


@admin.register(StaffNumber)
class StaffNumberAdmin(ReadOnlyAdmin):
    """Read-only: numbers are set on the notifications page (``services.staff_number_set``,
    audited, and it keeps the organization's copy the turn reads)."""

    list_display = ["phone", "membership", "organization", "created_at"]
    list_select_related = ["membership__user", "organization"]
