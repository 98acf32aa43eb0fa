"""The conversation app in the Django admin, under the one policy of ``accounts.admin``.

Read-only: what the pipeline writes — conversations, messages, turns, the LLM ledger,
handoffs, the runtime's action log — and agents with their versions and contacts (the
agents pages and the handoff inbox are their write paths, with rules the admin would skip:
immutable versions, silencing a conversation). Through the services: the knowledge base
(``conversation.services``), channels added (``channel_create``), demo invoices
(``demo_invoice_save``). Admin-only, audited: a channel's settings (no page edits them).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils.translation import gettext_lazy as _

from accounts.admin import AuditedAdmin, ReadOnlyAdmin, ReadOnlyInline, WritingAdmin, adopt_saved
from conversation import privacy, services
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
from conversation.runtime_adapters.invoices import InvoiceError, demo_invoice_save, validate_invoice


class ChannelSessionForm(forms.ModelForm):
    # Declared for its scheme: an address typed without one is https, as on the channel
    # pages (the model field's form field would still assume http until Django 6).
    api_base_url = ChannelSession._meta.get_field("api_base_url").formfield(assume_scheme="https")

    class Meta:
        model = ChannelSession
        # No secrets (token, webhook secret, verify token): never rendered back, not even
        # masked (the change form would post them again). They are set on the channel pages
        # (/canais/), which show a generated secret once, and stored encrypted.
        fields = [
            "organization",
            "name",
            "provider",
            "external_id",
            "phone_number",
            "business_account_id",
            "api_base_url",
            "templates",
            "agent",
            "is_active",
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        agent, organization = data.get("agent"), data.get("organization")
        org_id = organization.pk if organization else self.instance.organization_id
        # Superusers work with the walls lifted: the admin must not wire another
        # organization's agent to this channel.
        if agent is not None and agent.organization_id != org_id:
            self.add_error("agent", "Escolha um agente da mesma organização do canal.")
        return data


@admin.register(ChannelSession)
class ChannelSessionAdmin(AuditedAdmin):
    """Added through ``channel_create`` (the simulator page's service: it mints the webhook
    secret); changed through the channel pages' services — ``channel_update`` (settings and
    agent) and ``channel_set_active`` — audited as there. The provider and the templates are
    read-only once it exists: a provider switch would reuse one provider's secret as the
    other's, and a template's purpose is set on the channel page, which checks its approval."""

    form = ChannelSessionForm
    list_display = ["name", "organization", "provider", "is_active", "agent"]
    list_filter = ["provider", "is_active", "organization"]
    list_select_related = ["organization", "agent"]
    search_fields = ["name", "phone_number", "external_id"]
    raw_id_fields = ["agent"]
    fixed_on_change = ("organization", "provider", "templates")

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if change:
            stored = ChannelSession.objects.get(pk=obj.pk)
            data = form.cleaned_data
            settings = {k: data[k] for k in services.CHANNEL_SETTINGS if k in data}
            services.channel_update(
                channel=stored, actor=request.user, agent=data.get("agent"), **settings
            )
            if "is_active" in data and data["is_active"] != stored.is_active:
                services.channel_set_active(
                    channel=stored, actor=request.user, is_active=data["is_active"]
                )
            adopt_saved(obj, stored)
            return
        fields = {
            k: v
            for k, v in form.cleaned_data.items()
            if k not in {"organization", "name", "provider"}
        }
        saved = services.channel_create(
            organization=obj.organization,
            name=obj.name,
            provider=obj.provider,
            actor=request.user,
            **fields,
        )
        adopt_saved(obj, saved)


class AgentVersionInline(ReadOnlyInline, admin.TabularInline):
    model = AgentVersion
    fields = ("number", "provider", "model", "cases_enabled", "runtime_profile", "created_at")
    show_change_link = True


@admin.register(Agent)
class AgentAdmin(ReadOnlyAdmin):
    list_display = ["name", "organization", "published_version"]
    list_select_related = ["organization", "published_version"]
    inlines = [AgentVersionInline]
    search_fields = ["name"]


@admin.register(AgentVersion)
class AgentVersionAdmin(ReadOnlyAdmin):
    list_display = ["agent", "number", "provider", "model", "cases_enabled", "runtime_profile"]
    list_select_related = ["agent"]


@admin.register(Contact)
class ContactAdmin(ReadOnlyAdmin):
    """Read-only, with one audited action: the LGPD erasure (``privacy.contact_erase``),
    after a confirmation page."""

    list_display = ["phone", "name", "organization", "force_human", "opted_out_at"]
    list_filter = ["force_human", "organization"]
    search_fields = ["phone", "name"]
    actions = ["erase_personal_data"]

    @admin.action(description=_("Apagar dados pessoais (LGPD)"))
    def erase_personal_data(self, request: HttpRequest, queryset: QuerySet[Contact]) -> Any:
        if request.POST.get("confirm") != "yes":
            context = {
                **self.admin_site.each_context(request),
                "title": _("Apagar dados pessoais"),
                "contacts": queryset,
                "action_checkbox_name": ACTION_CHECKBOX_NAME,
                "opts": self.model._meta,
            }
            return TemplateResponse(
                request, "admin/conversation/contact/erase_confirm.html", context
            )
        erased = 0
        for contact in queryset:
            privacy.contact_erase(contact=contact, actor=request.user)
            erased += 1
        self.message_user(
            request,
            _("Dados pessoais apagados de %(n)s contato(s).") % {"n": erased},
            messages.SUCCESS,
        )
        return None


class MessageInline(ReadOnlyInline, admin.TabularInline):
    model = Message
    fields = ("created_at", "direction", "sender_kind", "body", "status")


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    list_display = ["contact", "channel", "status", "active_agent", "last_message_at"]
    list_filter = ["status", "organization"]
    list_select_related = ["contact", "channel", "active_agent"]
    inlines = [MessageInline]


@admin.register(Message)
class MessageAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "conversation", "direction", "sender_kind", "status"]
    list_filter = ["direction", "status", "sender_kind"]
    raw_id_fields = ["conversation", "turn"]


@admin.register(Turn)
class TurnAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "conversation", "trigger_kind", "outcome", "latency_ms"]
    list_filter = ["trigger_kind", "outcome", "status"]
    raw_id_fields = ["conversation"]


@admin.register(LlmCall)
class LlmCallAdmin(ReadOnlyAdmin):
    """The cost ledger: what every model call cost, exactly as it happened."""

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
class HandoffAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "conversation", "reason_code", "status"]
    list_filter = ["reason_code", "status"]
    raw_id_fields = ["conversation"]


@admin.register(KnowledgeDocument)
class KnowledgeDocumentAdmin(WritingAdmin):
    """Through the knowledge pages' services: ``knowledge_document_save`` / ``_delete``."""

    list_display = ["title", "organization", "is_active", "updated_at"]
    search_fields = ["title", "body"]
    fixed_on_change = ("organization",)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        saved = services.knowledge_document_save(
            organization=obj.organization,
            actor=request.user,
            title=obj.title,
            body=obj.body,
            is_active=obj.is_active,
            document=obj if change else None,
        )
        adopt_saved(obj, saved)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        services.knowledge_document_delete(document=obj, actor=request.user)


# --- the conversation runtime's adapters (conversation/runtime_adapters) ----------------------


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
class DemoInvoiceAdmin(WritingAdmin):
    """Demo invoices per contact (empty contact: the organization's default), written
    through ``demo_invoice_save`` like ``manage.py load_invoices``; no delete (no service)."""

    form = DemoInvoiceForm
    list_display = ["__str__", "organization", "contact", "updated_at"]
    list_filter = ["organization"]
    list_select_related = ["organization", "contact"]
    raw_id_fields = ["contact"]
    search_fields = ["contact__phone"]
    # Replacing keeps the row's owner: the service keys an invoice on (org, contact).
    fixed_on_change = ("organization", "contact")

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        saved = demo_invoice_save(
            organization=obj.organization,
            phone=obj.contact.phone if obj.contact_id else None,
            detail=obj.detail,
            actor=request.user,
        )
        adopt_saved(obj, saved)


@admin.register(RuntimeAction)
class RuntimeActionAdmin(ReadOnlyAdmin):
    """The runtime's action log: it records what a backend executed."""

    list_display = ["created_at", "conversation", "backend", "tool", "outcome", "sequence"]
    list_filter = ["backend", "tool", "outcome"]
    raw_id_fields = ["conversation", "turn"]
