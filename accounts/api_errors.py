"""One error envelope for the API: ``{"error": {"code", "message"}}`` with the right status."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import page_not_found, server_error
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


class ApiError(Exception):
    status_code: int = status.HTTP_400_BAD_REQUEST
    code = "bad_request"

    def __init__(self, message: str, *, code: str | None = None, status_code: int | None = None):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        if status_code:
            self.status_code = status_code


class Conflict(ApiError):
    status_code: int = status.HTTP_409_CONFLICT
    code = "conflict"


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApiError):
        return Response(error_body(exc.code, exc.message), status=exc.status_code)
    if isinstance(exc, exceptions.ValidationError):
        return Response(
            error_body("validation_error", "Dados inválidos.", fields=exc.detail),
            status=status.HTTP_422_UNPROCESSABLE_ENTITY,
        )
    if isinstance(exc, Http404 | exceptions.NotFound):
        return Response(error_body("not_found", "Não encontrado."), status=404)
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        return Response(error_body("unauthenticated", "Faça login."), status=401)
    if isinstance(exc, PermissionDenied | exceptions.PermissionDenied):
        return Response(error_body("forbidden", "Sem permissão."), status=403)
    response = drf_exception_handler(exc, context)
    if response is not None:
        detail = response.data.get("detail", "") if isinstance(response.data, dict) else ""
        code = getattr(exc, "default_code", "error")
        response.data = error_body(str(code), str(detail) or "Erro.")
    return response


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler404``: a path no URL matches (``/api/v1/ai/cases/123``, a trailing slash)
    answers the API's envelope under ``/api/``, so a client parsing ``error.code`` never
    gets an HTML page; Django's page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("not_found", "Não encontrado."), status=404)
    return page_not_found(request, exception or Http404())


def server_failure(request: HttpRequest) -> HttpResponse:
    """``handler500``: an unhandled error under ``/api/`` answers the API's envelope (a client
    parsing ``error.code`` never gets an HTML page, and nothing of the error is told);
    Django's page elsewhere. The error itself is logged by Django's request logger."""
    if request.path.startswith("/api/"):
        return JsonResponse(
            error_body("server_error", "Erro interno. Tente de novo em instantes."), status=500
        )
    return server_error(request)
