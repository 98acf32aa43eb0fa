"""Load a demo invoice for a contact (or the organization's default) from a JSON file.

manage.py load_invoices 5511987654321 fatura.json --org demo
manage.py load_invoices default fatura.json --org demo   # any phone without its own
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts import rls
from accounts.models import Organization
from conversation.runtime_adapters.invoices import (
    InvoiceError,
    demo_invoice_save,
    invoice_lines,
    read_invoice_file,
)

DEFAULT_KEYWORDS = frozenset({"default", "padrao", "padrão"})


class Command(BaseCommand):
    help = "Carrega a fatura de demonstração de um contato (ou a padrão da organização)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("phone", help="telefone do contato (com DDI) ou 'default'")
        parser.add_argument("file", help="arquivo JSON com a fatura (invoice_detail)")
        parser.add_argument("--org", default="demo", help="slug da organização (padrão: demo)")

    @rls.with_bypass("load_invoices")  # an operator's command, like seed_demo
    def handle(self, *args: Any, **options: Any) -> None:
        organization = Organization.objects.filter(slug=options["org"]).first()
        if organization is None:
            raise CommandError(f"Organização não encontrada: {options['org']}")
        phone = None if options["phone"].strip().lower() in DEFAULT_KEYWORDS else options["phone"]
        try:
            detail = read_invoice_file(options["file"])
            invoice = demo_invoice_save(
                organization=organization, phone=phone, detail=detail, actor=None
            )
        except InvoiceError as exc:
            raise CommandError(str(exc)) from exc
        who = f"o contato {invoice.contact.phone}" if invoice.contact else "a organização (padrão)"
        lines = len(invoice_lines(invoice.detail))
        self.stdout.write(self.style.SUCCESS(f"Fatura carregada para {who}: {lines} linha(s)."))
