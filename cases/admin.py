"""The admin shows every cases table. Cases, events and notice deliveries are written
only by the engine, so the admin reads them and never adds, changes or deletes them."""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from cases.models import (
    Case,
    CaseEvent,
    CaseFollowUp,
    CaseNotice,
    CaseNoticeAttempt,
    CaseNotificationSettings,
    CaseReminder,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False


class CaseEventInline(admin.TabularInline):
    model = CaseEvent
    extra = 0
    fields = ("created_at", "kind", "actor_kind", "actor_user", "human_action", "body")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(Case)
class CaseAdmin(ReadOnlyAdmin):
    list_display = ["title", "organization", "status", "source", "lead_unresponsive", "opened_at"]
    list_filter = ["status", "source", "lead_unresponsive", "organization"]
    list_select_related = ["organization"]
    search_fields = ["title", "summary"]
    raw_id_fields = ["conversation", "lead", "agent"]
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


@admin.register(CaseNotificationSettings)
class CaseNotificationSettingsAdmin(admin.ModelAdmin):
    list_display = [
        "organization",
        "reminders_enabled",
        "reminder_after_hours",
        "reminder_count",
        "whatsapp_enabled",
    ]
    list_select_related = ["organization"]
    raw_id_fields = ["whatsapp_channel", "updated_by"]


class CaseNoticeAttemptInline(admin.TabularInline):
    model = CaseNoticeAttempt
    extra = 0
    fields = ("number", "outcome", "error_code", "created_at")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(CaseNotice)
class CaseNoticeAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "case", "kind", "status", "attempts", "last_error"]
    list_filter = ["kind", "status"]
    list_select_related = ["case"]
    inlines = [CaseNoticeAttemptInline]
