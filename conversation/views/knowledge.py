"""Pages: knowledge base."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
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

STALE_EDIT = gettext_lazy(
    "Este documento foi alterado por outra pessoa enquanto você editava. Seu texto está "
    "abaixo; confira a versão atual e salve de novo para substituí-la."
)


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
    status = 200
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            if document is not None and _changed_since_opened(request, document):
                form.add_error(None, STALE_EDIT)
                status = 409
            else:
                services.knowledge_document_save(
                    organization=request.membership.organization,
                    actor=request.user,
                    document=document,
                    **form.cleaned_data,
                )
        if status == 200:
            saved = _("Documento salvo.") if document is not None else _("Documento criado.")
            messages.success(request, saved)
            return redirect("conversation:knowledge")
    can_edit = editable(request.membership, "manager", form)
    context = {
        "form": form,
        "document": document,
        "can_edit": can_edit,
        "stale": status == 409,
        "version": _version(document) if document is not None else "",
    }
    response = _page(request, "conversation/knowledge_form.html", context)
    response.status_code = status
    return response


def _version(document: KnowledgeDocument) -> str:
    # The edit form carries the last-saved time it was opened on (a hidden "version").
    return document.updated_at.isoformat()


def _changed_since_opened(request: PageRequest, document: KnowledgeDocument) -> bool:
    """Whether someone saved ``document`` after this form was opened: two managers editing
    one document must not silently overwrite each other. Locks the row until the save
    commits; refreshes ``document`` so a refused form shows (and carries) the current
    version. A POST without a version (not from the page) is not guarded."""
    current = (
        KnowledgeDocument.objects.select_for_update()
        .filter(pk=document.pk)
        .values_list("updated_at", flat=True)
        .first()
    )
    if current is None:
        raise Http404  # deleted meanwhile
    seen = request.POST.get("version")
    if seen is None or seen == current.isoformat():
        return False
    document.refresh_from_db()
    return True


@role_required("manager")
@require_POST
def knowledge_delete(request: PageRequest, document_id: uuid.UUID) -> HttpResponse:
    document = access(KnowledgeDocument.objects.all(), request.membership, pk=document_id)
    services.knowledge_document_delete(document=document, actor=request.user)
    messages.success(request, _("Documento excluído."))
    return redirect("conversation:knowledge")
