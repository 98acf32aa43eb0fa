"""One admin policy (accounts/admin.py): every tenant model is read-only in the admin, or
each write path it allows goes through a service (or, for rows no page writes, an audited
admin save) — and every write leaves an AuditLog row. Posted as a superuser, like staff."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django import forms
from django.contrib import admin
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory

from accounts import rls
from accounts.models import AuditLog, Membership, Organization
from cases.models import Case, CaseNotificationSettings, CaseReminder
from conversation.models import ChannelSession, DemoInvoice, KnowledgeDocument, LlmCall, Message
from conversation.models import Turn as TurnModel
from conversation.runtime_adapters.invoices import demo_invoice_detail
from routers.models import LabelledPhrase, Router
from tests import factories
from tests.cases.conftest import PHONE, enable_cases, open_case

# The write paths each editable tenant model allows in the admin; every other registered
# tenant model must be read-only. A new entry here needs its test below.
WRITE_PATHS: dict[str, set[str]] = {
    "accounts.Membership": {"add", "change", "delete"},  # add: membership_create; audited
    "conversation.ChannelSession": {"add", "change", "delete"},  # add: channel_create; audited
    "conversation.KnowledgeDocument": {"add", "change", "delete"},  # knowledge services
    "conversation.DemoInvoice": {"add", "change"},  # demo_invoice_save
    "routers.Router": {"delete"},  # router_delete
    "routers.LabelledPhrase": {"delete"},  # labelled_phrase_delete
    "cases.CaseNotificationSettings": {"add", "change"},  # notification_settings_save
}
MUST_BE_READ_ONLY: list[type[Any]] = [LlmCall, Message, TurnModel]


@pytest.fixture
def superuser(db: Any) -> Any:
    return get_user_model().objects.create_superuser("root", "root@example.com", "senha-root-123")


@pytest.fixture
def staff(superuser: Any) -> Client:
    client = Client()
    client.force_login(superuser)
    return client


def _request(user: Any) -> Any:
    request = RequestFactory().get("/admin/")
    request.user = user
    return request


def _permissions(model_admin: Any, request: Any) -> set[str]:
    allowed = set()
    if model_admin.has_add_permission(request):
        allowed.add("add")
    if model_admin.has_change_permission(request, None):
        allowed.add("change")
    if model_admin.has_delete_permission(request, None):
        allowed.add("delete")
    return allowed


def _overrides(model_admin: Any, method: str) -> bool:
    return getattr(type(model_admin), method) is not getattr(admin.ModelAdmin, method)


def _tenant_admins() -> list[tuple[Any, Any]]:
    return sorted(
        ((m, a) for m, a in admin.site._registry.items() if rls.is_tenant_model(m)),
        key=lambda pair: pair[0]._meta.label,
    )


def test_every_tenant_admin_is_read_only_or_writes_through_its_declared_paths(superuser):
    request = _request(superuser)
    problems = []
    for model, model_admin in _tenant_admins():
        label = model._meta.label
        allowed = _permissions(model_admin, request)
        expected = WRITE_PATHS.get(label, set())
        if allowed != expected:
            problems.append(
                f"{label}: the admin allows {sorted(allowed)}, policy {sorted(expected)}"
            )
        if allowed & {"add", "change"} and not _overrides(model_admin, "save_model"):
            problems.append(f"{label}: saves without its service (override save_model)")
        if "delete" in allowed and not (
            _overrides(model_admin, "delete_model") and _overrides(model_admin, "delete_queryset")
        ):
            problems.append(f"{label}: deletes without audit (delete_model and delete_queryset)")
    assert problems == []
    registered = {m._meta.label for m, _ in _tenant_admins()}
    assert set(WRITE_PATHS) <= registered
    assert len(registered) >= 20  # the walk saw every app's admin


def test_every_inline_is_read_only(superuser):
    request = _request(superuser)
    writable = []
    for model, model_admin in admin.site._registry.items():
        for inline in model_admin.get_inline_instances(request):
            perms = (
                inline.has_add_permission(request, None),
                inline.has_change_permission(request, None),
                inline.has_delete_permission(request, None),
            )
            if any(perms):
                writable.append(f"{model._meta.label}: {type(inline).__name__} {perms}")
    assert writable == [], "an inline formset writes around the services"


@pytest.mark.parametrize("model", MUST_BE_READ_ONLY, ids=lambda m: m.__name__)
def test_the_ledger_messages_and_turns_refuse_writes(model, superuser):
    assert _permissions(admin.site._registry[model], _request(superuser)) == set()


def test_a_read_only_change_form_refuses_a_post(staff, world):
    conversation = factories.make_conversation(world.channel_a)
    message = factories.make_message(conversation, "oi")
    response = staff.post(f"/admin/conversation/message/{message.pk}/change/", {"body": "editado"})
    assert response.status_code == 403
    message.refresh_from_db()
    assert message.body == "oi"


# --- posting the forms ---------------------------------------------------------------------


def form_data(response: Any, **changes: Any) -> dict[str, Any]:
    """The admin form's current values as a browser would post them, with ``changes``."""
    assert response.status_code == 200, response.status_code
    form = response.context["adminform"].form
    data: dict[str, Any] = {}
    for name, field in form.fields.items():
        current = form[name].value()
        if field.show_hidden_initial:  # a callable default: the browser posts it back too
            data[form.add_initial_prefix(name)] = current
        value = changes.pop(name) if name in changes else current
        if isinstance(field, forms.BooleanField):
            if value:
                data[name] = "on"
            continue
        data[name] = "" if value is None else value
    assert changes == {}, f"not fields of the form: {sorted(changes)}"
    for inline in response.context["inline_admin_formsets"]:
        management = inline.formset.management_form
        for key in ("TOTAL_FORMS", "INITIAL_FORMS", "MIN_NUM_FORMS", "MAX_NUM_FORMS"):
            data[f"{management.prefix}-{key}"] = management[key].value()
    return data


