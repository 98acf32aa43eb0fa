"""The routers app's error hierarchy: services raise these, pages turn them into form
errors and the API into its envelope (409/422)."""

from __future__ import annotations


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
