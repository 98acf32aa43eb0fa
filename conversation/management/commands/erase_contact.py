"""LGPD: erase a customer's personal data (``conversation.privacy.contact_erase``).

manage.py erase_contact 5511987654321 --org demo          # asks for confirmation
manage.py erase_contact 5511987654321 --org demo --yes    # scripts

The organization by slug (or id). Works with the walls up: it enters that organization's
context only. Messages, turns and conversations stay (counts stay right); their text,
media, the name and the phone go; one audit row records the counts.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts import rls
from accounts.models import Organization
from conversation.models import Contact
from conversation.privacy import contact_erase


def _organization(ref: str) -> Organization | None:
    for organization_id in rls.organization_ids():
        with rls.tenant_context(organization_id):
            found = Organization.objects.filter(pk=organization_id).first()
        if found is not None and (found.slug == ref or str(found.pk) == ref):
            return found
    return None


class Command(BaseCommand):
    help = "Apaga os dados pessoais de um contato (LGPD): textos, mídias, nome e telefone."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("phone", help="telefone do contato como está guardado (ex.: 5511...)")
        parser.add_argument("--org", required=True, help="slug (ou id) da organização")
        parser.add_argument("--yes", action="store_true", help="não pedir confirmação")

    def handle(self, *args: Any, **options: Any) -> None:
        organization = _organization(options["org"])
        if organization is None:
            raise CommandError(f"Organização não encontrada: {options['org']}")
        phone = "".join(ch for ch in options["phone"] if ch.isdigit()) or options["phone"]
        with rls.tenant_context(organization.pk):
            contact = Contact.objects.filter(organization=organization, phone=phone).first()
            if contact is None:
                raise CommandError("Nenhum contato com esse telefone nesta organização.")
            messages = contact.conversations.values_list("messages", flat=True).count()
            if not options["yes"]:
                answer = input(
                    f"Apagar os dados do contato {contact.pk} ({messages} mensagem(ns))? "
                    "Não há como desfazer. Digite 'sim': "
                )
                if answer.strip().lower() != "sim":
                    raise CommandError("Nada foi apagado.")
            result = contact_erase(contact=contact, actor=None)
        self.stdout.write(
            self.style.SUCCESS(
                f"Contato {contact.pk} apagado: {result.messages} mensagem(ns), "
                f"{result.media_files} arquivo(s) de mídia, {result.conversations} conversa(s)."
            )
        )
