"""Pages: knowledge base."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.access import access, role_required
from accounts.pages import editable
from conversation import selectors, services
from conversation.forms import (
    KnowledgeDocumentForm,
)
from conversation.models import (
    KnowledgeDocument,
)
from conversation.views._common import PageRequest, _page


@role_required("viewer")
@require_GET
def knowledge(request: PageRequest) -> HttpResponse:
    context = {
        "documents": selectors.knowledge_list(request.membership),
        "can_edit": request.membership.has_role("manager"),
    }
    return _page(request, "conversation/knowledge.html", context)


@role_required("manager")
@require_http_methods(["GET", "POST"])
def knowledge_create(request: PageRequest) -> HttpResponse:
    return _document_form(request, None)


@role_required("viewer")
@require_http_methods(["GET", "POST"])
def knowledge_edit(request: PageRequest, document_id: uuid.UUID) -> HttpResponse:
    document = access(
        KnowledgeDocument.objects.all(),
        request.membership,
        for_write_role="manager" if request.method == "POST" else None,
        pk=document_id,
    )
    return _document_form(request, document)


def _document_form(request: PageRequest, document: KnowledgeDocument | None) -> HttpResponse:
    """The document form, new (``document`` None) or saved; readers see it disabled."""
    initial = (
        {"title": document.title, "body": document.body, "is_active": document.is_active}
        if document is not None
        else None
    )
    form = KnowledgeDocumentForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        services.knowledge_document_save(
            organization=request.membership.organization,
            actor=request.user,
            document=document,
            **form.cleaned_data,
        )
        saved = _("Documento salvo.") if document is not None else _("Documento criado.")
        messages.success(request, saved)
        return redirect("conversation:knowledge")
    can_edit = editable(request.membership, "manager", form)
    context = {"form": form, "document": document, "can_edit": can_edit}
    return _page(request, "conversation/knowledge_form.html", context)


@role_required("manager")
@require_POST
def knowledge_delete(request: PageRequest, document_id: uuid.UUID) -> HttpResponse:
    document = access(KnowledgeDocument.objects.all(), request.membership, pk=document_id)
    services.knowledge_document_delete(document=document, actor=request.user)
    messages.success(request, _("Documento excluído."))
    return redirect("conversation:knowledge")
