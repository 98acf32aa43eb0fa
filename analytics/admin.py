"""The analytics app in the Django admin, under the one policy of ``accounts.admin``.

Prices are global and editable here: every save and delete goes through the price
services, audited in the staff member's organization (a staff user with no membership
reads only). Rollups and budget switches are derived or recorded by the product:
read-only."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts.admin import ReadOnlyAdmin
from accounts.models import Membership, Organization
from analytics import services
from analytics.models import BudgetSwitch, DailyOutcome, DailyUsage, ModelPrice, RollupState


def _audit_organization(request: HttpRequest) -> Organization | None:
    membership = getattr(request, "membership", None)
    if membership is not None:
        return membership.organization
    first = (
        Membership.objects.filter(user_id=request.user.pk or 0)
        .select_related("organization")
        .first()
    )
    return first.organization if first is not None else None


@admin.register(ModelPrice)
class ModelPriceAdmin(admin.ModelAdmin):
    list_display = (
        "model",
        "input_per_mtok",
        "output_per_mtok",
        "cache_write_per_mtok",
        "cache_read_per_mtok",
        "effective_date",
        "source_date",
    )
    search_fields = ("model",)

    def _writable(self, request: HttpRequest) -> bool:
        return _audit_organization(request) is not None

    def has_add_permission(self, request: HttpRequest) -> bool:
        return super().has_add_permission(request) and self._writable(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_change_permission(request, obj) and self._writable(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_delete_permission(request, obj) and self._writable(request)

    def save_model(self, request: HttpRequest, obj: ModelPrice, form: Any, change: bool) -> None:
        organization = _audit_organization(request)
        assert organization is not None  # has_*_permission
        values = services.PriceInput(
            model=obj.model,
            input_per_mtok=obj.input_per_mtok,
            output_per_mtok=obj.output_per_mtok,
            cache_write_per_mtok=obj.cache_write_per_mtok,
            cache_read_per_mtok=obj.cache_read_per_mtok,
            effective_date=obj.effective_date,
            source_date=obj.source_date,
            source=obj.source,
        )
        existing = ModelPrice.objects.filter(pk=obj.pk).first() if change else None
        saved = services.model_price_save(
            organization=organization, actor=request.user, values=values, price=existing
        )
        obj.pk = saved.pk

    def delete_model(self, request: HttpRequest, obj: ModelPrice) -> None:
        organization = _audit_organization(request)
        assert organization is not None
        services.model_price_delete(organization=organization, actor=request.user, price=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ModelPrice]) -> None:
        for obj in queryset:
            self.delete_model(request, obj)


@admin.register(BudgetSwitch)
class BudgetSwitchAdmin(ReadOnlyAdmin):
    list_display = ("organization", "month", "level", "spend_usd", "limit_usd", "created_at")
    list_filter = ("level",)


@admin.register(DailyOutcome)
class DailyOutcomeAdmin(ReadOnlyAdmin):
    list_display = ("organization", "day", "channel", "agent")
    # The channel and the agent may be empty: the admin's own select_related() skips
    # nullable keys, which cost two queries a row.
    list_select_related = ("organization", "channel", "agent")


@admin.register(DailyUsage)
class DailyUsageAdmin(ReadOnlyAdmin):
    list_display = ("organization", "day", "model", "calls", "input_tokens", "output_tokens")


@admin.register(RollupState)
class RollupStateAdmin(ReadOnlyAdmin):
    list_display = ("organization", "final_before", "rolled_at")
