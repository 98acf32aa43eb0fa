"""Pages: a message's file through our own proxy, a file or a template sent by staff, and a
Meta channel's templates (admin).

The proxy (``message_media``) is the only way a browser gets a customer's file: the
provider's URL and token stay on the server (``conversation.outbox.media``). Files the
browser can show (pictures, audio, video) are served inline; anything else as an attachment
with ``nosniff`` and a sandboxing CSP, so a file never runs as a page of ours.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import messages
from django.http import FileResponse, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.access import access, role_required
from accounts.pages import act_and_tell, form_errors_text
from conversation.channels.media import served_inline
from conversation.models import ChannelSession, Conversation, Message, Provider, SenderKind
from conversation.outbox import media as outbox_media
from conversation.outbox import templates as outbox_templates
from conversation.views._common import PageRequest, _page

log = logging.getLogger(__name__)

_UNAVAILABLE = {
    "no_media": (404, gettext_lazy("Esta mensagem não tem arquivo.")),
    "not_found": (404, gettext_lazy("O provedor não tem mais este arquivo (pode ter expirado).")),
    "too_large": (413, gettext_lazy("O arquivo passa do tamanho máximo permitido.")),
    "auth_failed": (502, gettext_lazy("O provedor recusou as credenciais do canal.")),
    "unreachable": (
        502,
        gettext_lazy("Não foi possível buscar o arquivo no provedor. Tente de novo."),
    ),
}
_TEMPLATE_ERRORS = {
    "unsupported": gettext_lazy("Este provedor não tem modelos de mensagem."),
    "invalid_config": gettext_lazy(
        "Informe o ID da conta do WhatsApp Business e o token do canal."
    ),
    "auth_failed": gettext_lazy("A Meta recusou o token do canal."),
    "rejected": gettext_lazy(
        "A Meta recusou o pedido (confira o ID da conta do WhatsApp Business)."
    ),
    "unreachable": gettext_lazy("Não foi possível falar com a Meta. Tente de novo."),
    "invalid_purpose": gettext_lazy("Finalidade inválida."),
    "unknown_template": gettext_lazy("Modelo não encontrado neste canal: sincronize os modelos."),
    "not_approved": gettext_lazy("Só modelos aprovados pela Meta podem ser usados."),
    "wrong_parameters": gettext_lazy("Preencha todos os parâmetros do modelo."),
}


def _template_call(request: PageRequest, call: Callable[..., Any], **kwargs: Any) -> None:
    """An outbox template call; a ``TemplateError``'s code is worded for the member."""
    act_and_tell(
        request, call, refused=outbox_templates.TemplateError, describe=_template_error, **kwargs
    )


def _template_post(
    request: PageRequest,
    form: _TemplateChoiceForm,
    call: Callable[..., Any],
    *,
    done: Any,
    invalid: str,
    **kwargs: Any,
) -> None:
    """A posted template form: ``call`` with the chosen template and the form's other fields
    (``_template_call``), or ``invalid`` for the member when the form does not validate."""
    if form.is_valid():
        _template_call(request, call, done=done, **form.template_fields(), **kwargs)
    else:
        messages.error(request, invalid)


def _template_error(exc: outbox_templates.TemplateError) -> str:
    return str(_TEMPLATE_ERRORS.get(exc.code, _TEMPLATE_ERRORS["unreachable"]))


def _template_key(value: str) -> tuple[str, str]:
    """``"name|language"`` (the select's value) -> (name, language)."""
    name, _sep, language = value.partition("|")
    if not name.strip() or not language.strip():
        raise forms.ValidationError(gettext_lazy("Escolha um modelo."))
    return name.strip(), language.strip()


# What staff may upload: what WhatsApp accepts as an image or a document, told by the file's
# first bytes (a browser's declared type is a guess: a phone often says octet-stream, and
# anyone can call a page a PDF). A zip or an OLE file is the Office type its name says.
_IMAGES = frozenset({"image/jpeg", "image/png"})
_OFFICE = {
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".doc": "application/msword",
    ".xls": "application/vnd.ms-excel",
}
# Meta refuses larger images (WhatsApp Cloud API, supported media types).
META_IMAGE_MAX_BYTES = 5 * 1024 * 1024


