from __future__ import annotations

from django.apps import AppConfig


class RoutersConfig(AppConfig):
    name = "routers"
    verbose_name = "Roteadores"

    def ready(self) -> None:
        # Registers this app's task names for ``dispatch.enqueue`` in web processes too.
        from routers import tasks  # noqa: F401
