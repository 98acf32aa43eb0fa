"""Print a new Fernet key for ``FIELD_ENCRYPTION_KEYS`` (accounts.encryption)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from accounts.encryption import generate_key


class Command(BaseCommand):
    help = "Gera uma chave nova para FIELD_ENCRYPTION_KEYS (coloque-a em primeiro na lista)."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(generate_key())
