from __future__ import annotations

from django.apps import AppConfig


class CasesConfig(AppConfig):
    name = "cases"
    verbose_name = "Casos humanos"

    def ready(self) -> None:
        from cases.hooks import cancel_case_work
        from conversation.hooks import register_cancel_pending

        # Opt-out, handoff and closed conversations cancel the cases' follow-ups (and,
        # on opt-out or close, the open cases themselves).
        register_cancel_pending(cancel_case_work)
