"""E-mails of the team pages, sent through Django's configured backend (console by
default: ``EMAIL_BACKEND`` in settings) once the transaction that made them commits."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import urlencode

from accounts.models import Invitation
from accounts.selectors import invitation_link_code

log = logging.getLogger(__name__)


def invitation_link(request: HttpRequest, invitation: Invitation, secret: str) -> str:
    query = urlencode({"c": invitation_link_code(invitation, secret)})
    return request.build_absolute_uri(f"{reverse('accounts:invitation_accept')}?{query}")


def send_invitation_on_commit(
    request: HttpRequest, *, invitation: Invitation, secret: str, inviter_name: str
) -> None:
    context = {
        "link": invitation_link(request, invitation, secret),
        "organization": invitation.organization.name,
        "inviter": inviter_name,
        "role": invitation.get_role_display(),
        "expires_at": invitation.expires_at,
    }
    subject = render_to_string("accounts/email/invitation_subject.txt", context).strip()
    body = render_to_string("accounts/email/invitation.txt", context)
    recipient = invitation.email

    def send() -> None:
        send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [recipient])
        log.info("invitation sent", extra={"invitation_id": str(invitation.pk)})

    transaction.on_commit(send)
