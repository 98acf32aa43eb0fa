"""The Django admin's one policy for tenant rows (every app's ``admin.py`` follows it).

A tenant model is, in the admin, one of:

- **read-only** (``ReadOnlyAdmin``): rows the product writes — the ledger, telemetry,
  engine state, messages and turns. Staff read them; no add, change or delete.
- **through the services** (``WritingAdmin``; ``DeleteThroughServiceAdmin`` when deleting
  is the only write): where a page writes the model, the admin's ``save_model`` /
  ``delete_model`` call the same service the page calls (a bulk delete goes row by row
  through ``delete_model``), so the admin gets the page's rules, its side effects (e.g.
  reminders rescheduled) and its AuditLog row. Write paths with no service are switched off.
- **admin-only, audited** (``AuditedAdmin``): rows no page writes (memberships, channel
  settings): the admin saves them itself and writes an AuditLog row for every write.

Inlines are always read-only (``ReadOnlyInline``): a formset would write around the
service. ``tests/architecture/test_admin_policy.py`` holds every registration to this.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.forms import UserChangeForm
from django.db.models import Model, QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from accounts import hooks, selectors, services
from accounts.models import AuditLog, Membership, Organization
from accounts.throttle import throttled_login

# The Django admin's login counts in the same buckets as the product's login page (per
# address and per username, accounts.throttle): a second door must not double the budget
# of a password guesser. ``AdminSite.get_urls`` routes ``login/`` to this attribute.
admin.site.login = throttled_login(admin.site.login)  # type: ignore[method-assign,assignment]


class _NoWrites:
    """No add, no change, no delete: what read-only admins and inlines share."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyAdmin(_NoWrites, admin.ModelAdmin):
    """Rows written only by the product: staff read them."""


class ReadOnlyInline(_NoWrites):
    """Mixin for inlines: rows shown beside their parent, never written from there (every
    field it shows is read-only)."""

    extra = 0
    can_delete = False

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return getattr(self, "fields", None) or ()


def audit_admin_write(request: HttpRequest, obj: Model, verb: str, diff: dict[str, Any]) -> None:
    """The AuditLog row of an admin-only write (``<model>.admin_<verb>``)."""
    services.audit_log_write(
        actor=request.user,
        action=f"{obj._meta.model_name}.admin_{verb}",
        resource=obj,
        diff=diff,
    )


class WritingAdmin(admin.ModelAdmin):
    """What every admin that writes tenant rows (through a service, or audited) shares: a
    saved row keeps its owner (the ``fixed_on_change`` fields are read-only once it exists),
    and the list's bulk "delete selected" goes row by row through ``delete_model`` (its
    service call or its audit row each), never as one queryset delete."""

    fixed_on_change: tuple[str, ...] = ()

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fixed = self.fixed_on_change if obj else ()
        return [*super().get_readonly_fields(request, obj), *fixed]

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for obj in queryset:
            self.delete_model(request, obj)


class DeleteThroughServiceAdmin(ReadOnlyAdmin, WritingAdmin):
    """Read-only, except deleting, which the subclass's ``delete_model`` does through the
    page's service."""

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return admin.ModelAdmin.has_delete_permission(self, request, obj)


class AuditedAdmin(WritingAdmin):
    """Rows no page writes: the admin writes them, each write with its AuditLog row."""

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        verb = "update" if change else "create"
        audit_admin_write(request, obj, verb, {"fields": sorted(form.changed_data)})

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        audit_admin_write(request, obj, "delete", {"str": str(obj)})
        super().delete_model(request, obj)


def adopt_saved(obj: Model, saved: Model) -> None:
    """Point the admin's form instance at the row a service saved (the admin redirects
    and logs by ``obj.pk``)."""
    obj.pk = saved.pk
    obj._state.adding = False
    obj.refresh_from_db()


