"""Organizations' time zones: the zones an admin picks from, their validation, and this
process's memory of each organization's zone.

A member's request runs in its organization's zone (``MembershipMiddleware``) and so does
work done for it outside a request (``accounts.rls.tenant_context``): pages show local
times, and analytics days and budget months roll over at the organization's midnight.

``tenant_context`` is entered many times per task (webhooks, the outbox, sweeps), so the
zone must cost it no query: every ``Organization`` loaded or saved in this process tells
``remember`` its zone, and only an organization this process has not seen for
``MEMORY_S`` seconds is read again (one query). Another process learns of a change within
``MEMORY_S`` seconds, or at once when it loads the row (a save rolled back after it was
remembered is forgotten the same way). A test that changes the column behind the ORM's back
calls ``forget_time_zones``.
"""

from __future__ import annotations

import time
import uuid
import zoneinfo
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

DEFAULT_TIME_ZONE = "America/Sao_Paulo"
MEMORY_S = 300.0

# Brazil's four zones (each with the state capitals that keep it), then a few abroad.
TIME_ZONE_CHOICES: list[tuple[str, Any]] = [
    ("America/Noronha", _("Fernando de Noronha (UTC−2)")),
    ("America/Sao_Paulo", _("Brasília, São Paulo, Rio de Janeiro e Sul (UTC−3)")),
    ("America/Bahia", _("Salvador (UTC−3)")),
    ("America/Fortaleza", _("Fortaleza (UTC−3)")),
    ("America/Recife", _("Recife (UTC−3)")),
    ("America/Belem", _("Belém (UTC−3)")),
    ("America/Manaus", _("Manaus (UTC−4)")),
    ("America/Cuiaba", _("Cuiabá (UTC−4)")),
    ("America/Campo_Grande", _("Campo Grande (UTC−4)")),
    ("America/Porto_Velho", _("Porto Velho (UTC−4)")),
    ("America/Boa_Vista", _("Boa Vista (UTC−4)")),
    ("America/Rio_Branco", _("Rio Branco, Acre (UTC−5)")),
    ("America/Argentina/Buenos_Aires", _("Buenos Aires (UTC−3)")),
    ("America/Montevideo", _("Montevidéu (UTC−3)")),
    ("America/Asuncion", _("Assunção (UTC−3)")),
    ("America/Santiago", _("Santiago (UTC−4/−3)")),
    ("America/Bogota", _("Bogotá (UTC−5)")),
    ("America/Lima", _("Lima (UTC−5)")),
    ("America/Mexico_City", _("Cidade do México (UTC−6)")),
    ("America/New_York", _("Nova York (UTC−5/−4)")),
    ("Europe/Lisbon", _("Lisboa (UTC+0/+1)")),
    ("UTC", _("UTC")),
]
TIME_ZONE_NAMES = frozenset(name for name, _label in TIME_ZONE_CHOICES)
INVALID_TIME_ZONE = _("Escolha um fuso horário da lista.")


def validate_time_zone(value: str) -> None:
    """Only a zone of the list, and one the system's zone database knows."""
    if value not in TIME_ZONE_NAMES or not _known(value):
        raise ValidationError(INVALID_TIME_ZONE, code="invalid_time_zone")


def _known(name: str) -> bool:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def zone(name: str) -> zoneinfo.ZoneInfo:
    """The zone named ``name``; the product's default for a name no longer known (a row
    edited by hand must not stop every task of its organization)."""
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return zoneinfo.ZoneInfo(settings.TIME_ZONE)


# --- this process's memory ----------------------------------------------------------------

# organization id -> (zone name, monotonic time it was learnt)
_remembered: dict[uuid.UUID, tuple[str, float]] = {}


def remember(organization_id: Any, name: str) -> None:
    """What a loaded or saved ``Organization`` row says its zone is."""
    if organization_id is not None:
        _remembered[_as_uuid(organization_id)] = (name, time.monotonic())


def remembered(organization_id: uuid.UUID) -> str | None:
    """The zone this process learnt for the organization in the last ``MEMORY_S`` seconds."""
    found = _remembered.get(organization_id)
    if found is None or time.monotonic() - found[1] > MEMORY_S:
        return None
    return found[0]


def forget_time_zones() -> None:
    """Forget every organization's zone (tests that change a row behind the ORM's back)."""
    _remembered.clear()


def _as_uuid(value: Any) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
