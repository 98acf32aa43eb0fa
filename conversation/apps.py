from __future__ import annotations

from django.apps import AppConfig


class ConversationConfig(AppConfig):
    name = "conversation"
    verbose_name = "Conversas"

    def ready(self) -> None:
        # Registers this app's task names, so ``dispatch.enqueue("conversation.…")`` finds
        # them in web processes too (a worker's autodiscovery is not enough there).
        from conversation import tasks  # noqa: F401
