"""``migrate`` as the owner role, then the application role's grants (``accounts.db``)."""

from __future__ import annotations

from typing import Any

from django.core.management.commands import migrate
from django.db import connections

from accounts.db import grant_application_role, owner_mode


class Command(migrate.Command):
    def handle(self, *args: Any, **options: Any) -> None:
        with owner_mode():
            super().handle(*args, **options)
            grant_application_role(connections[options["database"]])
