from django.contrib import admin

from accounts.models import AuditLog, Membership, Organization


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ("name",)}


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "organization", "role", "created_at"]
    list_filter = ["role", "organization"]
    list_select_related = ["user", "organization"]
    autocomplete_fields = ["organization"]
    raw_id_fields = ["user"]


@admin.register(AuditLog)
class AuditLogAdmin(admin.ModelAdmin):
    list_display = ["created_at", "organization", "actor", "action", "resource_type", "resource_id"]
    list_filter = ["action", "organization"]
    list_select_related = ["organization", "actor"]
    readonly_fields = [f.name for f in AuditLog._meta.fields]

    def has_add_permission(self, request):  # append-only
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
