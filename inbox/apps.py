from __future__ import annotations

from django.apps import AppConfig


class InboxConfig(AppConfig):
    name = "inbox"
    verbose_name = "Caixa de entrada"

    def ready(self) -> None:
        # A member who leaves (or becomes a viewer) gives their conversations back to the
        # team: removal alone would null them, a demotion would not.
        from accounts.hooks import register_unassign
        from inbox.hooks import unassign_conversations

        register_unassign(unassign_conversations)
        # Erasing a contact (LGPD) deletes the team's notes about them too.
        from conversation.hooks import register_contact_eraser
        from inbox.privacy import erase_contact_notes

        register_contact_eraser(erase_contact_notes)
