from __future__ import annotations

from django.apps import AppConfig


class CasesConfig(AppConfig):
    name = "cases"
    verbose_name = "Casos humanos"

    def ready(self) -> None:
        from cases.hooks import cancel_case_work, resume_case_work
        from conversation.hooks import register_cancel_pending, register_resume_pending

        # Opt-out, handoff and closed conversations cancel the cases' follow-ups (and,
        # on opt-out, close or erasure, the open cases themselves); giving a conversation
        # back to the AI re-arms the follow-ups of its cases still waiting on the customer.
        register_cancel_pending(cancel_case_work)
        register_resume_pending(resume_case_work)
        # A member who leaves (or becomes a viewer) gives their open cases back to the team.
        from accounts.hooks import register_unassign
        from cases.hooks import unassign_cases

        register_unassign(unassign_cases)
        # Erasing a contact (LGPD) blanks their cases and case timelines too; the retention
        # erases the cases' copies of old message text.
        from cases.privacy import erase_contact_cases, retain_case_copies
        from conversation.hooks import register_contact_eraser, register_retention_sweeper

        register_contact_eraser(erase_contact_cases)
        register_retention_sweeper(retain_case_copies)

        # Registers this app's task names for ``dispatch.enqueue`` in web processes too.
        # Workers train the promise detector when they start, not on their first send.
        from cases import (
            signals,  # noqa: F401
            tasks,  # noqa: F401
        )
