"""The inbox in the Django admin: read-only (``accounts.admin`` policy) — the pages write
labels, notes, canned replies and markers through ``inbox.services``."""

from __future__ import annotations

from django.contrib import admin

from accounts.admin import ReadOnlyAdmin
from inbox.models import CannedReply, ConversationLabel, InternalNote, Label, ReadMarker


@admin.register(Label)
class LabelAdmin(ReadOnlyAdmin):
    list_display = ("name", "color", "organization")
    list_filter = ("organization",)


@admin.register(ConversationLabel)
class ConversationLabelAdmin(ReadOnlyAdmin):
    list_display = ("label", "conversation", "organization", "created_at")


@admin.register(InternalNote)
class InternalNoteAdmin(ReadOnlyAdmin):
    list_display = ("contact", "conversation", "author", "created_at")
    list_filter = ("organization",)


@admin.register(CannedReply)
class CannedReplyAdmin(ReadOnlyAdmin):
    list_display = ("shortcut", "title", "organization")


@admin.register(ReadMarker)
class ReadMarkerAdmin(ReadOnlyAdmin):
    list_display = ("membership", "conversation", "read_at")
