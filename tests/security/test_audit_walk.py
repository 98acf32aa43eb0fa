"""Every mutation of the product leaves an AuditLog row — actor (or a system actor kind),
organization, action and request id — found by walking the services.

Every public function of every ``<app>/services.py`` — or of every module of an
``<app>/services/`` package, named by the package path callers use
(``cases.services.case_open``) — plus the handoff service module, is called with
organization A's rows, resolved from its parameter names and annotations; one that writes
no audit row fails, unless ``EXEMPT`` says why it needs none. Reads belong in the
selectors, so they are not walked.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.utils import timezone

from accounts.logging import request_id_var
from accounts.models import AuditLog
from tests.security.tenant_data import TenantData, build_world

ROOT = Path(__file__).resolve().parents[2]
# The handoff inbox's services, and the LGPD erasure and retention.
EXTRA_MODULES = ["conversation.handoff", "conversation.privacy"]

# Functions that mutate nothing (or only bookkeeping that is not an action), and why.
EXEMPT = {
    "accounts.services.mask_secrets": "pure helper",
    "accounts.services.audited_delete": "the shared delete step: each service calling it is walked",
    "cases.services.next_status": "pure state machine",
    "cases.services.escalation_briefing": "pure text",
    "cases.services.escalated_customer_notice": "pure text",
    "cases.services.follow_up_delay": "configuration",
    "cases.services.follow_up_max_attempts": "configuration",
    "cases.services.follow_up_text": "pure text",
    "routers.services.router_classify_test": "a test classification: stores nothing (Task 6)",
    "conversation.handoff.build_briefing": "pure text",
    "conversation.handoff.handoff_touch": "inbound-message bookkeeping; the message is the record",
    # Audited, but they write rows this walk's tenant snapshot cannot see (the global price
    # table; the organization's own settings): tests/analytics/test_services.py holds them.
    "analytics.services.model_price_save": "global price table; audit in tests/analytics",
    "analytics.services.model_price_delete": "global price table; audit in tests/analytics",
    "analytics.services.budget_set": "organization settings; audit in tests/analytics",
    "accounts.services.organization_time_zone_set": (
        "the organization row; audit in tests/accounts/test_review_r31_time_zone.py"
    ),
}


def _service_modules() -> list[str]:
    apps_dirs = sorted(p.parent for p in ROOT.glob("*/apps.py"))
    names = [
        f"{d.name}.services"
        for d in apps_dirs
        if (d / "services.py").exists() or (d / "services" / "__init__.py").exists()
    ]
    return names + EXTRA_MODULES


def _defining_modules(module_name: str) -> list[str]:
    """The module itself, or every public module of a services package."""
    module = importlib.import_module(module_name)
    if not hasattr(module, "__path__"):
        return [module_name]
    return [
        f"{module_name}.{info.name}"
        for info in pkgutil.iter_modules(module.__path__)
        if not info.name.startswith("_")
    ]


def _functions() -> list[tuple[str, Callable[..., Any]]]:
    found = []
    for module_name in _service_modules():
        public = importlib.import_module(module_name)
        for defining in _defining_modules(module_name):
            module = importlib.import_module(defining)
            for name, fn in inspect.getmembers(module, inspect.isfunction):
                if fn.__module__ == defining and not name.startswith("_"):
                    # Named as callers reach it; the package must re-export it.
                    assert getattr(public, name, None) is fn, f"{module_name} lacks {name}"
                    found.append((f"{module_name}.{name}", fn))
    return found


FUNCTIONS = _functions()


def _model_named(name: str) -> Any:
    for model in apps.get_models():
        if model.__name__ == name:
            return model
    return None


def _router_intent(d: TenantData) -> str:
    return str(d.row("A", "routers.RouterMember").intent_name)


# Values by parameter name (the conventions name arguments after what they are).
BY_NAME: dict[str, Callable[[TenantData], Any]] = {
    "organization": lambda d: d.org("A"),
    "organization_id": lambda d: d.org("A").pk,
    "actor": lambda d: d.user("A", "admin"),
    "user": lambda d: get_user_model().objects.create_user(username="novo-membro"),
    "role": lambda d: "viewer",
    "name": lambda d: "Nome novo",
    "title": lambda d: "Título",
    "summary": lambda d: "Resumo",
    "blocker": lambda d: "Bloqueio",
    "text": lambda d: "Texto de teste",
    "info": lambda d: "O número do pedido é 123.",
    "reason": lambda d: "teste",
    "reason_code": lambda d: "manual",
    "message": lambda d: "oi",
    "body": lambda d: "Corpo",
    "provider": lambda d: "simulator",
    "action": lambda d: "resolved",
    "now": lambda d: timezone.now(),
    "sent": lambda d: [],
    "resource": lambda d: d.row("A", "conversation.Agent"),
    "version": lambda d: d.row("A", "conversation.AgentVersion"),
    "document": lambda d: d.row("A", "conversation.KnowledgeDocument"),
    "channel": lambda d: d.row("A", "conversation.ChannelSession"),
    "phrase": lambda d: d.row("A", "routers.LabelledPhrase"),
    "event": lambda d: d.row("A", "cases.CaseEvent"),
    "follow_up_id": lambda d: str(d.row("A", "cases.CaseFollowUp").pk),
    "run_id": lambda d: str(d.row("A", "routers.QualityRun").pk),
    "phrases": lambda d: [("quero a segunda via", _router_intent(d))],
    "is_active": lambda d: True,
    "config": lambda d: None,
    "email": lambda d: "convidada@example.com",
}


def _members(d: TenantData) -> dict[str, Any]:
    from routers.services import MemberSpec

    agent = d.row("A", "conversation.Agent")
    return {"members": [MemberSpec(agent=agent, intent_name="suporte", intent_description="x")]}


def _need_lead_info(d: TenantData) -> dict[str, Any]:
    from cases.services import case_answer

    case = d.row("A", "cases.Case")
    event = case_answer(case=case, actor=d.user("A", "admin"), action="need_lead_info", text="?")
    return {"case": case, "event": event}


def _awaiting_lead(d: TenantData) -> dict[str, Any]:
    from cases.services import case_answer

    case = d.row("A", "cases.Case")
    case_answer(case=case, actor=d.user("A", "admin"), action="need_lead_info", text="Qual?")
    case.refresh_from_db()
    return {"case": case}


def _case_assignee(d: TenantData) -> dict[str, Any]:
    return {"assignee": d.user("A", "agent")}


def _staff_phone(d: TenantData) -> dict[str, Any]:
    from accounts.models import Membership

    return {
        "membership": Membership.objects.get(user=d.user("A", "agent")),
        "phone": "5511977776666",
    }


def _lead_answered_unseen(d: TenantData) -> dict[str, Any]:
    """A case waiting on the customer who answered an hour ago, with no update since."""
    from datetime import timedelta

    from cases.models import Case
    from conversation.models import Conversation, Message

    case = _awaiting_lead(d)["case"]
    hour_ago = timezone.now() - timedelta(hours=1)
    Case.objects.filter(pk=case.pk).update(waiting_since=hour_ago - timedelta(hours=1))
    Message.objects.create(
        organization=case.organization,
        conversation=case.conversation,
        channel=case.conversation.channel,
        direction="inbound",
        sender_kind="customer",
        body="segue o dado",
        status="received",
    )
    Message.objects.filter(body="segue o dado").update(created_at=hour_ago)
    Conversation.objects.filter(pk=case.conversation_id).update(last_inbound_at=hour_ago)
    return {}


def _queued_run(d: TenantData) -> dict[str, Any]:
    run = d.row("A", "routers.QualityRun")
    type(run).objects.filter(pk=run.pk).update(status="queued")
    return {"run_id": str(run.pk)}


def _free_channel(d: TenantData) -> dict[str, Any]:
    from conversation.models import ChannelSession

    channel = ChannelSession.objects.create(
        organization=d.org("A"), name="Canal livre", provider="simulator"
    )
    return {"channel": channel}


def _new_version(d: TenantData) -> dict[str, Any]:
    from conversation.models import AgentVersion

    agent = d.row("A", "conversation.Agent")
    version = AgentVersion.objects.create(
        organization=d.org("A"), agent=agent, number=99, prompt="Nova versão."
    )
    return {"agent": agent, "version": version}


def _inactive_channel(d: TenantData) -> dict[str, Any]:
    channel = d.row("A", "conversation.ChannelSession")
    type(channel).objects.filter(pk=channel.pk).update(is_active=False)
    channel.refresh_from_db()
    return {"channel": channel}


def _retention_due(d: TenantData) -> dict[str, Any]:
    from datetime import timedelta

    organization = d.org("A")
    type(organization).objects.filter(pk=organization.pk).update(message_retention_days=1)
    organization.refresh_from_db()
    message = d.row("A", "conversation.Message")
    old = timezone.now() - timedelta(days=3)
    type(message).objects.filter(pk=message.pk).update(created_at=old, status="received")
    return {"organization": organization}


def _agent_membership(d: TenantData) -> dict[str, Any]:
    from accounts.models import Membership

    # Not the admin's own (nobody removes themselves; the last admin stays), and not a
    # viewer's (BY_NAME's role is "viewer": no change to audit).
    return {"membership": Membership.objects.get(user=d.user("A", "agent"))}


def _budget_switch(d: TenantData) -> dict[str, Any]:
    from decimal import Decimal

    return {"level": "alert", "limit_usd": Decimal("10.00"), "spend_usd": Decimal("8.5")}


def _no_open_case(d: TenantData) -> dict[str, Any]:
    case = d.row("A", "cases.Case")
    type(case).objects.filter(pk=case.pk).update(status="resolved", closed_at=timezone.now())
    return {}


def _no_open_handoff(d: TenantData) -> dict[str, Any]:
    # Taking over a conversation whose open handoff is already the taker's changes nothing.
    handoff = d.row("A", "conversation.Handoff")
    type(handoff).objects.filter(pk=handoff.pk).update(status="returned")
    return {}


def _finished_run(d: TenantData) -> dict[str, Any]:
    # Starting a measurement while one is unfinished joins it and changes nothing.
    run = d.row("A", "routers.QualityRun")
    type(run).objects.filter(pk=run.pk).update(status="done")
    return {}


# Arguments a function needs beyond what its names say (or a state to act on).
SETUP: dict[str, Callable[[TenantData], dict[str, Any]]] = {
    "analytics.services.budget_switch_record": _budget_switch,
    "conversation.services.agent_publish": _new_version,
    "conversation.services.channel_set_active": _inactive_channel,
    "conversation.privacy.retention_apply": _retention_due,
    "routers.services.router_create": _free_channel,
    "routers.services.router_save": _members,
    "routers.services.router_members_replace": _members,
    "cases.services.case_record_relay": _need_lead_info,
    "cases.services.case_provide_update": _awaiting_lead,
    "cases.services.case_assign": _case_assignee,
    "cases.services.staff_number_set": _staff_phone,
    "cases.services.stalled_cases_sweep": _lead_answered_unseen,
    "routers.services.quality_run_execute": _queued_run,
    "accounts.services.membership_role_change": _agent_membership,
    "accounts.services.membership_remove": _agent_membership,
    # The world's conversation is assigned to the admin already: hand it back to the team.
    "inbox.services.conversation_assign": lambda d: {"assignee": None},
    # Resolving also cancels the conversation's open cases through the ``closed`` hook;
    # ``cases.services.case_cancel`` audits that as system work (it takes no actor), so
    # the walk resolves a conversation with no open case (tests/inbox covers the hook).
    "inbox.services.conversation_resolve": _no_open_case,
    "inbox.services.conversation_take_over": _no_open_handoff,
    "routers.services.quality_run_start": _finished_run,
}


def _kwargs(qualname: str, fn: Callable[..., Any], data: TenantData) -> dict[str, Any]:
    values = SETUP[qualname](data) if qualname in SETUP else {}
    for name, param in inspect.signature(fn).parameters.items():
        if name in values or param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        if name in BY_NAME:
            values[name] = BY_NAME[name](data)
            continue
        model = _model_named(str(param.annotation).split("|")[0].strip(" '\""))
        if model is not None:
            values[name] = data.row("A", model)
        elif param.default is param.empty:
            raise AssertionError(f"{qualname}: how to fill {name!r}? add to BY_NAME or SETUP")
    return values


def _state() -> list[Any]:
    """Every tenant row but the audit log's, to tell whether a call changed anything."""
    from accounts import rls

    return [
        sorted(map(repr, m._base_manager.values_list()))
        for m in rls.tenant_models()
        if m is not AuditLog
    ]


