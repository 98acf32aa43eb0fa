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
