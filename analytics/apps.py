from __future__ import annotations

from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    name = "analytics"
    verbose_name = "Resultados e custos"

    def ready(self) -> None:
        # Registers this app's task names for ``dispatch.enqueue`` in web processes too.
        from analytics import tasks  # noqa: F401