def test_every_service_function_is_walked_or_exempt():
    names = {q for q, _ in FUNCTIONS}
    assert not set(EXEMPT) - names, f"stale exemptions: {sorted(set(EXEMPT) - names)}"
    assert len(names) >= 20


@pytest.mark.parametrize(
    ("qualname", "fn"), [f for f in FUNCTIONS if f[0] not in EXEMPT], ids=lambda v: str(v)
)
def test_every_mutation_writes_an_audit_row(db, qualname, fn):
    data = build_world(("A",))
    kwargs = _kwargs(qualname, fn, data)
    before = set(AuditLog.objects.values_list("pk", flat=True))
    state = _state()
    request_id = f"audit-{fn.__name__}"[:64]
    token = request_id_var.set(request_id)
    try:
        positional = [
            kwargs.pop(name)
            for name, p in inspect.signature(fn).parameters.items()
            if p.kind == p.POSITIONAL_OR_KEYWORD and name in kwargs
        ]
        fn(*positional, **kwargs)
    finally:
        request_id_var.reset(token)
    if qualname != "accounts.services.audit_log_write":  # writes the audit table only
        assert _state() != state, f"{qualname} changed nothing: give it a SETUP to act on"
    rows = list(AuditLog.objects.exclude(pk__in=before))
    assert rows, f"{qualname} changed the product without an audit row"
    for row in rows:
        assert row.organization_id == data.org("A").pk
        assert row.action and row.request_id == request_id
        if "actor" in inspect.signature(fn).parameters:
            assert row.actor_id == data.user("A", "admin").pk, qualname
        else:
            assert row.actor_kind in ("system", "webhook", "user"), qualname
