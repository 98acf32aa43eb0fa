"""Pages: agents."""

from __future__ import annotations

import uuid

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
    form = AgentCreateForm(
        request.POST or None,
        initial=AgentCreateForm.initial_from(None) | {"publish": True},
        org_settings=request.membership.organization.settings,
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
        if form.is_valid():
            with transaction.atomic():  # a version saved "and published" is both or neither
                version = services.agent_version_create(
                    agent=agent, actor=request.user, **form.version_fields()
                )
                if form.cleaned_data["publish"]:
                    services.agent_publish(agent=agent, version=version, actor=request.user)
            if form.cleaned_data["publish"]:
                messages.success(
                    request, _("Versão %(n)s salva e publicada.") % {"n": version.number}
                )
            else:
                messages.success(
                    request, _("Versão %(n)s salva (não publicada).") % {"n": version.number}
                )
            return redirect("conversation:agent_detail", agent_id=agent.pk)
    else:
        form = AgentVersionForm(
            initial=AgentVersionForm.initial_from(versions[0] if versions else None),
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
    agent = access(Agent.objects.all(), request.membership, pk=agent_id)
    version = access(AgentVersion.objects.all(), request.membership, pk=version_id, agent=agent)
    services.agent_publish(agent=agent, version=version, actor=request.user)
    messages.success(request, _("Versão %(n)s publicada.") % {"n": version.number})
    return redirect("conversation:agent_detail", agent_id=agent.pk)
