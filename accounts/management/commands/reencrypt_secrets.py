"""Re-encrypt every stored secret with the first key of ``FIELD_ENCRYPTION_KEYS``.

Step 2 of a key rotation (accounts.encryption): the new key first in the list, the old
ones after it, then this command, then drop the old keys. Safe to run again: each run
reads every secret with any key and writes it back under the first. Rows written before
encryption existed are encrypted too. Works with the walls up, one organization at a time.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand
from django.db import transaction

from accounts import rls
from accounts.encryption import encrypted_fields
from accounts.services import audit_log_write


class Command(BaseCommand):
    help = "Recriptografa os segredos guardados com a primeira chave de FIELD_ENCRYPTION_KEYS."

    def handle(self, *args: Any, **options: Any) -> None:
        targets = [(m, encrypted_fields(m)) for m in apps.get_models() if encrypted_fields(m)]
        total = 0
        for organization_id in rls.organization_ids():
            with rls.tenant_context(organization_id), transaction.atomic():
                count = 0
                for model, fields in targets:
                    rows = model._base_manager.filter(organization_id=organization_id)
                    for row in rows.only("pk", *fields).iterator():
                        # Read: decrypted with any key. Save: encrypted under the first.
                        row.save(update_fields=fields)
                        count += 1
                if count:
                    audit_log_write(
                        organization=organization_id,
                        actor=None,
                        actor_kind="system",
                        action="secrets.reencrypt",
                        resource=None,
                        diff={"rows": count},
                    )
                total += count
        self.stdout.write(self.style.SUCCESS(f"{total} registro(s) recriptografado(s)."))
