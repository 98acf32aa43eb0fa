"""Router pages: list, create/edit with intents and the classification test, decisions
telemetry with its chart, and the quality loop.

Roles (intent-router Task 7; DESIGN §6, §10.5): managers see routers, test classification
and measure the labelled phrases; admins configure routers and write the labelled
phrases, since those train the router's local stage. Thin views: parse, authorize
(``role_required`` + ``access``), call one service, render. htmx POSTs answer with the
re-rendered fragment. The suggested phrases' buttons live in ``routers.views.suggestions``.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.access import access, role_required
from accounts.pages import PageRequest, editable, form_errors_text
from routers import selectors, services
from routers.charts import stacked_bars
from routers.errors import RouterError
from routers.forms import (
    LabelledPasteForm,
    LabelledPhraseForm,
    MemberFormSet,
    RouterForm,
    RouterTestForm,
    intent_choices,
    member_initial,
    organization_agents,
)
from routers.models import LabelledPhrase, QualityRun, Router
from routers.quality import parse_labelled_lines

FORMSET_PREFIX = "members"


def _router(request: PageRequest, router_id: uuid.UUID, *, write_role: str | None = None) -> Router:
    return access(
        Router.objects.select_related("channel", "fallback_agent"),
        request.membership,
        for_write_role=write_role,
        pk=router_id,
    )


# --- list ---------------------------------------------------------------------------------


@role_required("manager")
@require_GET
def routers(request: PageRequest) -> HttpResponse:
    context = {
        "routers": selectors.router_list(request.membership),
        "can_edit": request.membership.has_role("admin"),
    }
    return render(request, "routers/routers.html", context)


# --- create and edit ----------------------------------------------------------------------


def _formset(request: PageRequest, initial: list[dict[str, Any]] | None, *, bound: bool) -> Any:
    return MemberFormSet(
        request.POST if bound else None,
        initial=initial,
        prefix=FORMSET_PREFIX,
        form_kwargs={"agents": organization_agents(request.membership.organization)},
    )


def _forms(
    request: PageRequest, router: Router | None, *, bound: bool
) -> tuple[RouterForm, Any, list[Any]]:
    """The router form and its intents formset (``bound`` to the POST), and the saved
    intents. The form carries the version of what it shows (``selectors.router_version``)."""
    members = selectors.router_members(router) if router is not None else []
    initial = RouterForm.initial_from(router)
    if router is not None:
        initial["version"] = selectors.router_version(router, members)
    data = request.POST if bound else None
    form = RouterForm(data, organization=request.membership.organization, initial=initial)
    # A new router's page starts with one empty intent row; a saved one's, with its own.
    rows = member_initial(members) if router is not None else (None if bound else [{}])
    return form, _formset(request, rows, bound=bound), members


def _edit_context(
    request: PageRequest, router: Router | None, form: RouterForm, formset: Any, members: Any
) -> dict[str, Any]:
    can_edit = editable(request.membership, "admin", form, *formset.forms)
    intents = [m.intent_name for m in members]
    return {
        "router": router,
        "form": form,
        "formset": formset,
        "can_edit": can_edit,
        "can_label": can_edit,  # a labelled phrase trains the router: the admin's
        "test_form": RouterTestForm(),
        "intent_choices": intent_choices(intents),
        # The suggested phrases (routers.views.suggestions answers their buttons).
        "suggestions": selectors.pending_suggestions(router) if router else [],
        "suggestion_count": selectors.pending_suggestion_count(router) if router else 0,
        "suggestion_choices": intent_choices(intents),
    }


@role_required("admin")
@require_http_methods(["GET", "POST"])
def router_create(request: PageRequest) -> HttpResponse:
    return _router_form_page(request, None)


@role_required("manager")
@require_http_methods(["GET", "POST"])
def router_edit(request: PageRequest, router_id: uuid.UUID) -> HttpResponse:
    router = _router(request, router_id, write_role="admin" if request.method == "POST" else None)
    return _router_form_page(request, router)


def _router_form_page(request: PageRequest, router: Router | None) -> HttpResponse:
    """The router form, new (``router`` None) or saved; a valid POST goes to one service."""
    organization = request.membership.organization
    form, formset, members = _forms(request, router, bound=request.method == "POST")
    if request.method == "POST" and form.is_valid() and formset.is_valid():
        fields = _router_fields(form, formset)
        try:
            if router is None:
                saved = services.router_create(
                    organization=organization, actor=request.user, **fields
                )
                done = _("Roteador criado. Teste algumas frases ao lado.")
            else:
                saved = services.router_save(
                    router=router,
                    actor=request.user,
                    shown_version=form.cleaned_data["version"],
                    **fields,
                )
                done = _("Roteador salvo. A próxima mensagem já usa esta versão.")
        except RouterError as exc:
            field = exc.field if exc.field in form.fields else None
            form.add_error(field, exc.message)
        else:
            messages.success(request, done)
            return redirect("routers:router_edit", router_id=saved.pk)
    context = _edit_context(request, router, form, formset, members)
    return render(request, "routers/router_form.html", context)


def _router_fields(form: RouterForm, formset: Any) -> dict[str, Any]:
    """What the router form and the intents formset say, as service arguments."""
    data = form.cleaned_data
    return {
        "name": data["name"],
        "channel": data["channel"],
        "fallback_agent": data["fallback_agent"],
        "is_active": data["is_active"],
        "config": form.config(),
        "members": formset.member_specs(),
    }


@role_required("admin")
@require_POST
def router_delete(request: PageRequest, router_id: uuid.UUID) -> HttpResponse:
    router = _router(request, router_id)
    services.router_delete(router=router, actor=request.user)
    messages.success(request, _("Roteador excluído. O canal volta a usar o agente dele."))
    return redirect("routers:routers")


@role_required("manager")
@require_POST
def router_test(request: PageRequest, router_id: uuid.UUID) -> HttpResponse:
    """The "Testar classificação" panel: which intent, how sure, which agent, which stage."""
    router = _router(request, router_id)
    form = RouterTestForm(request.POST)
    context: dict[str, Any] = {
        "router": router,
        "test_form": form,
        "can_label": request.membership.has_role("admin"),
    }
    if form.is_valid():
        message = form.cleaned_data["message"]
        context["result"] = services.router_classify_test(
            router=router, organization=request.membership.organization, message=message
        )
        context["tested_message"] = message
        context["intent_choices"] = intent_choices(selectors.router_intent_names(router))
    if request.htmx:
        return render(request, "routers/router_form.html#test_panel", context)
    # The whole page, its forms as saved (this POST is the test's, not theirs).
    page = _edit_context(request, router, *_forms(request, router, bound=False))
    return render(request, "routers/router_form.html", {**page, **context})


# --- decisions ------------------------------------------------------------------------------


@role_required("manager")
@require_GET
def router_decisions(request: PageRequest, router_id: uuid.UUID) -> HttpResponse:
    router = _router(request, router_id)
    stats = selectors.decision_stats(router)
    context = {
        "router": router,
        "stats": stats,
        "chart": stacked_bars(stats.days, stats.intent_mix),
        "stage_chart": stacked_bars(
            stats.days,
            {
                str(_("classificador local")): stats.stage_mix["local"],
                str(_("modelo de linguagem")): stats.stage_mix["llm"],
            },
            height=160,
        ),
        "decisions": selectors.latest_decisions(router),
    }
    return render(request, "routers/decisions.html", context)


# --- the quality loop -----------------------------------------------------------------------


def _quality_run(
    request: PageRequest, router_id: uuid.UUID, run_id: uuid.UUID
) -> tuple[Router, QualityRun]:
    """The router and one of its quality runs (another router's run is a 404)."""
    router = _router(request, router_id)
    return router, access(QualityRun.objects.all(), request.membership, pk=run_id, router=router)


def _run_context(request: PageRequest, router: Router, run: QualityRun | None) -> dict[str, Any]:
    """What the quality page's ``#run`` fragment needs (the whole page includes it)."""
    return {"router": router, "run": run, "can_edit_config": request.membership.has_role("admin")}


def _quality_context(request: PageRequest, router: Router, **extra: Any) -> dict[str, Any]:
    names = selectors.router_intent_names(router)
    context: dict[str, Any] = {
        **_run_context(request, router, selectors.latest_quality_run(router)),
        "can_label": request.membership.has_role("admin"),
        "phrases": selectors.labelled_phrases(router),
        "phrase_form": LabelledPhraseForm(intent_names=names),
        "paste_form": LabelledPasteForm(),
    }
    context.update(extra)
    return context


@role_required("manager")
@require_GET
def router_quality(request: PageRequest, router_id: uuid.UUID) -> HttpResponse:
    router = _router(request, router_id)
    return render(request, "routers/quality.html", _quality_context(request, router))


@role_required("admin")
@require_POST
def router_phrase_add(request: PageRequest, router_id: uuid.UUID) -> HttpResponse:
    """One labelled phrase (the test panel's "esta frase deveria ser…")."""
    router = _router(request, router_id)
    form = LabelledPhraseForm(request.POST, intent_names=selectors.router_intent_names(router))
    if form.is_valid():
        try:
            services.labelled_phrases_add(
                router=router,
                actor=request.user,
                phrases=[(form.cleaned_data["text"], form.cleaned_data["intent_name"])],
            )
        except RouterError as exc:
            form.add_error(None, exc.message)
    saved = form.is_valid() and not form.errors
    why = "" if saved else form_errors_text(form)
    if request.htmx:
        context = {"router": router, "saved": saved, "label_form": form, "why": why}
        return render(request, "routers/router_form.html#label_saved", context)
    if saved:
        messages.success(request, _("Frase rotulada guardada."))
    else:
        messages.error(request, f"{_('Não foi possível guardar a frase.')} {why}".strip())
    return redirect("routers:router_quality", router_id=router.pk)


@role_required("admin")
@require_POST
def router_phrases_paste(request: PageRequest, router_id: uuid.UUID) -> HttpResponse:
    router = _router(request, router_id)
    form = LabelledPasteForm(request.POST)
    if form.is_valid():
        parsed = parse_labelled_lines(
            form.cleaned_data["lines"], selectors.router_intent_names(router)
        )
        for error in parsed.errors:
            form.add_error("lines", error)
        if parsed.phrases and not parsed.errors:
            try:
                count = services.labelled_phrases_add(
                    router=router, actor=request.user, phrases=list(parsed.phrases)
                )
            except RouterError as exc:
                form.add_error("lines", exc.message)
            else:
                messages.success(request, _("%(n)s frases rotuladas guardadas.") % {"n": count})
                return redirect("routers:router_quality", router_id=router.pk)
    context = _quality_context(request, router, paste_form=form)
    return render(request, "routers/quality.html", context, status=422)


@role_required("admin")
@require_POST
def router_phrase_delete(
    request: PageRequest, router_id: uuid.UUID, phrase_id: uuid.UUID
) -> HttpResponse:
    router = _router(request, router_id)
    phrase = access(LabelledPhrase.objects.all(), request.membership, pk=phrase_id, router=router)
    services.labelled_phrase_delete(phrase=phrase, actor=request.user)
    if request.htmx:
        return HttpResponse("")
    return redirect("routers:router_quality", router_id=router.pk)


@role_required("manager")
@require_POST
def router_quality_run(request: PageRequest, router_id: uuid.UUID) -> HttpResponse:
    router = _router(request, router_id)
    try:
        services.quality_run_start(router=router, actor=request.user)
    except RouterError as exc:
        messages.error(request, exc.message)
    return redirect(reverse("routers:router_quality", kwargs={"router_id": router.pk}) + "#run")


@role_required("manager")
@require_GET
def router_quality_progress(
    request: PageRequest, router_id: uuid.UUID, run_id: uuid.UUID
) -> HttpResponse:
    """The fragment the quality page polls while a run is going; the results once done."""
    router, run = _quality_run(request, router_id, run_id)
    return render(request, "routers/quality.html#run", _run_context(request, router, run))


@role_required("admin")
@require_POST
def router_apply_suggestion(
    request: PageRequest, router_id: uuid.UUID, run_id: uuid.UUID
) -> HttpResponse:
    router, run = _quality_run(request, router_id, run_id)
    suggestion = (run.results or {}).get("suggestion") or {}
    if not suggestion:
        messages.error(request, _("Esta rodada não tem sugestão."))
    else:
        services.router_update(
            router=router,
            actor=request.user,
            config={
                "min_confidence": suggestion.get("min_confidence"),
                "local_accept_threshold": suggestion.get("local_accept_threshold"),
            },
        )
        messages.success(request, _("Limiares aplicados ao roteador."))
    return redirect("routers:router_quality", router_id=router.pk)