def post_form(client: Client, url: str, **changes: Any) -> Any:
    response = client.post(url, form_data(client.get(url), **changes))
    assert response.status_code == 302, _errors(response)
    return response


def _errors(response: Any) -> Any:
    context = getattr(response, "context", None)
    if context and "adminform" in context:
        return context["adminform"].form.errors
    return response.status_code


def audit_rows(action: str) -> list[AuditLog]:
    return list(AuditLog.objects.filter(action=action))


def test_notification_settings_changed_in_the_admin_reschedule_reminders_and_are_audited(
    staff, superuser, world
):
    enable_cases(world.agent_a)
    conversation = factories.make_conversation(world.channel_a, phone=PHONE)
    case = open_case(conversation)
    row = CaseNotificationSettings.objects.create(organization=world.org_a)

    post_form(
        staff,
        f"/admin/cases/casenotificationsettings/{row.pk}/change/",
        reminder_after_hours=2,
        reminder_count=1,
    )

    # The page's service ran: the pending reminders follow the new cadence.
    reminders = list(CaseReminder.objects.filter(case=case, status="pending"))
    assert [r.due_at - case.waiting_since for r in reminders] == [timedelta(hours=2)]
    (audit,) = audit_rows("case_notifications.update")
    assert audit.actor_id == superuser.pk and audit.organization_id == world.org_a.pk
    assert audit.diff["reminders_rescheduled"] == 1
    row.refresh_from_db()
    assert (row.reminder_after_hours, row.updated_by_id) == (2, superuser.pk)


def test_notification_settings_added_in_the_admin_go_through_the_service(staff, world):
    post_form(
        staff,
        "/admin/cases/casenotificationsettings/add/",
        organization=world.org_b.pk,
        reminder_after_hours=5,
        reminder_count=2,
    )

    row = CaseNotificationSettings.objects.get(organization=world.org_b)
    assert (row.reminder_after_hours, row.reminder_count) == (5, 2)
    assert [a.organization_id for a in audit_rows("case_notifications.update")] == [world.org_b.pk]


