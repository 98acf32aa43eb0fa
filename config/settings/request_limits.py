"""One cap on every request body, decided from ``Content-Length`` before a byte is read.

Django caps what it holds in memory (``DATA_UPLOAD_MAX_MEMORY_SIZE``) but streams a
multipart body's files to temporary files whatever their size — and the CSRF check reads
the form of any POST (a token cookie and a Referer are all it takes) — so an anonymous
client could make any page, the login first, write a 50 MB body to disk, and hold one of
the few web threads while it did. The largest body the product takes is a file a member
sends a customer (``WHATSAPP_MEDIA_MAX_BYTES``) with its form: the cap is that plus 1 MiB,
or ``REQUEST_MAX_BODY_BYTES`` when set. Webhooks keep their own, smaller cap
(``conversation.webhooks``). A body without ``Content-Length`` is never read by Django's
WSGI handler at all. Set the reverse proxy's own limit just above this one (nginx:
``client_max_body_size``; its default of 1 MB would refuse the product's file uploads).
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader

FORM_OVERHEAD_BYTES = 1024 * 1024


def max_body_bytes() -> int:
    explicit = int(getattr(settings, "REQUEST_MAX_BODY_BYTES", 0) or 0)
    if explicit > 0:
        return explicit
    return int(settings.WHATSAPP_MEDIA_MAX_BYTES) + FORM_OVERHEAD_BYTES


def declared_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0  # Django reads such a body as empty


class RequestBodyLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.limit = max_body_bytes()

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if declared_length(request) <= self.limit:
            return self.get_response(request)
        if request.path_info.startswith(("/api/", "/webhooks/")):
            return JsonResponse(
                {
                    "error": {
                        "code": "payload_too_large",
                        "message": "Corpo da requisição grande demais.",
                    }
                },
                status=413,
            )
        # Rendered without the request, like the 500 page: no session, no database.
        page = loader.get_template("413.html").render({"limit_mb": self.limit // (1024 * 1024)})
        return HttpResponse(page, status=413)