def sniffed_type(upload: Any) -> str:
    """The upload's type from its content (and, for a zip or OLE file, its name), "" when it
    is nothing staff may send."""
    upload.seek(0)
    head = upload.read(1024)
    upload.seek(0)
    suffix = "." + str(upload.name or "").rpartition(".")[2].lower()
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith(b"\x89PNG\r\n"):
        return "image/png"
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    if head.startswith(b"PK\x03\x04") and suffix in (".docx", ".xlsx"):
        return _OFFICE[suffix]
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1") and suffix in (".doc", ".xls"):
        return _OFFICE[suffix]
    declared = str(upload.content_type or "").split(";")[0].strip().lower()
    text = suffix == ".txt" or declared == "text/plain"
    if text and b"\x00" not in head and not head.lstrip().startswith(b"<"):
        return "text/plain"
    return ""


class MediaSendForm(forms.Form):
    kind = forms.ChoiceField(
        choices=[("image", gettext_lazy("Imagem")), ("document", gettext_lazy("Documento"))]
    )
    url = forms.URLField(max_length=1000, assume_scheme="https", required=False)
    file = forms.FileField(required=False)
    caption = forms.CharField(max_length=1024, required=False)
    filename = forms.CharField(max_length=200, required=False)

    def __init__(self, *args: Any, provider: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.provider = provider

    def clean_url(self) -> str:
        url = str(self.cleaned_data.get("url") or "")
        if url and not url.startswith("https://"):
            raise forms.ValidationError(gettext_lazy("O link precisa começar com https://."))
        return url

    def clean_file(self) -> Any:
        upload = self.cleaned_data.get("file")
        if upload is None:
            return None
        if upload.size > outbox_media.max_bytes():
            raise forms.ValidationError(gettext_lazy("O arquivo passa do tamanho máximo."))
        self.cleaned_data["mime_type"] = sniffed_type(upload)
        if not self.cleaned_data["mime_type"]:
            raise forms.ValidationError(
                gettext_lazy(
                    "Tipo de arquivo não aceito: envie JPEG, PNG, PDF, TXT, Word ou Excel."
                )
            )
        return upload

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        upload, mime = data.get("file"), data.get("mime_type", "")
        if not self.errors and not data.get("url") and upload is None:
            raise forms.ValidationError(gettext_lazy("Envie um arquivo ou informe o link."))
        if upload is not None and data.get("kind") == "image":
            if mime not in _IMAGES:
                self.add_error(
                    "file",
                    gettext_lazy(
                        "Para ir como imagem, o arquivo precisa ser JPEG ou PNG; envie os "
                        "outros como documento."
                    ),
                )
            elif self.provider == Provider.META and upload.size > META_IMAGE_MAX_BYTES:
                self.add_error(
                    "file",
                    gettext_lazy("A Meta aceita imagens de até 5 MB; envie-a como documento."),
                )
        return data


class _TemplateChoiceForm(forms.Form):
    """A form naming one of the channel's templates (the select's ``"name|language"``)."""

    template = forms.CharField(max_length=140)

    def clean_template(self) -> tuple[str, str]:
        return _template_key(self.cleaned_data["template"])

    def template_fields(self) -> dict[str, Any]:
        """The outbox call's arguments: the template's name and language, the other fields."""
        data = dict(self.cleaned_data)
        name, language = data.pop("template")
        return {"name": name, "language": language, **data}


class TemplateSendForm(_TemplateChoiceForm):
    parameters = forms.CharField(required=False, widget=forms.Textarea)

    def clean_parameters(self) -> list[str]:
        # One parameter per line, in the template's order.
        text = str(self.cleaned_data.get("parameters") or "")
        return [line.strip() for line in text.splitlines() if line.strip()]


class TemplatePurposeForm(_TemplateChoiceForm):
    PURPOSE_LABELS = (
        ("", gettext_lazy("— nenhuma —")),
        ("follow_up", gettext_lazy("Acompanhamento de caso (fora da janela de 24 h)")),
        ("case_notice", gettext_lazy("Aviso de caso para a equipe")),
        ("reengage", gettext_lazy("Retomar conversa")),
    )
    purpose = forms.ChoiceField(choices=PURPOSE_LABELS, required=False)


@role_required("viewer")
@require_GET
def message_media(request: PageRequest, message_id: uuid.UUID) -> HttpResponse:
    message = access(Message.objects.select_related("channel"), request.membership, pk=message_id)
    try:
        stored = outbox_media.message_media_fetch(message=message)
    except outbox_media.MediaUnavailable as exc:
        status, text = _UNAVAILABLE.get(exc.code, _UNAVAILABLE["unreachable"])
        if exc.code == "no_media":
            # A link to a message with no file (a text, an outbound link): back to its page.
            messages.info(request, str(text))
            url = reverse("conversation:conversation_detail", args=[message.conversation_id])
            return redirect(f"{url}#msg-{message.pk}")
        return HttpResponse(str(text), status=status, content_type="text/plain; charset=utf-8")
    try:
        handle = message.media_file.open("rb")
    except OSError:
        # The row names a file this server's storage does not have (another host's local
        # MEDIA_ROOT, a restored database, a bucket rule): say so, not a server error.
        log.warning("stored media missing", extra={"message_id": str(message.pk)})
        gone = _("O arquivo não está mais guardado neste servidor.")
        return HttpResponse(gone, status=404, content_type="text/plain; charset=utf-8")
    inline = served_inline(stored.mime_type)
    response = FileResponse(
        handle,
        content_type=stored.mime_type if inline else "application/octet-stream",
        as_attachment=not inline,
        filename=stored.filename,
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    # Not kept by the browser: an erased contact's file must not outlive the erasure there.
    response["Cache-Control"] = "private, no-store"
    return response  # type: ignore[return-value]  # a streaming response; role_required wants HttpResponse


@role_required("agent")
@require_POST
def conversation_send_media(request: PageRequest, conversation_id: uuid.UUID) -> HttpResponse:
    conversation = _conversation(request, conversation_id)
    form = MediaSendForm(request.POST, request.FILES, provider=conversation.channel.provider)
    if form.is_valid():
        data = form.cleaned_data
        outbox_media.outbound_media_enqueue(
            conversation=conversation,
            kind=data["kind"],
            url=data["url"],
            upload=data["file"],
            caption=data["caption"],
            filename=data["filename"],
            mime_type=data.get("mime_type", ""),
            sender_kind=SenderKind.HUMAN,
            actor=request.user,
        )
        messages.success(request, _("Arquivo na fila de envio."))
    else:
        messages.error(request, form_errors_text(form) or _("Arquivo inválido."))
    return redirect("conversation:conversation_detail", conversation_id=conversation.pk)


@role_required("agent")
@require_POST
def conversation_send_template(request: PageRequest, conversation_id: uuid.UUID) -> HttpResponse:
    conversation = _conversation(request, conversation_id)
    _template_post(
        request,
        TemplateSendForm(request.POST),
        outbox_templates.template_message_send,
        done=_("Modelo na fila de envio."),
        invalid=_("Escolha um modelo."),
        conversation=conversation,
    )
    return redirect("conversation:conversation_detail", conversation_id=conversation.pk)


@role_required("admin")
@require_http_methods(["GET", "POST"])
def channel_templates(request: PageRequest, channel_id: uuid.UUID) -> HttpResponse:
    channel = access(ChannelSession.objects.all(), request.membership, pk=channel_id)
    if request.method == "POST":
        _template_post(
            request,
            TemplatePurposeForm(request.POST),
            outbox_templates.channel_template_purpose_set,
            done=_("Finalidade do modelo salva."),
            invalid=_("Escolha um modelo e uma finalidade válidos."),
            channel=channel,
        )
        return redirect("conversation:channel_templates", channel_id=channel.pk)
    context = {
        "channel": channel,
        "templates": outbox_templates.templates_of(channel),
        "purposes": TemplatePurposeForm.PURPOSE_LABELS,
        "is_meta": channel.provider == Provider.META,
    }
    return _page(request, "conversation/channels_templates.html", context)


@role_required("admin")
@require_POST
def channel_templates_sync(request: PageRequest, channel_id: uuid.UUID) -> HttpResponse:
    channel = access(ChannelSession.objects.all(), request.membership, pk=channel_id)
    _template_call(request, outbox_templates.channel_templates_sync, done=_synced, channel=channel)
    return redirect("conversation:channel_templates", channel_id=channel.pk)


def _synced(result: outbox_templates.TemplateSync) -> str:
    return _("Modelos sincronizados: %(total)d (%(added)d novos, %(removed)d removidos).") % {
        "total": result.total,
        "added": result.added,
        "removed": result.removed,
    }


def _conversation(request: PageRequest, conversation_id: uuid.UUID) -> Conversation:
    return access(
        Conversation.objects.select_related("channel", "contact"),
        request.membership,
        pk=conversation_id,
    )
