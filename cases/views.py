"""Pages of the cases inbox (human-cases §9): a tab of its own, separate from handoffs.

Thin views: parse, authorize (``role_required`` + ``access``), call one service, render.
Reading (list, detail, going back) never writes: it sends no answer, calls no AI and
changes no case. The list polls every 60 seconds (no realtime push, §4.1).
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Page, Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.access import access, role_required
from accounts.models import Membership, display_name
from accounts.pages import PageRequest, act_and_tell
from cases import notifications, selectors, services
from cases.forms import CaseAnswerForm, CaseAssignForm, NotificationSettingsForm, StaffNumberForm
from cases.models import OPEN_STATUSES, Case, CaseNotice, CaseStatus, HumanAction, StaffNumber
from conversation.models import Conversation

PAGE_SIZE = 25


def _filter_key(request: HttpRequest) -> str:
    key = request.GET.get("estado", "")
    return key if key in selectors.FILTERS else selectors.DEFAULT_FILTER


def _assignee_key(request: HttpRequest) -> str:
    key = request.GET.get("resp", "")
    return key if key in selectors.ASSIGNEE_FILTERS else selectors.DEFAULT_ASSIGNEE_FILTER


def _list_query(filter_key: str, assignee_key: str) -> dict[str, str]:
    """The list's query parameters: the status filter, the assignee view unless the default."""
    query = {"estado": filter_key}
    if assignee_key != selectors.DEFAULT_ASSIGNEE_FILTER:
        query["resp"] = assignee_key
    return query


ASSIGNEE_LABELS = {
    "minhas": gettext_lazy("Minhas"),
    "sem-responsavel": gettext_lazy("Sem responsável"),
    "todas": gettext_lazy("Todas"),
}


def _list_context(request: PageRequest, filter_key: str) -> dict[str, Any]:
    assignee_key = _assignee_key(request)
    rows = selectors.case_list(request.membership, filter_key=filter_key, assignee_key=assignee_key)
    page: Page[Case] = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    cases = list(page.object_list)
    counts = selectors.reminder_counts([c.pk for c in cases])
    for case in cases:
        case.reminders_fired = counts.get(case.pk, 0)
    query = _list_query(filter_key, assignee_key)
    base_query = urlencode(query)
    if page.number > 1:
        query["page"] = str(page.number)
    return {
        "page": page,
        "cases": cases,
        "filter_key": filter_key,
        "assignee_key": assignee_key,
        "assignee_tabs": [
            {
                "key": key,
                "label": label,
                "active": key == assignee_key,
                "query": urlencode({"estado": filter_key, "resp": key}),
            }
            for key, label in ASSIGNEE_LABELS.items()
        ],
        "filter_query": urlencode(query),
        "base_query": base_query,
        "tabs": _tabs(request.membership, filter_key),
        "list_url": f"{reverse('cases:case_list')}?{urlencode(query)}",
        # One reverse() for the page, not one per row (the list's hot path).
        "cases_root": reverse("cases:case_list"),
    }


TAB_LABELS = {
    "abertos": gettext_lazy("Abertos"),
    "esperando-voce": gettext_lazy("Esperando você"),
    "esperando-cliente": gettext_lazy("Esperando cliente"),
    "resolvidos": gettext_lazy("Resolvidos"),
    "escalados": gettext_lazy("Escalados"),
    "cancelados": gettext_lazy("Cancelados"),
}


def _tabs(membership: Membership, active: str) -> list[dict[str, Any]]:
    counts = selectors.filter_counts(membership)
    return [
        {"key": key, "label": label, "count": counts.get(key), "active": key == active}
        for key, label in TAB_LABELS.items()
    ]


@role_required("viewer")
@require_GET
def case_list(request: PageRequest) -> HttpResponse:
    context = _list_context(request, _filter_key(request))
    if request.htmx and request.htmx.target == "case-list":
        return render(request, "cases/cases.html#case_list", context)
    context["can_configure"] = request.membership.has_role("admin")
    return render(request, "cases/cases.html", context)


def _case_queryset() -> Any:
    return Case.objects.select_related(
        "lead",
        "conversation",
        "conversation__channel",
        "conversation__contact",
        "agent",
        "assigned_to",
    )


def _detail_context(
    request: PageRequest, case: Case, form: CaseAnswerForm | None = None
) -> dict[str, Any]:
    filter_key = _filter_key(request)
    context = _list_context(request, filter_key)
    accepts = case.status == CaseStatus.AWAITING_HUMAN or (
        case.status == CaseStatus.AWAITING_LEAD and case.lead_unresponsive
    )
    can_answer = accepts and request.membership.has_role("agent")
    context.update(
        {
            "case": case,
            "selected": case.pk,  # the list beside the detail marks this row
            "detail": selectors.case_detail(case),
            "form": form or CaseAnswerForm(),
            "assign_form": (
                CaseAssignForm(
                    organization_id=case.organization_id,
                    initial={"assignee": case.assigned_to_id},
                )
                if request.membership.has_role("agent") and case.status in OPEN_STATUSES
                else None
            ),
            "accepts_answer": accepts,
            "can_answer": can_answer,
            "can_configure": request.membership.has_role("admin"),
            "back_url": (
                f"{reverse('cases:case_list')}?{context['filter_query']}#case-row-{case.pk}"
            ),
            # The list beside the detail keeps polling with the selection shown.
            "list_url": (
                f"{reverse('cases:case_detail', kwargs={'case_id': case.pk})}"
                f"?{context['filter_query']}"
            ),
        }
    )
    return context


