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


def read_only(*forms: BaseForm) -> None:
    """A member below the editing role sees the settings filled in, every field disabled
    (the POST is refused by its role anyway)."""
    for form in forms:
        for field in form.fields.values():
            field.disabled = True