def test_the_admin_applies_the_pages_rules_to_notification_settings(staff, world):
    row = CaseNotificationSettings.objects.create(organization=world.org_a)
    url = f"/admin/cases/casenotificationsettings/{row.pk}/change/"
    # WhatsApp without the team's number, and a channel of another organization.
    response = staff.post(
        url,
        form_data(staff.get(url), whatsapp_enabled=True, whatsapp_channel=world.channel_b.pk),
    )

    assert response.status_code == 200
    assert response.context["adminform"].form.errors
    row.refresh_from_db()
    # (WhatsApp notices are on by default since round 3; nothing of the post was saved.)
    assert row.whatsapp_channel_id is None and not row.whatsapp_phone
    assert audit_rows("case_notifications.update") == []


def test_knowledge_documents_are_written_through_the_knowledge_services(staff, superuser, world):
    post_form(
        staff,
        "/admin/conversation/knowledgedocument/add/",
        organization=world.org_a.pk,
        title="Trocas",
        body="Trocas em até 7 dias.",
        is_active=True,
    )
    document = KnowledgeDocument.objects.get(title="Trocas")
    post_form(
        staff, f"/admin/conversation/knowledgedocument/{document.pk}/change/", title="Devoluções"
    )
    response = staff.post(
        f"/admin/conversation/knowledgedocument/{document.pk}/delete/", {"post": "yes"}
    )

    assert response.status_code == 302
    assert not KnowledgeDocument.objects.filter(pk=document.pk).exists()
    actions = list(
        AuditLog.objects.filter(resource_id=str(document.pk))
        .order_by("created_at", "pk")
        .values_list("action", "actor_id")
    )
    assert actions == [
        ("knowledge.create", superuser.pk),
        ("knowledge.update", superuser.pk),
        ("knowledge.delete", superuser.pk),
    ]


def test_the_bulk_delete_action_goes_through_the_service_per_row(staff, world):
    documents = [factories.make_document(world.org_a, f"Doc {n}", "corpo") for n in range(2)]
    response = staff.post(
        "/admin/conversation/knowledgedocument/",
        {
            "action": "delete_selected",
            "post": "yes",
            ACTION_CHECKBOX_NAME: [str(d.pk) for d in documents],
        },
    )

    assert response.status_code == 302
    assert not KnowledgeDocument.objects.filter(pk__in=[d.pk for d in documents]).exists()
    assert len(audit_rows("knowledge.delete")) == 2


