"""Every page and API endpoint, walked from the URL resolver, with the one table that says
who may do what.

``ROUTES`` maps each named URL to the minimal role per HTTP method (DESIGN §6: viewer
reads; agent answers cases and handoffs; manager tests classification and edits
knowledge; admin configures channels, agents, routers and notifications — plus the role
lines of specs/intent-router.md Task 6-7 and specs/human-cases.md §9). A URL the resolver
knows and this table does not fails ``test_every_url_is_in_the_table``; the isolation and
role matrices then cover it. URL kwargs are filled from ``KWARG_MODELS`` with the rows of
``tenant_data``; ``query``/``body`` name objects the view reads from the request.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.security.tenant_data import TenantData

ROLES = ("viewer", "agent", "manager", "admin")
RANK = {role: i for i, role in enumerate(ROLES)}
ANY = "any"  # any logged-in user, with or without a membership
PUBLIC = "public"  # no login needed
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")

# Served by their own suites: the Django admin (staff) and the webhooks (no user).
EXCLUDED_PREFIXES = ("admin/", "webhooks/")

# URL kwarg -> the model whose row it names.
KWARG_MODELS = {
    "conversation_id": "conversation.Conversation",
    "handoff_id": "conversation.Handoff",
    "agent_id": "conversation.Agent",
    "version_id": "conversation.AgentVersion",
    "document_id": "conversation.KnowledgeDocument",
    "channel_id": "conversation.ChannelSession",
    "router_id": "routers.Router",
    "phrase_id": "routers.LabelledPhrase",
    "run_id": "routers.QualityRun",
    "suggestion_id": "routers.RouterSuggestion",
    "case_id": "cases.Case",
    "message_id": "conversation.Message",
    "contact_id": "conversation.Contact",
    "label_id": "inbox.Label",
    "canned_reply_id": "inbox.CannedReply",
    "membership_id": "accounts.Membership",
    "invitation_id": "accounts.Invitation",
}

Build = Callable[[TenantData, str], dict[str, Any]]


@dataclass(frozen=True)
class Rule:
    methods: dict[str, str]  # method -> minimal role (or ANY / PUBLIC)
    query: Build | None = None  # GET parameters naming the organization's objects
    body: Build | None = None  # POST/PUT/PATCH body naming them
    # Body fields naming objects of the organization (checked cross-tenant).
    names_objects_in_body: bool = False

    def role_for(self, method: str) -> str | None:
        return self.methods.get(method)


def _row(data: TenantData, tag: str, label: str) -> Any:
    return data.row(tag, label)


def _simulator_query(data: TenantData, tag: str) -> dict[str, Any]:
    channel = _row(data, tag, "conversation.ChannelSession")
    return {"canal": str(channel.pk), "telefone": "5511988887777"}


def _simulator_send(data: TenantData, tag: str) -> dict[str, Any]:
    return {**_simulator_query(data, tag), "nome": "Teste", "texto": "oi", "id": uuid.uuid4().hex}


def _channel_of(data: TenantData, tag: str) -> dict[str, Any]:
    return {"name": "Novo canal", "agent": str(_row(data, tag, "conversation.Agent").pk)}


def _channel_assign(data: TenantData, tag: str) -> dict[str, Any]:
    return {"answered_by": f"agent:{_row(data, tag, 'conversation.Agent').pk}"}


def _inbox_assign(data: TenantData, tag: str) -> dict[str, Any]:
    return {"responsavel": str(_row(data, tag, "accounts.Membership").pk)}


def _inbox_older_messages(data: TenantData, tag: str) -> dict[str, Any]:
    return {"antes": str(_row(data, tag, "conversation.Message").pk)}


def _router_api_create(data: TenantData, tag: str) -> dict[str, Any]:
    return {
        "name": "Roteador novo",
        "channel_id": str(_row(data, tag, "conversation.ChannelSession").pk),
        "fallback_agent_id": str(_row(data, tag, "conversation.Agent").pk),
    }


def _router_api_update(data: TenantData, tag: str) -> dict[str, Any]:
    return {"fallback_agent_id": str(_row(data, tag, "conversation.Agent").pk)}


def _router_members(data: TenantData, tag: str) -> dict[str, Any]:
    agent = _row(data, tag, "conversation.Agent")
    return {
        "members": [
            {
                "agent_id": str(agent.pk),
                "intent_name": "suporte",
                "intent_description": "Dúvidas de suporte.",
                "examples": ["não consigo entrar"],
            }
        ]
    }


def _router_form(data: TenantData, tag: str) -> dict[str, Any]:
    return {
        "name": "Roteador novo",
        "channel": str(_row(data, tag, "conversation.ChannelSession").pk),
        "fallback_agent": str(_row(data, tag, "conversation.Agent").pk),
        "is_active": "on",
        "min_confidence": "0.6",
        "local_accept_threshold": "0.8",
        "classifier_model": "claude-haiku-4-5",
        "form-TOTAL_FORMS": "1",
        "form-INITIAL_FORMS": "0",
        "form-0-agent": str(_row(data, tag, "conversation.Agent").pk),
        "form-0-intent_name": "suporte",
        "form-0-intent_description": "Dúvidas de suporte.",
        "form-0-examples": "não consigo entrar",
    }


def _switch(data: TenantData, tag: str) -> dict[str, Any]:
    return {"organization": str(data.org(tag).pk)}


def _notification_settings(data: TenantData, tag: str) -> dict[str, Any]:
    return {
        "reminders_enabled": "on",
        "reminder_after_hours": "24",
        "reminder_count": "3",
        "whatsapp_enabled": "on",
        "whatsapp_phone": "5511999990000",
        "whatsapp_channel": str(_row(data, tag, "conversation.ChannelSession").pk),
    }


V, AG, MG, AD = ROLES

ROUTES: dict[str, Rule] = {
    # accounts
    "accounts:login": Rule({"GET": PUBLIC, "POST": PUBLIC}),
    "accounts:logout": Rule({"POST": ANY}),
    # the team page (admins) and the account's own pages
    "accounts:team": Rule({"GET": AD}),
    "accounts:team_invite": Rule({"POST": AD}),
    "accounts:team_invitation_revoke": Rule({"POST": AD}),
    "accounts:team_member_role": Rule({"POST": AD}),
    "accounts:team_member_remove": Rule({"POST": AD}),
    "accounts:organization_time_zone": Rule({"POST": AD}),
    "accounts:invitation_accept": Rule({"GET": PUBLIC, "POST": PUBLIC}),  # the link is the key
    "accounts:password_change": Rule({"GET": ANY, "POST": ANY}),
    "accounts:password_reset": Rule({"GET": PUBLIC, "POST": PUBLIC}),
    "accounts:password_reset_done": Rule({"GET": PUBLIC}),
    "accounts:password_reset_confirm": Rule({"GET": PUBLIC, "POST": PUBLIC}),
    # health probes: no login, no data
    "health-live": Rule({"GET": PUBLIC}),
    "health-ready": Rule({"GET": PUBLIC}),
    "accounts:switch_organization": Rule({"POST": ANY}, body=_switch, names_objects_in_body=True),
    # API schema and docs (served locally, to any logged-in user)
    "api-schema": Rule({"GET": ANY}),
    "api-docs": Rule({"GET": ANY}),
    # conversations and handoffs: viewer reads, agent acts
    "conversation:conversations": Rule({"GET": V}),
    "conversation:conversation_detail": Rule({"GET": V}),
    "conversation:conversation_take_over": Rule({"POST": AG}),
    "conversation:message_resend": Rule({"POST": AG}),
    "conversation:message_media": Rule({"GET": V}),
    "conversation:conversation_send_media": Rule({"POST": AG}),
    "conversation:conversation_send_template": Rule({"POST": AG}),
    "conversation:handoffs": Rule({"GET": V}),
    "conversation:handoff_badge": Rule({"GET": V}),
    "conversation:handoff_detail": Rule({"GET": V}),
    "conversation:handoff_messages": Rule({"GET": V}),
    "conversation:handoff_reply": Rule({"POST": AG}),
    "conversation:handoff_return": Rule({"POST": AG}),
    # inbox (issue 16): panel, assignment, resolve, labels, notes, canned replies, contacts
    "inbox:queue": Rule({"GET": V}),
    "inbox:settings": Rule({"GET": V}),
    "inbox:label_create": Rule({"POST": MG}),
    "inbox:label_delete": Rule({"POST": MG}),
    "inbox:canned_reply_create": Rule({"POST": MG}),
    "inbox:canned_reply_delete": Rule({"POST": MG}),
    "inbox:conversation_panel": Rule({"GET": V}),
    "inbox:conversation_messages": Rule({"GET": V}, query=_inbox_older_messages),
    "inbox:conversation_assign": Rule({"POST": AG}, body=_inbox_assign, names_objects_in_body=True),
    "inbox:conversation_assign_me": Rule({"POST": AG}),
    "inbox:conversation_resolve": Rule({"POST": AG}),
    "inbox:conversation_label_toggle": Rule({"POST": AG}),
    "inbox:conversation_note_add": Rule({"POST": AG}),
    "inbox:conversation_canned_replies": Rule({"GET": AG}),
    "inbox:contact_detail": Rule({"GET": V}),
    "inbox:contact_edit": Rule({"POST": AG}),
    "inbox:contact_note_add": Rule({"POST": AG}),
    # agents: admin configures
    "conversation:agents": Rule({"GET": V}),
    "conversation:agent_create": Rule({"GET": AD, "POST": AD}),
    "conversation:agent_detail": Rule({"GET": V, "POST": AD}),
    "conversation:agent_version_publish": Rule({"POST": AD}),
    # channels: admin configures (DESIGN §6)
    "conversation:channels": Rule({"GET": AD}),
    "conversation:channel_connect_waha": Rule({"GET": AD, "POST": AD}),
    "conversation:channel_connect_meta": Rule({"GET": AD, "POST": AD}),
    "conversation:channel_detail": Rule({"GET": AD, "POST": AD}),
    "conversation:channel_test": Rule({"POST": AD}),
    "conversation:channel_set_active": Rule({"POST": AD}),
    "conversation:channel_new_secret": Rule({"POST": AD}),
    "conversation:channel_templates": Rule({"GET": AD, "POST": AD}),
    "conversation:channel_templates_sync": Rule({"POST": AD}),
    "conversation:channel_assign": Rule(
        {"POST": AD}, body=_channel_assign, names_objects_in_body=True
    ),
    # knowledge: manager edits
    "conversation:knowledge": Rule({"GET": V}),
    "conversation:knowledge_create": Rule({"GET": MG, "POST": MG}),
    "conversation:knowledge_edit": Rule({"GET": V, "POST": MG}),
    "conversation:knowledge_delete": Rule({"POST": MG}),
    # simulator: chatting as a customer is an agent's test bench; channels are admin's
    "conversation:simulator": Rule({"GET": AG}, query=_simulator_query),
    "conversation:simulator_chat": Rule({"GET": AG}, query=_simulator_query),
    "conversation:simulator_send": Rule(
        {"POST": AG}, body=_simulator_send, names_objects_in_body=True
    ),
    "conversation:simulator_channel_create": Rule(
        {"POST": AD}, body=_channel_of, names_objects_in_body=True
    ),
    # routers pages (intent-router Task 7: view manager, manage admin)
    "routers:routers": Rule({"GET": MG}),
    "routers:router_create": Rule(
        {"GET": AD, "POST": AD}, body=_router_form, names_objects_in_body=True
    ),
    "routers:router_edit": Rule(
        {"GET": MG, "POST": AD}, body=_router_form, names_objects_in_body=True
    ),
    "routers:router_delete": Rule({"POST": AD}),
    "routers:router_test": Rule({"POST": MG}),
    "routers:router_decisions": Rule({"GET": MG}),
    "routers:router_quality": Rule({"GET": MG}),
    "routers:router_phrase_add": Rule({"POST": AD}),  # labelled phrases train the router (§10.5)
    "routers:router_phrases_paste": Rule({"POST": AD}),  # labelled phrases train the router (§10.5)
    "routers:router_phrase_delete": Rule({"POST": AD}),  # labelled phrases train the router (§10.5)
    "routers:router_quality_run": Rule({"POST": MG}),
    "routers:router_quality_progress": Rule({"GET": MG}),
    "routers:router_apply_suggestion": Rule({"POST": AD}),
    "routers:router_suggestion_accept": Rule({"POST": AD}),
    "routers:router_suggestion_reject": Rule({"POST": AD}),
    # routers API (intent-router Task 6: read agent, write admin, test manager)
    "routers_api:routers": Rule(
        {"GET": AG, "POST": AD}, body=_router_api_create, names_objects_in_body=True
    ),
    "routers_api:router": Rule(
        {"GET": AG, "PATCH": AD, "DELETE": AD},
        body=_router_api_update,
        names_objects_in_body=True,
    ),
    "routers_api:members": Rule({"PUT": AD}, body=_router_members, names_objects_in_body=True),
    "routers_api:test": Rule({"POST": MG}),
    "routers_api:labelled_phrases": Rule({"GET": AG, "PUT": AD}),  # they train it (§10.5)
    "routers_api:quality_runs": Rule({"POST": MG}),
    "routers_api:quality_run": Rule({"GET": AG}),
    # cases pages and API (human-cases §9: viewer reads, agent answers, admin notifications)
    "cases:case_list": Rule({"GET": V}),
    "cases:case_badge": Rule({"GET": V}),
    "cases:notification_settings": Rule(
        {"GET": AD, "POST": AD}, body=_notification_settings, names_objects_in_body=True
    ),
    "cases:conversation_cases": Rule({"GET": V}),
    "cases:case_detail": Rule({"GET": V}),
    "cases:case_reply": Rule({"POST": AG}),
    "cases:case_assign": Rule({"POST": AG}),
    "cases:staff_number_save": Rule({"POST": AD}),
    "cases_api:cases": Rule({"GET": V}),
    "cases_api:case": Rule({"GET": V}),
    "cases_api:reply": Rule({"POST": AG}),
    "cases_api:assign": Rule({"POST": AG}),
    # analytics (issue 17): managers read outcomes, prices and the budget; admins edit them
    "analytics:outcomes": Rule({"GET": MG}),
    "analytics:outcomes_csv": Rule({"GET": MG}),
    # One price list for every organization: read here, kept by the platform in the admin.
    "analytics:prices": Rule({"GET": MG}),
    "analytics:budget": Rule({"GET": MG, "POST": AD}),
    "analytics:conversation_cost": Rule({"GET": V}),
}


@dataclass(frozen=True)
class Route:
    name: str
    pattern: str
    kwargs: tuple[str, ...] = field(default=())

    @property
    def is_api(self) -> bool:
        return self.pattern.startswith("api/")

    @property
    def rule(self) -> Rule:
        return ROUTES[self.name]

    def url(self, data: TenantData, tags: dict[str, str] | str) -> str:
        """The URL with each kwarg naming the row of the organization ``tags[kwarg]``."""
        values = {}
        for kwarg in self.kwargs:
            tag = tags if isinstance(tags, str) else tags[kwarg]
            values[kwarg] = data.row(tag, KWARG_MODELS[kwarg]).pk
        return reverse(self.name, kwargs=values)


def walk(patterns: list[Any] | None = None, prefix: str = "", ns: str = "") -> Iterator[Route]:
    """Every URL pattern of the project, with its full name, route and kwargs."""
    for p in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(p, URLResolver):
            namespace = ":".join(x for x in (ns, p.namespace) if x) if p.namespace else ns
            yield from walk(p.url_patterns, prefix + str(p.pattern), namespace)
        elif isinstance(p, URLPattern):
            name = f"{ns}:{p.name}" if ns and p.name else (p.name or "")
            converters = getattr(p.pattern, "converters", None)
            kwargs = tuple(converters) if converters else tuple(p.pattern.regex.groupindex)
            yield Route(name=name, pattern=prefix + str(p.pattern), kwargs=kwargs)


def product_routes() -> list[Route]:
    """Every page and API endpoint (not the admin, not the webhooks)."""
    return [r for r in walk() if not r.pattern.startswith(EXCLUDED_PREFIXES)]


def covered_routes() -> list[Route]:
    return [r for r in product_routes() if r.name in ROUTES]


def request(client: Any, route: Route, method: str, url: str, body: dict[str, Any] | None) -> Any:
    """One request the way the product's own clients send it (JSON for the API)."""
    fn = getattr(client, method.lower())
    if method == "GET":
        return fn(url, body or {})
    if route.is_api:
        return fn(url, data=body or {}, content_type="application/json")
    if method == "POST":
        return fn(url, body or {})
    return fn(url)
