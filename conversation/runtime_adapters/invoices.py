"""Demo invoices: one per contact, with the organization's default for everyone else.

``invoice_detail`` is the shape the runtime reads (``conversation.runtime.invoice_resolver``):
a ``"Fatura Resumo"`` summary plus one object per line (msisdn) whose sections are lists
of entries with a ``desc``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import F, Q

from accounts.models import Organization
from accounts.services import audit_log_write
from conversation.models import Contact, DemoInvoice
from conversation.runtime.invoice_resolver import SUMMARY_SECTION

# The invoice of the seeded demo (the same data the runtime's tests use).
DEMO_INVOICE_PATH = Path(__file__).resolve().parent / "demo_invoice.json"
# The country code WhatsApp puts before a Brazilian line ("55" + DDD + number).
COUNTRY_CODE = "55"
_DIGITS = re.compile(r"\D+")


class InvoiceError(ValueError):
    """The document is not an invoice the runtime can read; the message says why (pt-BR)."""


@dataclass(frozen=True)
class ContactInvoice:
    detail: Mapping[str, Any]
    source: str  # "contact" | "default" | "billing"


def phone_digits(phone: str) -> str:
    return _DIGITS.sub("", phone)


def validate_invoice(detail: Any) -> dict[str, Any]:
    """Return ``detail`` as a dict, or raise ``InvoiceError`` naming the first problem."""
    if not isinstance(detail, dict):
        raise InvoiceError("A fatura deve ser um objeto JSON.")
    lines = [key for key in detail if key != SUMMARY_SECTION]
    if not lines:
        raise InvoiceError("A fatura precisa de pelo menos uma linha (chave com o número).")
    for line in lines:
        sections = detail[line]
        if not isinstance(sections, dict):
            raise InvoiceError(f"A linha {line} deve ser um objeto de seções.")
        for section, entries in sections.items():
            if not isinstance(entries, list):
                raise InvoiceError(f"A seção {section!r} da linha {line} deve ser uma lista.")
            for entry in entries:
                if not isinstance(entry, dict) or not str(entry.get("desc") or "").strip():
                    raise InvoiceError(
                        f"Cada item da seção {section!r} da linha {line} precisa de 'desc'."
                    )
    summary = detail.get(SUMMARY_SECTION)
    if summary is not None and not isinstance(summary, dict):
        raise InvoiceError(f"{SUMMARY_SECTION!r} deve ser um objeto.")
    return detail


def read_invoice_file(path: str | Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvoiceError(f"Não consegui ler o arquivo: {exc.strerror}.") from exc
    except ValueError as exc:
        raise InvoiceError(f"O arquivo não é um JSON válido ({exc}).") from exc
    return validate_invoice(data)


def demo_invoice_detail() -> dict[str, Any]:
    return read_invoice_file(DEMO_INVOICE_PATH)


def invoice_lines(detail: Mapping[str, Any]) -> list[str]:
    return [str(k) for k, v in detail.items() if k != SUMMARY_SECTION and isinstance(v, Mapping)]


def primary_msisdn(detail: Mapping[str, Any], phone: str) -> str:
    """The line the customer writes from when it is on the invoice, else the first line
    (the account holder's, by the billing system's convention)."""
    lines = invoice_lines(detail)
    digits = phone_digits(phone)
    national = digits[len(COUNTRY_CODE) :] if digits.startswith(COUNTRY_CODE) else digits
    for line in lines:
        if phone_digits(line) in {digits, national}:
            return line
    return lines[0] if lines else ""


def contact_invoice(*, organization_id: Any, contact_id: Any) -> ContactInvoice | None:
    """The contact's own demo invoice, else the organization's default. One query."""
    row = (
        DemoInvoice.objects.filter(organization_id=organization_id)
        .filter(Q(contact_id=contact_id) | Q(contact__isnull=True))
        .order_by(F("contact_id").asc(nulls_last=True))
        .values_list("detail", "contact_id")
        .first()
    )
    if row is None or not isinstance(row[0], dict):
        return None
    return ContactInvoice(detail=row[0], source="contact" if row[1] else "default")


def demo_invoice_save(
    *,
    organization: Organization,
    phone: str | None,
    detail: Any,
    actor: Any,
) -> DemoInvoice:
    """Create or replace a demo invoice: the contact's (``phone``) or the default (``None``).

    The contact is created when the phone has never written (so an invoice can be loaded
    before the demo conversation starts).
    """
    detail = validate_invoice(detail)
    with transaction.atomic():
        contact = None
        if phone is not None:
            digits = phone_digits(phone)
            if not digits:
                raise InvoiceError("Informe o telefone do contato (só números, com DDI).")
            contact, _ = Contact.objects.get_or_create(organization=organization, phone=digits)
        invoice, created = DemoInvoice.objects.update_or_create(
            organization=organization, contact=contact, defaults={"detail": detail}
        )
        audit_log_write(
            actor=actor,
            action="demo_invoice.create" if created else "demo_invoice.replace",
            resource=invoice,
            diff={
                "contact_id": str(contact.pk) if contact else None,
                "lines": len(invoice_lines(detail)),
            },
        )
    return invoice
