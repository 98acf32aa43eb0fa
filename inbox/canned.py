"""Filling a canned reply's ``{{nome}}``-style variables. Pure: no Django.

Names are case- and space-insensitive (``{{ Nome }}`` works); an unknown variable stays as
typed, so the member sees it in the reply box and fixes it before sending.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

VARIABLE = re.compile(r"\{\{\s*([A-Za-zÀ-ÿ_]+)\s*\}\}")

# The variables the inbox offers, with what each one says (shown on the settings page).
VARIABLES = {
    "nome": "primeiro nome do contato",
    "nome_completo": "nome do contato",
    "telefone": "telefone do contato",
    "atendente": "seu nome",
    "empresa": "nome da organização",
}


def render_canned(body: str, values: Mapping[str, str]) -> str:
    """``body`` with every known variable replaced by its value."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1).lower()
        return values[name] if name in values else match.group(0)

    return VARIABLE.sub(fill, body)


def canned_values(
    *, contact_name: str, contact_phone: str, member_name: str, organization_name: str
) -> dict[str, str]:
    """The variables' values for one conversation; a contact without a name is ``cliente``
    in ``{{nome}}`` rather than an empty gap in the sentence."""
    full = contact_name.strip()
    return {
        "nome": full.split()[0] if full else "cliente",
        "nome_completo": full or "cliente",
        "telefone": contact_phone,
        "atendente": member_name.strip(),
        "empresa": organization_name.strip(),
    }
