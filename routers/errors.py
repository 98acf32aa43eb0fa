"""The routers app's error hierarchy: services raise these, pages turn them into form
errors and the API into its envelope (409/422)."""

from __future__ import annotations

from django.utils.translation import gettext as _


class RouterError(Exception):
    code = "router_error"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class RouterAlreadyExists(RouterError):
    """The channel already has an active router (one per channel)."""

    code = "router_already_exists"


class RouterInvalid(RouterError):
    """The input breaks an invariant a form or serializer should have caught."""

    code = "validation_error"


class SuggestionDecided(RouterError):
    """The suggestion was accepted or rejected already (a double click, or two admins)."""

    code = "suggestion_already_decided"


class RouterChanged(RouterError):
    """Someone saved the router after the page being saved was loaded."""

    code = "router_changed"


def unknown_intent(intent: str) -> RouterInvalid:
    return RouterInvalid(
        _("A intenção «%(intent)s» não existe neste roteador.") % {"intent": intent}
    )
