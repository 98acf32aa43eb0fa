"""Django admin for the routers app. Edits made here are audited like any other: the
admin's save and delete write an AuditLog row, and member edits touch their router so
the turn's members cache notices them."""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from accounts.services import audit_log_write
from routers.models import LabelledPhrase, QualityRun, Router, RouterDecision, RouterMember


class AuditedAdmin(admin.ModelAdmin):
    def save_model(self, request: Any, obj: Any, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        audit_log_write(
            organization=obj.organization_id,
            actor=request.user,
            action=f"{obj._meta.model_name}.admin_{'update' if change else 'create'}",
            resource=obj,
            diff={"fields": list(form.changed_data)},
        )

    def delete_model(self, request: Any, obj: Any) -> None:
        audit_log_write(
            organization=obj.organization_id,
            actor=request.user,
            action=f"{obj._meta.model_name}.admin_delete",
            resource=obj,
        )
        super().delete_model(request, obj)


class RouterMemberInline(admin.TabularInline):
    model = RouterMember
    extra = 0
    fields = ("position", "intent_name", "agent", "intent_description", "examples")
    raw_id_fields = ["agent"]


@admin.register(Router)
class RouterAdmin(AuditedAdmin):
    list_display = ["name", "organization", "channel", "is_active", "fallback_agent", "updated_at"]
    list_filter = ["is_active", "organization"]
    list_select_related = ["organization", "channel", "fallback_agent"]
    search_fields = ["name"]
    raw_id_fields = ["channel", "fallback_agent", "created_by"]
    inlines = [RouterMemberInline]

    def save_related(self, request: Any, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        if any(fs.has_changed() for fs in formsets):
            form.instance.save(update_fields=["updated_at"])  # members changed: new stamp


@admin.register(RouterMember)
class RouterMemberAdmin(AuditedAdmin):
    list_display = ["intent_name", "router", "agent", "position"]
    list_select_related = ["router", "agent"]
    raw_id_fields = ["router", "agent"]

    def save_model(self, request: Any, obj: Any, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        obj.router.save(update_fields=["updated_at"])


@admin.register(RouterDecision)
class RouterDecisionAdmin(admin.ModelAdmin):
    list_display = [
        "created_at",
        "router",
        "outcome",
        "intent_name",
        "confidence",
        "stage",
        "agent",
    ]
    list_filter = ["outcome", "stage", "organization"]
    list_select_related = ["router", "agent"]
    raw_id_fields = ["router", "conversation", "turn", "agent"]

    def get_readonly_fields(self, request: Any, obj: Any = None) -> Any:  # telemetry
        return [f.name for f in RouterDecision._meta.fields]

    def has_add_permission(self, request: Any) -> bool:
        return False


@admin.register(LabelledPhrase)
class LabelledPhraseAdmin(AuditedAdmin):
    list_display = ["text", "intent_name", "router", "created_at"]
    list_filter = ["router"]
    search_fields = ["text"]
    raw_id_fields = ["router", "created_by"]


@admin.register(QualityRun)
class QualityRunAdmin(admin.ModelAdmin):
    list_display = ["created_at", "router", "status", "processed", "total"]
    list_filter = ["status"]
    raw_id_fields = ["router", "created_by"]

    def get_readonly_fields(self, request: Any, obj: Any = None) -> Any:
        return [f.name for f in QualityRun._meta.fields]