class OrganizationAdminForm(forms.ModelForm):
    """Every reader of ``settings`` does ``settings.get(...)`` (the budget check of every
    turn among them), so only a JSON object is stored; a blank field is a message, never a
    server error or a silent wipe of the budget and the staff numbers kept there."""

    def clean_settings(self) -> dict[str, Any]:
        value = self.cleaned_data.get("settings")
        if not isinstance(value, dict):
            raise forms.ValidationError(
                _("As configurações precisam ser um objeto JSON: use {} para nenhuma.")
            )
        return value

    def clean_message_retention_days(self) -> int | None:
        days = self.cleaned_data.get("message_retention_days")
        if days == 0:  # 0 reads as "erase at once" but would keep everything for ever
            raise forms.ValidationError(
                _("Use pelo menos 1 dia, ou deixe vazio para não apagar mensagens.")
            )
        return days


@admin.register(Organization)
class OrganizationAdmin(AuditedAdmin):
    """Organizations are not tenant rows (they are the tenants); no page creates them."""

    form = OrganizationAdminForm
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ("name",)}


class MembershipAdminForm(forms.ModelForm):
    def clean_role(self) -> str:
        role = str(self.cleaned_data["role"])
        if self.instance.pk:
            refusal = selectors.role_change_refusal(self.instance, role)
            if refusal:
                raise forms.ValidationError(refusal)
        return role


@admin.register(Membership)
class MembershipAdmin(AuditedAdmin):
    """The team page's services, here too: adding goes through ``membership_create``, a
    role change through ``membership_role_change`` and a removal through
    ``membership_remove`` — so the organization keeps an admin, and a member who leaves or
    becomes a viewer gives their cases and conversations back to the team, audited."""

    form = MembershipAdminForm

    list_display = ["user", "organization", "role", "created_at"]
    list_filter = ["role", "organization"]
    list_select_related = ["user", "organization"]
    autocomplete_fields = ["organization"]
    raw_id_fields = ["user"]
    # A membership moves to another user or organization only by remove + add.
    fixed_on_change = ("user", "organization")

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if change:
            stored = Membership.objects.get(pk=obj.pk)
            services.membership_role_change(membership=stored, actor=request.user, role=obj.role)
            return
        saved = services.membership_create(
            organization=obj.organization, user=obj.user, role=obj.role, actor=request.user
        )
        adopt_saved(obj, saved)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and selectors.removal_refusal(obj, request.user):
            return False  # the last admin, or oneself: the team page refuses it too
        return super().has_delete_permission(request, obj)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        services.membership_remove(membership=obj, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for membership in list(queryset):
            services.membership_remove(membership=membership, actor=request.user)


class UserAdminForm(UserChangeForm):
    def clean_is_active(self) -> bool:
        active = bool(self.cleaned_data.get("is_active"))
        if self.instance.pk and not active:
            # ``instance`` still holds the stored row here: only a change to inactive asks.
            refusal = selectors.deactivation_refusal(self.instance)
            if refusal:
                raise forms.ValidationError(refusal)
        return active


admin.site.unregister(get_user_model())


@admin.register(get_user_model())
class UserAdmin(DjangoUserAdmin):
    """Django's user admin, where staff deactivate an account (no page does): the account
    leaves the work of every organization it belongs to, as a removed member does — its
    open cases and assigned conversations go back to the team (``hooks.unassign_member``,
    audited by each app), one AuditLog row per organization — and the last admin who can
    log in stays active (``selectors.deactivation_refusal``). Its sessions end on their own:
    Django's backend refuses an inactive account on the next request."""

    form = UserAdminForm

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        deactivated = change and "is_active" in form.changed_data and not obj.is_active
        super().save_model(request, obj, form, change)
        if not deactivated:
            return
        for membership in Membership.objects.filter(user=obj):
            unassigned = hooks.unassign_member(membership, request.user)
            services.audit_log_write(
                actor=request.user,
                action="membership.admin_deactivate",
                resource=membership,
                diff={"user_id": obj.pk, "unassigned": unassigned},
            )


@admin.register(AuditLog)
class AuditLogAdmin(ReadOnlyAdmin):
    """Append-only: the audit log is the record of every other write."""

    list_display = ["created_at", "organization", "actor", "action", "resource_type", "resource_id"]
    list_filter = ["action", "organization"]
    list_select_related = ["organization", "actor"]
    readonly_fields = [f.name for f in AuditLog._meta.fields]
