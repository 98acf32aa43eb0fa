"""``flush`` as the owner role: the application role may not TRUNCATE (it ignores policies)."""

from __future__ import annotations

from typing import Any

from django.core.management.commands import flush

from accounts.db import owner_mode


class Command(flush.Command):
    def handle(self, *args: Any, **options: Any) -> None:
        with owner_mode():
            super().handle(*args, **options)
