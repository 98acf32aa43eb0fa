"""What every app's API views share (HackSoft's thin APIs): the tenant view base, the
validated input, the ``{"data": ...}`` envelope (the response and its schema), and a
service's refusals mapped to the error envelope of ``accounts.api_errors``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from django.core.exceptions import RequestDataTooBig
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.api_access import RolePermission
from accounts.api_errors import ApiError, Conflict

S = TypeVar("S", bound=serializers.Serializer)
T = TypeVar("T")


# A field the input does not know is refused, not ignored, at every level (the body, a
# router's ``config``, each member and phrase): a typo (``{"active": false}``) must not
# answer 200 having changed nothing, and an ``organization_id`` is never read from a body
# (DESIGN §6) — so sending one is an error, not a silently ignored key. Reported together
# with the known fields' own errors, so one answer lists everything to fix. Every app's API
# inputs use it. A comment, not a docstring: the schema would show it as every input's
# description.
class StrictInput(serializers.Serializer):
    def to_internal_value(self, data: Any) -> Any:
        unknown = sorted(set(data) - set(self.fields)) if isinstance(data, Mapping) else []
        errors = {key: [_("Campo desconhecido.")] for key in unknown}
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if errors and isinstance(exc.detail, dict):
                raise serializers.ValidationError({**errors, **exc.detail}) from exc
            raise
        if errors:
            raise serializers.ValidationError(errors)
        return value


# A view of the caller's organization: a login, and the view's ``read_role`` for safe
# methods, its ``write_role`` otherwise (``RolePermission``). No docstring on purpose: the
# schema shows a view's inherited docstring as every operation's description.
class TenantApi(APIView):
    permission_classes = [IsAuthenticated, RolePermission]


def valid_input(request: Request, serializer: type[S], **context: Any) -> S:
    """The body through its input serializer (``context`` scopes what it looks up); invalid
    input is the 422 ``validation_error`` envelope, a body larger than Django holds in
    memory the 413 ``payload_too_large`` one."""
    try:
        body = request.data
    except RequestDataTooBig as exc:
        # DRF reads a JSON body through ``HttpRequest.body``, which refuses one over
        # ``DATA_UPLOAD_MAX_MEMORY_SIZE``; uncaught, that refusal is Django's HTML 400 page.
        # The same answer as the request cap's (config/settings/request_limits.py).
        raise ApiError(
            _("Corpo da requisição grande demais."),
            code="payload_too_large",
            status_code=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        ) from exc
    data = serializer(data=body, context=context)
    data.is_valid(raise_exception=True)
    return data


def data_response(payload: Any, code: int = status.HTTP_200_OK) -> Response:
    return Response({"data": payload}, status=code)


def envelope(name: str, inner: type[serializers.Serializer]) -> Any:
    """The schema of a success response: ``{"data": <inner>}``."""
    return inline_serializer(name=name, fields={"data": inner()})


class ApiErrorDetail(serializers.Serializer):
    code = serializers.CharField(
        help_text="validation_error, not_found, unauthenticated, forbidden, conflict, ..."
    )
    message = serializers.CharField()
    # The envelope's key is ``fields``; the metaclass moves a declared field off the class,
    # so it does not shadow ``Serializer.fields`` (mypy sees only the class attribute).
    fields = serializers.DictField(  # type: ignore[assignment]
        required=False,
        help_text="validation_error: each bad field's errors (a list's items by index).",
    )


class ApiErrorOutput(serializers.Serializer):
    error = ApiErrorDetail()


def error_response(description: str) -> OpenApiResponse:
    """The schema of an error response: the one envelope of ``accounts.api_errors``."""
    return OpenApiResponse(response=ApiErrorOutput, description=description)


def service_call(
    call: Callable[..., T],
    *,
    conflicts: tuple[type[Exception], ...] = (),
    invalid: tuple[type[Exception], ...] = (),
    **kwargs: Any,
) -> T:
    """``call(**kwargs)``; a refusal in ``conflicts`` is a 409, one in ``invalid`` a 422,
    each with the error's own ``code`` and ``message`` (conflicts are checked first: they
    are often the narrower class)."""
    try:
        return call(**kwargs)
    except conflicts as exc:
        raise Conflict(_message(exc), code=_code(exc)) from exc
    except invalid as exc:
        raise ApiError(_message(exc), code=_code(exc), status_code=422) from exc


def _message(exc: Exception) -> str:
    return str(getattr(exc, "message", exc))


def _code(exc: Exception) -> str | None:
    return getattr(exc, "code", None)
