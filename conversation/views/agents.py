"""Pages: agents."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.access import access, role_required
from accounts.pages import editable
from conversation import selectors, services
from conversation.agents import generic_model
from conversation.forms import (
    AgentCreateForm,
    AgentVersionForm,
)
from conversation.llm import catalog
from conversation.models import (
    Agent,
    AgentVersion,
    ModelProvider,
)
from conversation.views._common import PageRequest, _page


@role_required("viewer")
@require_GET
def agents(request: PageRequest) -> HttpResponse:
    context = {
        "agents": selectors.agent_list(request.membership),
        "can_edit": request.membership.has_role("admin"),
    }
    return _page(request, "conversation/agents.html", context)


@role_required("admin")
@require_http_methods(["GET", "POST"])
def agent_create(request: PageRequest) -> HttpResponse:
    org_settings = request.membership.organization.settings
    # The default model within the organization's enabled list (never one it switched off).
    initial = {"publish": True, "model": generic_model(org_settings)}
    form = AgentCreateForm(
        request.POST or None,
        initial=AgentCreateForm.initial_from(None) | initial,
        org_settings=org_settings,
    )
    if request.method == "POST" and form.is_valid():
        agent = services.agent_create(
            organization=request.membership.organization,
            name=form.cleaned_data["name"],
            actor=request.user,
            publish=form.cleaned_data["publish"],
            **form.version_fields(),
        )
        messages.success(request, _("Agente criado."))
        return redirect("conversation:agent_detail", agent_id=agent.pk)
    return _page(request, "conversation/agent_create.html", {"form": form})


@role_required("viewer")
@require_http_methods(["GET", "POST"])
def agent_detail(request: PageRequest, agent_id: uuid.UUID) -> HttpResponse:
    membership = request.membership
    agent = access(
        Agent.objects.select_related("published_version"),
        membership,
        for_write_role="admin" if request.method == "POST" else None,
        pk=agent_id,
    )
    versions = selectors.agent_versions(agent)
    model_choices = {
        "org_settings": membership.organization.settings,
        "current_model": versions[0].model if versions else "",
    }
    if request.method == "POST":
        form = AgentVersionForm(request.POST, **model_choices)
        version = _save_version(request, agent, form) if form.is_valid() else None
        if version is not None:
            if form.cleaned_data["publish"]:
                messages.success(
                    request, _("Versão %(n)s salva e publicada.") % {"n": version.number}
                )
            else:
                messages.success(
                    request, _("Versão %(n)s salva (não publicada).") % {"n": version.number}
                )
            return redirect("conversation:agent_detail", agent_id=agent.pk)
        if not form.errors:  # valid, but someone saved a version since the page was drawn
            form = _stale_form(request, agent, model_choices)
    else:
        latest = versions[0] if versions else None
        form = AgentVersionForm(
            initial=AgentVersionForm.initial_from(latest)
            | {"based_on": latest.number if latest else 0},
            **model_choices,
        )
    can_edit = editable(membership, "admin", form)
    context = {
        "agent": agent,
        "versions": versions,
        "form": form,
        "can_edit": can_edit,
        "model_lifecycles": _model_lifecycles(agent, versions),
    }
    return _page(request, "conversation/agent_detail.html", context)


def _save_version(
    request: PageRequest, agent: Agent, form: AgentVersionForm
) -> AgentVersion | None:
    """The new version (published too when asked: both or neither), or None when someone
    saved a version since the form was drawn (``based_on``): the later save would bury it
    without anyone having read it. Checked under the agent's row lock, as the numbering."""
    with transaction.atomic():
        Agent.objects.select_for_update().filter(pk=agent.pk).first()
        latest = agent.versions.order_by("-number").values_list("number", flat=True).first()
        based_on = form.cleaned_data.get("based_on")
        if based_on is not None and based_on != (latest or 0):
            return None
        version = services.agent_version_create(
            agent=agent, actor=request.user, **form.version_fields()
        )
        if form.cleaned_data["publish"]:
            services.agent_publish(agent=agent, version=version, actor=request.user)
    return version


def _stale_form(
    request: PageRequest, agent: Agent, model_choices: dict[str, Any]
) -> AgentVersionForm:
    """The member's form as typed, now based on the newest version, saying why it was not
    saved: saving it again (knowingly) goes through."""
    newest = agent.versions.order_by("-number").first()
    number = newest.number if newest else 0
    data = request.POST.copy()
    data["based_on"] = str(number)
    form = AgentVersionForm(data, **model_choices)
    form.is_valid()
    who = newest.created_by.get_username() if newest and newest.created_by else ""
    form.add_error(
        None,
        _(
            "Outra pessoa salvou a versão %(n)s enquanto você editava%(who)s: nada foi salvo. "
            "Confira a versão %(n)s no histórico; o seu texto continua abaixo e, salvo de novo, "
            "vira a versão seguinte."
        )
        % {"n": number, "who": f" ({who})" if who else ""},
    )
    return form


def _model_lifecycles(agent: Agent, versions: list[AgentVersion]) -> list[catalog.Lifecycle]:
    """End-of-life warnings for the published version's model and the latest version's."""
    today = timezone.localdate()
    shown = [v for v in (agent.published_version, versions[0] if versions else None) if v]
    models = dict.fromkeys(v.model for v in shown if v.provider == ModelProvider.ANTHROPIC)
    return [state for m in models if (state := catalog.lifecycle(m, today)).warns]


@role_required("admin")
@require_POST
def agent_version_publish(
    request: PageRequest, agent_id: uuid.UUID, version_id: uuid.UUID
) -> HttpResponse:
    agent = access(
        Agent.objects.select_related("published_version"), request.membership, pk=agent_id
    )
    version = access(AgentVersion.objects.all(), request.membership, pk=version_id, agent=agent)
    refusal = _model_refusal(request, agent, version)
    if refusal:
        messages.error(request, refusal)
    else:
        services.agent_publish(agent=agent, version=version, actor=request.user)
        messages.success(request, _("Versão %(n)s publicada.") % {"n": version.number})
    return redirect("conversation:agent_detail", agent_id=agent.pk)


def _model_refusal(request: PageRequest, agent: Agent, version: AgentVersion) -> str:
    """Why ``version`` may not be published (a rollback included): its Claude model is not
    among those the organization enables today or is past its end of life — the agent form
    refuses them too. The model answering now may stay. "" when it may."""
    if version.provider != ModelProvider.ANTHROPIC:
        return ""
    published = agent.published_version
    keep = published.model if published and published.provider == version.provider else ""
    org_settings = request.membership.organization.settings
    choosable = catalog.choosable_models(org_settings, timezone.localdate(), keep=keep)
    if version.model in {name for name, _state in choosable}:
        return ""
    return _(
        "A versão %(n)s usa o modelo %(model)s, que não está liberado para a organização ou "
        "chegou ao fim de vida. Crie uma versão com outro modelo e publique-a."
    ) % {"n": version.number, "model": version.model}