@role_required("viewer")
@require_GET
def case_detail(request: PageRequest, case_id: uuid.UUID) -> HttpResponse:
    case = access(_case_queryset(), request.membership, pk=case_id)
    context = _detail_context(request, case)
    if request.htmx and request.htmx.target == "case-list":
        return render(request, "cases/cases.html#case_list", context)
    return render(request, "cases/cases.html", context)


@role_required("agent")
@require_POST
def case_reply(request: PageRequest, case_id: uuid.UUID) -> HttpResponse:
    """The answer panel's POST. "Não consigo → escalar" takes a confirmation step: the
    first POST renders the question (the text kept), the confirmed one acts."""
    case = access(_case_queryset(), request.membership, pk=case_id, for_write_role="agent")
    url = _detail_url(request, case)
    form = CaseAnswerForm(request.POST)
    if not form.is_valid():
        context = _detail_context(request, case, form)
        return render(request, "cases/cases.html", context, status=422)
    action = form.cleaned_data["action"]
    if action == HumanAction.ESCALATE and request.POST.get("confirmed") != "1":
        context = _detail_context(request, case, form)
        context["confirm_escalate"] = True
        return render(request, "cases/cases.html", context)
    act_and_tell(
        request,
        services.case_answer,
        done=_ANSWERED[action],
        refused=services.CaseError,
        case=case,
        action=action,
        text=form.cleaned_data["text"],
    )
    return redirect(url)


def _detail_url(request: PageRequest, case: Case) -> str:
    detail_url = reverse("cases:case_detail", kwargs={"case_id": case.pk})
    query = _list_query(_filter_key(request), _assignee_key(request))
    return f"{detail_url}?{urlencode(query)}"


@role_required("agent")
@require_POST
def case_assign(request: PageRequest, case_id: uuid.UUID) -> HttpResponse:
    """Who answers the case: a member (agent or above) of the organization, or the team."""
    case = access(_case_queryset(), request.membership, pk=case_id, for_write_role="agent")
    url = _detail_url(request, case)
    if request.POST.get("mine") == "1":
        assignee: Any = request.user
    else:
        form = CaseAssignForm(request.POST, organization_id=case.organization_id)
        if not form.is_valid():
            messages.error(request, _("Escolha um atendente desta organização."))
            return redirect(url)
        assignee = form.cleaned_data["assignee"]
    if assignee is None:
        done = _("Caso sem responsável: fica com a equipe.")
    else:
        name = display_name(assignee)
        done = _("Responsável: %(name)s.") % {"name": name}
    act_and_tell(
        request,
        services.case_assign,
        done=done,
        refused=services.CaseError,
        case=case,
        assignee=assignee,
    )
    return redirect(url)


_ANSWERED = {
    "resolved": gettext_lazy("Caso concluído. A IA vai contar ao cliente."),
    "need_lead_info": gettext_lazy(
        "A IA vai perguntar ao cliente. O caso volta para você quando ele responder."
    ),
    "escalate": gettext_lazy(
        "Caso escalado: a conversa passou para uma pessoa da equipe (transbordo)."
    ),
}


@role_required("viewer")
@require_GET
def case_badge(request: PageRequest) -> HttpResponse:
    count = selectors.awaiting_human_count(request.membership)
    return render(request, "cases/_badge.html", {"awaiting_count": count})


@role_required("viewer")
@require_GET
def conversation_cases(request: PageRequest, conversation_id: uuid.UUID) -> HttpResponse:
    conversation = access(Conversation.objects.all(), request.membership, pk=conversation_id)
    rows = selectors.conversation_cases(request.membership, conversation.pk)
    return render(
        request, "cases/_conversation_cases.html", {"conversation": conversation, "cases": rows}
    )


@role_required("admin")
@require_http_methods(["GET", "POST"])
def notification_settings(request: PageRequest) -> HttpResponse:
    org_id = request.membership.organization_id
    row = selectors.notification_settings_for(org_id)
    if request.method == "POST":
        form = NotificationSettingsForm(request.POST, organization_id=org_id)
        if form.is_valid():
            notifications.notification_settings_save(
                organization_id=org_id, actor=request.user, **form.cleaned_data
            )
            messages.success(request, _("Avisos de casos salvos."))
            return redirect("cases:notification_settings")
    else:
        form = NotificationSettingsForm(
            initial=NotificationSettingsForm.initial_from(row), organization_id=org_id
        )
    recent = list(
        CaseNotice.objects.filter(organization_id=org_id)
        .select_related("case")
        .order_by("-created_at")[:10]
    )
    return render(
        request,
        "cases/notification_settings.html",
        {
            "form": form,
            "row": row,
            "recent": recent,
            "staff_form": StaffNumberForm(organization_id=org_id),
            "staff_numbers": list(
                StaffNumber.objects.filter(organization_id=org_id)
                .select_related("membership__user")
                .order_by("phone")
            ),
        },
    )


@role_required("admin")
@require_POST
def staff_number_save(request: PageRequest) -> HttpResponse:
    """Set (or, with an empty number, remove) a member's staff number: the number that
    answers cases from WhatsApp as that member."""
    org_id = request.membership.organization_id
    form = StaffNumberForm(request.POST, organization_id=org_id)
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, str(error))
        return redirect("cases:notification_settings")
    phone = form.cleaned_data["phone"]
    act_and_tell(
        request,
        services.staff_number_set,
        done=_("Número da equipe salvo.") if phone else _("Número da equipe removido."),
        refused=services.CaseError,
        membership=form.cleaned_data["membership"],
        phone=phone,
    )
    return redirect("cases:notification_settings")
