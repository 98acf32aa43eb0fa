"""The staff numbers (human-cases §9, "responder pelo WhatsApp"): a member's own WhatsApp
number, from which that member answers cases. Set and removed by an admin; audited."""

from __future__ import annotations

import re
import uuid
from typing import Any

from django.db import IntegrityError, transaction

from accounts.models import Membership, Organization
from accounts.services import audit_log_write
from cases.models import StaffNumber
from cases.phones import phone_variants
from cases.selectors import STAFF_PHONES_SETTING

from .state_machine import InvalidCaseInput

PHONE = re.compile(r"^[0-9]{8,15}$")
TAKEN = "Este número já é de outro membro da equipe."


def staff_number_set(*, membership: Membership, actor: Any, phone: str) -> StaffNumber | None:
    """Register ``phone`` (digits, with country and area code) as the member's staff number;
    an empty ``phone`` removes it. A number is one member's per organization."""
    phone = re.sub(r"[\s()+\-]", "", phone or "")
    if phone and not PHONE.match(phone):
        raise InvalidCaseInput("Use de 8 a 15 dígitos, com DDI e DDD.")
    with transaction.atomic():
        # The organization's lock first (``_copy_to_organization`` takes it anyway): two admins
        # registering the two forms of one number for two members cannot both pass the check.
        Organization.objects.select_for_update().only("pk").get(pk=membership.organization_id)
        current = StaffNumber.objects.filter(membership=membership).first()
        before = current.phone if current else ""
        row: StaffNumber | None = current
        if (
            phone
            # The number in either form WhatsApp may give it (a Brazilian mobile with or
            # without its 9): a message from it must name one member only.
            and StaffNumber.objects.filter(
                organization_id=membership.organization_id,
                phone__in=sorted(phone_variants(phone)),
            )
            .exclude(membership=membership)
            .exists()
        ):
            raise InvalidCaseInput(TAKEN)
        if not phone:
            if current is not None:
                current.delete()
            row = None
        elif current is None:
            try:
                with transaction.atomic():
                    row = StaffNumber.objects.create(
                        organization_id=membership.organization_id,
                        membership=membership,
                        phone=phone,
                    )
            except IntegrityError as exc:
                raise InvalidCaseInput(TAKEN) from exc
        elif current.phone != phone:
            current.phone = phone
            current.save(update_fields=["phone"])
        audit_log_write(
            actor=actor,
            action="case_staff_number.set" if phone else "case_staff_number.remove",
            resource=membership,
            # The number itself is personal data: the log says that it changed, not to what.
            diff={"had_number": bool(before), "has_number": bool(phone)},
        )
        _copy_to_organization(membership.organization_id)
    return row


def _copy_to_organization(organization_id: uuid.UUID) -> None:
    """Refresh the organization's copy of its staff numbers (``selectors.staff_phones``).
    Locks the organization row so two admins saving at once both land."""
    org = Organization.objects.select_for_update().get(pk=organization_id)
    phones = sorted(
        StaffNumber.objects.filter(organization_id=organization_id).values_list("phone", flat=True)
    )
    settings_ = dict(org.settings or {})
    if phones:
        settings_[STAFF_PHONES_SETTING] = phones
    else:
        settings_.pop(STAFF_PHONES_SETTING, None)
    org.settings = settings_
    org.save(update_fields=["settings"])
