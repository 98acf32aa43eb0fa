from __future__ import annotations

from django.apps import AppConfig


class RoutersConfig(AppConfig):
    name = "routers"
    verbose_name = "Roteadores"

    def ready(self) -> None:
        # Erasing a contact (LGPD) deletes the suggestions taken from their conversations.
        from conversation.hooks import register_contact_eraser
        from routers.privacy import erase_contact_suggestions

        register_contact_eraser(erase_contact_suggestions)

        # Registers this app's task names for ``dispatch.enqueue`` in web processes too.
        # Workers load the sentence encoder when they start, not on their first turn.
        from routers import (
            signals,  # noqa: F401
            tasks,  # noqa: F401
        )
