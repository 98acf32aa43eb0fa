"""What every page module shares: the typed request and the render helpers."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string

from accounts.pages import PageRequest as PageRequest  # the pages' typed request, re-exported
from conversation import selectors

PAGE_SIZE = 25


def _page(request: PageRequest, template: str, context: dict[str, Any]) -> HttpResponse:
    # The nav's handoff badge; one COUNT query per full page.
    context.setdefault("open_handoff_count", selectors.open_handoff_count(request.membership))
    return render(request, template, context)


def _fragments(request: PageRequest, *parts: tuple[str, dict[str, Any]]) -> HttpResponse:
    """Several partials in one htmx response (the first is the target, the rest swap OOB)."""
    return HttpResponse("".join(render_to_string(t, c, request) for t, c in parts))
