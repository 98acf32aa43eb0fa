"""The routers app in the Django admin, under the one policy of ``accounts.admin``.

The routers pages and API are the write path of routers, members, labelled phrases and
quality runs (their services validate members, keep one router per channel and touch the
members cache), so the admin reads them. Deleting a router or a labelled phrase goes
through the same services as the pages (``router_delete``, ``labelled_phrase_delete``),
each with its AuditLog row. Decisions are telemetry: read-only. Suggestions are accepted
or rejected on the router page (``suggestion_accept`` / ``suggestion_reject``): read-only.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from accounts.admin import DeleteThroughServiceAdmin, ReadOnlyAdmin, ReadOnlyInline
from routers import services
from routers.models import (
    LabelledPhrase,
    QualityRun,
    Router,
    RouterDecision,
    RouterMember,
    RouterSuggestion,
)


class RouterMemberInline(ReadOnlyInline, admin.TabularInline):
    model = RouterMember
    fields = ("position", "intent_name", "agent", "intent_description", "examples")


@admin.register(Router)
class RouterAdmin(DeleteThroughServiceAdmin):
    list_display = ["name", "organization", "channel", "is_active", "fallback_agent", "updated_at"]
    list_filter = ["is_active", "organization"]
    list_select_related = ["organization", "channel", "fallback_agent"]
    search_fields = ["name"]
    raw_id_fields = ["channel", "fallback_agent", "created_by"]
    inlines = [RouterMemberInline]

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        services.router_delete(router=obj, actor=request.user)


@admin.register(RouterMember)
class RouterMemberAdmin(ReadOnlyAdmin):
    list_display = ["intent_name", "router", "agent", "position"]
    list_select_related = ["router", "agent"]
    raw_id_fields = ["router", "agent"]


@admin.register(RouterDecision)
class RouterDecisionAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "router",
        "outcome",
        "cue",
        "intent_name",
        "confidence",
        "stage",
        "agent",
    ]
    list_filter = ["outcome", "cue", "stage", "organization"]
    list_select_related = ["router", "agent"]
    raw_id_fields = ["router", "conversation", "turn", "agent"]


@admin.register(LabelledPhrase)
class LabelledPhraseAdmin(DeleteThroughServiceAdmin):
    list_display = ["text", "intent_name", "router", "created_at"]
    list_filter = ["router"]
    search_fields = ["text"]
    raw_id_fields = ["router", "created_by"]

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        services.labelled_phrase_delete(phrase=obj, actor=request.user)


@admin.register(QualityRun)
class QualityRunAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "router", "status", "processed", "total"]
    list_filter = ["status"]
    raw_id_fields = ["router", "created_by"]


@admin.register(RouterSuggestion)
class RouterSuggestionAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "text", "intent_name", "status", "router"]
    list_filter = ["status"]
    search_fields = ["text"]
    raw_id_fields = ["router", "conversation", "decided_by"]
