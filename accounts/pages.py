"""What every app's page views share: the typed request, a service call whose outcome the
member reads on the next page, and the form a reader sees.

Request plumbing like ``accounts.access`` (layer 2): it knows memberships, no app's rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.forms import BaseForm
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

from accounts.models import Membership


class PageRequest(HttpRequest):
    """What the middleware stack guarantees on a page behind ``role_required``."""

    membership: Membership
    htmx: HtmxDetails


def act_and_tell(
    request: HttpRequest,
    call: Callable[..., Any],
    *,
    done: Any,
    refused: type[Exception] | tuple[type[Exception], ...],
    describe: Callable[[Any], str] = str,
    **kwargs: Any,
) -> bool:
    """``call(actor=request.user, **kwargs)`` for a POST that redirects next: the member
    reads ``done`` there (a text, or a function of the call's result), or, when the service
    refuses, its error's pt-BR text (``describe(exc)``). True when the call went through."""
    try:
        result = call(actor=request.user, **kwargs)
    except refused as exc:
        messages.error(request, describe(exc))
        return False
    messages.success(request, done(result) if callable(done) else done)
    return True


def form_errors_text(form: BaseForm) -> str:
    """Every error of an invalid form on one line, for a message on the next page."""
    return " ".join(str(e) for errors in form.errors.values() for e in errors)


def editable(membership: Membership, role: str, *forms: BaseForm) -> bool:
    """Whether the member holds ``role`` to change what ``forms`` show; below it they are
    shown read-only (``read_only``)."""
    can_edit = membership.has_role(role)
    if not can_edit:
        read_only(*forms)
    return can_edit


def read_only(*forms: BaseForm) -> None:
    """A member below the editing role sees the settings filled in, every field disabled
    (the POST is refused by its role anyway)."""
    for form in forms:
        for field in form.fields.values():
            field.disabled = True