def test_memberships_added_changed_and_removed_in_the_admin_are_audited(staff, world):
    user = get_user_model().objects.create_user("nova-pessoa", password="senha-nova-123")
    post_form(
        staff,
        "/admin/accounts/membership/add/",
        user=user.pk,
        organization=world.org_a.pk,
        role="viewer",
    )
    membership = Membership.objects.get(user=user)
    post_form(staff, f"/admin/accounts/membership/{membership.pk}/change/", role="manager")
    response = staff.post(f"/admin/accounts/membership/{membership.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    assert not Membership.objects.filter(pk=membership.pk).exists()
    actions = list(
        AuditLog.objects.filter(resource_id=str(membership.pk))
        .order_by("created_at", "pk")
        .values_list("action", flat=True)
    )
    assert actions == ["membership.create", "membership.role_change", "membership.remove"]


def test_the_admin_keeps_the_team_pages_rules_for_memberships(staff, world):
    # The organization keeps an admin; a member made a viewer gives their work back.
    only_admin = Membership.objects.get(user=world.admin, organization=world.org_a)
    Membership.objects.filter(organization=world.org_a, role="admin").exclude(
        pk=only_admin.pk
    ).update(role="manager")
    url = f"/admin/accounts/membership/{only_admin.pk}/change/"
    response = staff.post(url, form_data(staff.get(url), role="viewer"))
    assert response.status_code == 200  # the form again, with the reason
    assert "pelo menos um administrador" in response.content.decode()
    only_admin.refresh_from_db()
    assert only_admin.role == "admin"

    enable_cases(world.agent_a)
    case = open_case(factories.make_conversation(world.channel_a, phone="5511955552222"))
    Case.objects.filter(pk=case.pk).update(assigned_to=world.agent)
    agent = Membership.objects.get(user=world.agent, organization=world.org_a)
    post_form(staff, f"/admin/accounts/membership/{agent.pk}/change/", role="viewer")
    case.refresh_from_db()
    assert case.assigned_to_id is None


def test_a_channel_added_in_the_admin_goes_through_channel_create(staff, superuser, world):
    post_form(
        staff,
        "/admin/conversation/channelsession/add/",
        organization=world.org_a.pk,
        name="WhatsApp loja",
        provider="simulator",
        agent=world.agent_a.pk,
        templates="[]",
        is_active=True,
    )

    channel = ChannelSession.objects.get(name="WhatsApp loja")
    assert channel.webhook_secret  # the service mints the secret; the admin never shows it
    (audit,) = audit_rows("channel.create")
    assert audit.actor_id == superuser.pk and audit.resource_id == str(channel.pk)


def test_a_channels_settings_changed_in_the_admin_are_audited_and_stay_in_one_org(staff, world):
    url = f"/admin/conversation/channelsession/{world.channel_a.pk}/change/"
    refused = staff.post(url, form_data(staff.get(url), agent=world.agent_b.pk))
    assert refused.status_code == 200 and "agent" in refused.context["adminform"].form.errors

    post_form(staff, url, name="Canal renomeado")

    world.channel_a.refresh_from_db()
    assert world.channel_a.name == "Canal renomeado"
    assert world.channel_a.agent_id == world.agent_a.pk
    (audit,) = audit_rows("channel.update")  # the channel page's service and audit row
    assert audit.diff == {"changed": ["name"]} and audit.organization_id == world.org_a.pk


def test_the_admin_keeps_the_channel_pages_rules(staff, world):
    # The provider and the templates are read-only once the channel exists (a provider
    # switch would reuse one provider's secret as the other's; a template's purpose is set
    # on the channel page, which checks its approval); turning it off is the page's service.
    channel = world.channel_a
    url = f"/admin/conversation/channelsession/{channel.pk}/change/"
    fields = staff.get(url).context["adminform"].form.fields
    assert "provider" not in fields and "templates" not in fields

    post_form(staff, url, is_active="")

    channel.refresh_from_db()
    assert channel.is_active is False
    assert len(audit_rows("channel.deactivate")) == 1


def test_a_demo_invoice_added_in_the_admin_goes_through_demo_invoice_save(staff, world):
    import json

    post_form(
        staff,
        "/admin/conversation/demoinvoice/add/",
        organization=world.org_a.pk,
        contact="",
        detail=json.dumps(demo_invoice_detail()),
    )

    invoice = DemoInvoice.objects.get(organization=world.org_a, contact__isnull=True)
    (audit,) = audit_rows("demo_invoice.create")
    assert audit.resource_id == str(invoice.pk) and "lines" in audit.diff


def test_routers_and_phrases_are_deleted_through_their_services(staff, world):
    router = Router.objects.create(
        organization=world.org_a, name="Triagem", channel=world.channel_a
    )
    phrase = LabelledPhrase.objects.create(
        organization=world.org_a, router=router, text="segunda via", intent_name="financeiro"
    )

    staff.post(f"/admin/routers/labelledphrase/{phrase.pk}/delete/", {"post": "yes"})
    staff.post(f"/admin/routers/router/{router.pk}/delete/", {"post": "yes"})

    assert not Router.objects.filter(pk=router.pk).exists()
    assert [a.resource_id for a in audit_rows("router.labelled_phrase_delete")] == [str(phrase.pk)]
    assert [a.resource_id for a in audit_rows("router.delete")] == [str(router.pk)]


def test_an_organization_renamed_in_the_admin_is_audited(staff, world):
    post_form(staff, f"/admin/accounts/organization/{world.org_a.pk}/change/", name="Loja Nova")

    assert Organization.objects.get(pk=world.org_a.pk).name == "Loja Nova"
    (audit,) = audit_rows("organization.admin_update")
    assert audit.organization_id == world.org_a.pk and audit.diff == {"fields": ["name"]}
