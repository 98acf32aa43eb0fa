"""The staff notice of a budget switch: an e-mail to the organization's managers and admins
(the banner on every page is the other half).

Sent by the task ``analytics.send_budget_notice``, which the switch schedules when it
commits (``services.budget_switch_record``) — never from the turn that crossed the line: a
mail server that is slow or down must not hold the customer's answer (the turn workers run
threads, which Celery's time limits do not bound). The switch row is unique per month, level
and limit, so a switch is noticed once however many turns cross it; an attempt the mail
server refuses is tried again later (``NOTICE_MAX_ATTEMPTS``, backing off).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import get_connection, send_mail
from django.utils.translation import gettext

from accounts import rls
from accounts.models import Membership, Role
from analytics.models import BudgetSwitch, SwitchLevel
from analytics.templatetags.analytics_format import usd

log = logging.getLogger(__name__)
# One attempt waits on the mail server this long at most (it runs in a delivery worker).
NOTICE_TIMEOUT_S = 10
# A server down for a while still gets the notice: attempts 1 min, 2, 3, 4 apart (~10 min).
NOTICE_MAX_ATTEMPTS = 5
NOTICE_BACKOFF_S = 60


@dataclass(frozen=True)
class BudgetNotice:
    subject: str
    body: str
    recipients: tuple[str, ...]


def budget_notice_send(switch_id: str, attempt: int = 1) -> int:
    """Send the notice of the switch ``switch_id`` (attempt number ``attempt``). Returns the
    seconds to wait before the next attempt when this one failed and attempts remain, else
    0 (sent, nobody to tell, a vanished switch, or out of attempts)."""
    organization_id = rls.organization_of(BudgetSwitch, switch_id)
    if organization_id is None:
        return 0
    # The reads in the organization's context; the mail with no transaction open.
    with rls.tenant_context(organization_id):
        notice = budget_notice(uuid.UUID(str(switch_id)))
    if notice is None:
        return 0
    ids = {"switch_id": str(switch_id), "attempt": attempt}
    try:
        send_mail(
            notice.subject,
            notice.body,
            getattr(settings, "DEFAULT_FROM_EMAIL", None),
            list(notice.recipients),
            connection=get_connection(timeout=NOTICE_TIMEOUT_S),
        )
    except Exception:  # any mail failure: tried again, never the caller's failure
        if attempt < NOTICE_MAX_ATTEMPTS:
            log.warning("budget notice not sent: retrying", exc_info=True, extra=ids)
            return NOTICE_BACKOFF_S * attempt
        log.exception("budget notice not sent: giving up", extra=ids)
        return 0
    log.info("budget notice sent", extra=ids)
    return 0


def budget_notice(switch_id: uuid.UUID) -> BudgetNotice | None:
    """The notice of one switch, or None when the switch is gone or nobody is to be told."""
    switch = BudgetSwitch.objects.select_related("organization").filter(pk=switch_id).first()
    if switch is None:
        return None
    organization = switch.organization
    emails = sorted(
        {
            e
            for e in Membership.objects.filter(
                organization_id=organization.pk, role__in=[Role.MANAGER, Role.ADMIN]
            ).values_list("user__email", flat=True)
            if e
        }
    )
    if not emails:
        return None
    year, month = switch.month.split("-")
    body = gettext(
        "Organização: %(organization)s\nMês: %(month)s\nGasto: %(spend)s de %(limit)s\n"
    ) % {
        "organization": organization.name,
        "month": f"{month}/{year}",
        "spend": usd(switch.spend_usd, 2),
        "limit": usd(switch.limit_usd, 2),
    }
    return BudgetNotice(subject=_subject(switch.level), body=body, recipients=tuple(emails))


def _subject(level: str) -> str:
    if level == SwitchLevel.ALERT:
        return gettext("Retaguarda: o gasto com IA passou de %(share)s do limite mensal") % {
            "share": "80%"
        }
    if level == SwitchLevel.STOPPED:
        return gettext("Retaguarda: limite mensal de gasto com IA atingido")
    return gettext("Retaguarda: o gasto com IA está abaixo do limite mensal e o modelo voltou")
