from typing import Any

from django import forms
from django.contrib import admin

from accounts.services import audit_log_write
from conversation.models import (
    Agent,
    AgentVersion,
    ChannelSession,
    Contact,
    Conversation,
    DemoInvoice,
    Handoff,
    KnowledgeDocument,
    LlmCall,
    Message,
    RuntimeAction,
    Turn,
)
from conversation.runtime_shell.invoices import InvoiceError, validate_invoice


@admin.register(ChannelSession)
class ChannelSessionAdmin(admin.ModelAdmin):
    list_display = ["name", "organization", "provider", "is_active", "agent"]
    list_filter = ["provider", "is_active", "organization"]
    list_select_related = ["organization", "agent"]
    search_fields = ["name", "phone_number", "external_id"]
    # Secrets are write-only in the admin list; the change form shows them masked.
    exclude = ["api_token", "webhook_secret", "webhook_verify_token"]


class AgentVersionInline(admin.TabularInline):
    model = AgentVersion
    extra = 0
    fields = ("number", "provider", "model", "cases_enabled", "runtime_profile", "created_at")
    readonly_fields = fields
    can_delete = False
    show_change_link = True


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["name", "organization", "published_version"]
    list_select_related = ["organization", "published_version"]
    inlines = [AgentVersionInline]
    search_fields = ["name"]


@admin.register(AgentVersion)
class AgentVersionAdmin(admin.ModelAdmin):
    list_display = ["agent", "number", "provider", "model", "cases_enabled", "runtime_profile"]
    list_select_related = ["agent"]

    def get_readonly_fields(self, request, obj=None):  # immutable once saved
        return [f.name for f in AgentVersion._meta.fields] if obj else []


@admin.register(Contact)
class ContactAdmin(admin.ModelAdmin):
    list_display = ["phone", "name", "organization", "force_human", "opted_out_at"]
    list_filter = ["force_human", "organization"]
    search_fields = ["phone", "name"]


class MessageInline(admin.TabularInline):
    model = Message
    extra = 0
    fields = ("created_at", "direction", "sender_kind", "body", "status")
    readonly_fields = fields
    can_delete = False


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = ["contact", "channel", "status", "active_agent", "last_message_at"]
    list_filter = ["status", "organization"]
    list_select_related = ["contact", "channel", "active_agent"]
    inlines = [MessageInline]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["created_at", "conversation", "direction", "sender_kind", "status"]
    list_filter = ["direction", "status", "sender_kind"]
    raw_id_fields = ["conversation", "turn"]


@admin.register(Turn)
class TurnAdmin(admin.ModelAdmin):
    list_display = ["created_at", "conversation", "trigger_kind", "outcome", "latency_ms"]
    list_filter = ["trigger_kind", "outcome", "status"]
    raw_id_fields = ["conversation"]


@admin.register(LlmCall)
class LlmCallAdmin(admin.ModelAdmin):
    list_display = [
        "created_at",
        "purpose",
        "provider",
        "model",
        "input_tokens",
        "output_tokens",
        "error_code",
    ]
    list_filter = ["purpose", "provider", "error_code"]
    raw_id_fields = ["conversation", "turn"]


@admin.register(Handoff)
class HandoffAdmin(admin.ModelAdmin):
    list_display = ["created_at", "conversation", "reason_code", "status"]
    list_filter = ["reason_code", "status"]
    raw_id_fields = ["conversation"]


@admin.register(KnowledgeDocument)
class KnowledgeDocumentAdmin(admin.ModelAdmin):
    list_display = ["title", "organization", "is_active", "updated_at"]
    search_fields = ["title", "body"]


# --- the conversation runtime's shell (conversation/runtime_shell) -------------------------


class DemoInvoiceForm(forms.ModelForm):
    class Meta:
        model = DemoInvoice
        fields = ["organization", "contact", "detail"]

    def clean_detail(self) -> Any:
        try:
            return validate_invoice(self.cleaned_data.get("detail"))
        except InvoiceError as exc:
            raise forms.ValidationError(str(exc)) from exc


@admin.register(DemoInvoice)
class DemoInvoiceAdmin(admin.ModelAdmin):
    """Demo invoices per contact (empty contact: the organization's default)."""

    form = DemoInvoiceForm
    list_display = ["__str__", "organization", "contact", "updated_at"]
    list_filter = ["organization"]
    list_select_related = ["organization", "contact"]
    raw_id_fields = ["contact"]
    search_fields = ["contact__phone"]

    def save_model(self, request: Any, obj: DemoInvoice, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        audit_log_write(
            organization=obj.organization_id,
            actor=request.user,
            action="demo_invoice.replace" if change else "demo_invoice.create",
            resource=obj,
            diff={"contact_id": str(obj.contact_id) if obj.contact_id else None},
        )


@admin.register(RuntimeAction)
class RuntimeActionAdmin(admin.ModelAdmin):
    """The runtime's action log: read-only (it records what a backend executed)."""

    list_display = ["created_at", "conversation", "backend", "tool", "outcome", "sequence"]
    list_filter = ["backend", "tool", "outcome"]
    raw_id_fields = ["conversation", "turn"]

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False
