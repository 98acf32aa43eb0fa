"""Templates of a Meta channel: synced from the Graph API keeping their purposes, a purpose
chosen on the channel's page (what ``template_for`` answers the cases), and a template sent
outside the 24-hour window with its own language and every parameter."""

from __future__ import annotations

import json
from typing import Any

import pytest
import respx

from accounts.models import AuditLog
from conversation.models import ChannelSession, Message
from conversation.outbox import outbound_enqueue
from conversation.outbox.templates import TemplateError, template_message_send
from tests import factories

from ._media_support import GRAPH, META_NUMBER

WABA = "102290129340398"
LIST_URL = f"{GRAPH}/{WABA}/message_templates"
REMOTE = {
    "data": [
        {
            "name": "lembrete_caso",
            "language": "en_US",
            "status": "APPROVED",
            "category": "UTILITY",
            "components": [{"type": "BODY", "text": "Hi {{1}}, case {{2}} has news."}],
        },
        {
            "name": "promo",
            "language": "pt_BR",
            "status": "REJECTED",
            "category": "MARKETING",
            "components": [{"type": "BODY", "text": "Oferta!"}],
        },
    ]
}


@pytest.fixture
def meta_channel(world: Any) -> Any:
    return factories.make_channel(
        world.org_a,
        "meta",
        external_id=META_NUMBER,
        business_account_id=WABA,
        api_token="EAAG-token",
        templates=[
            {"name": "lembrete_caso", "language": "en_US", "purpose": "follow_up"},
            {"name": "antigo", "language": "pt_BR", "purpose": "case_notice"},
        ],
    )


@respx.mock
def test_sync_replaces_the_list_and_keeps_purposes_of_approved_templates(world, meta_channel):
    respx.get(LIST_URL).respond(200, json=REMOTE)

    response = world.client_for(world.admin).post(f"/canais/{meta_channel.pk}/modelos/sincronizar/")

    assert response.status_code == 302
    meta_channel.refresh_from_db()
    assert [(t["name"], t["language"], t["purpose"]) for t in meta_channel.templates] == [
        ("lembrete_caso", "en_US", "follow_up"),
        ("promo", "pt_BR", ""),
    ]
    assert meta_channel.templates[0]["parameters"] == 2
    assert meta_channel.template_for("follow_up") == "lembrete_caso"
    assert meta_channel.template_for("case_notice") == ""  # "antigo" is gone from the account
    audit = AuditLog.objects.get(action="channel.templates_sync")
    assert audit.diff == {"total": 2, "added": 1, "removed": 1}


@respx.mock
def test_sync_with_a_bad_token_changes_nothing_and_says_so(world, meta_channel):
    respx.get(LIST_URL).respond(
        401, json={"error": {"message": "Invalid OAuth access token.", "code": 190}}
    )

    response = world.client_for(world.admin).post(
        f"/canais/{meta_channel.pk}/modelos/sincronizar/", follow=True
    )

    assert "A Meta recusou o token do canal." in response.content.decode()
    meta_channel.refresh_from_db()
    assert len(meta_channel.templates) == 2
    assert not AuditLog.objects.filter(action="channel.templates_sync").exists()


def test_the_templates_page_is_admin_only_and_lists_them(world, meta_channel):
    assert (
        world.client_for(world.manager).get(f"/canais/{meta_channel.pk}/modelos/").status_code
        == 403
    )

    page = world.client_for(world.admin).get(f"/canais/{meta_channel.pk}/modelos/")

    assert page.status_code == 200
    assert "lembrete_caso" in page.content.decode()


def test_choosing_a_purpose_moves_it_from_the_other_template(world, meta_channel):
    meta_channel.templates = [
        {"name": "a", "language": "pt_BR", "status": "APPROVED", "purpose": "follow_up"},
        {"name": "b", "language": "pt_BR", "status": "APPROVED", "purpose": ""},
    ]
    meta_channel.save(update_fields=["templates"])

    world.client_for(world.admin).post(
        f"/canais/{meta_channel.pk}/modelos/", {"template": "b|pt_BR", "purpose": "follow_up"}
    )

    meta_channel.refresh_from_db()
    assert meta_channel.template_for("follow_up") == "b"
    assert [t["purpose"] for t in meta_channel.templates] == ["", "follow_up"]
    assert AuditLog.objects.filter(action="channel.template_purpose").exists()


def test_a_rejected_template_gets_no_purpose(world, meta_channel):
    meta_channel.templates = [{"name": "x", "language": "pt_BR", "status": "REJECTED"}]
    meta_channel.save(update_fields=["templates"])

    world.client_for(world.admin).post(
        f"/canais/{meta_channel.pk}/modelos/", {"template": "x|pt_BR", "purpose": "follow_up"}
    )

    assert ChannelSession.objects.get(pk=meta_channel.pk).template_for("follow_up") == ""


@respx.mock
def test_staff_sends_a_template_in_its_language_with_every_parameter(
    world, meta_channel, django_capture_on_commit_callbacks
):
    meta_channel.templates = [
        {
            "name": "lembrete_caso",
            "language": "en_US",
            "status": "APPROVED",
            "body": "Hi {{1}}, case {{2}} has news.",
            "parameters": 2,
        }
    ]
    meta_channel.save(update_fields=["templates"])
    route = respx.post(f"{GRAPH}/{META_NUMBER}/messages").respond(
        200, json={"messages": [{"id": "wamid.TPL"}]}
    )
    conversation = factories.make_conversation(meta_channel)  # window closed: never wrote

    with django_capture_on_commit_callbacks(execute=True):
        world.client_for(world.agent).post(
            f"/conversas/{conversation.pk}/modelo/",
            {"template": "lembrete_caso|en_US", "parameters": "Ana\n#123"},
        )

    message = Message.objects.get()
    assert (message.status, message.body) == ("sent", "Hi Ana, case #123 has news.")
    assert json.loads(route.calls.last.request.content)["template"] == {
        "name": "lembrete_caso",
        "language": {"code": "en_US"},
        "components": [
            {
                "type": "body",
                "parameters": [{"type": "text", "text": "Ana"}, {"type": "text", "text": "#123"}],
            }
        ],
    }
    audit = AuditLog.objects.get(action="message.template_send")
    assert "Ana" not in json.dumps(audit.diff)  # the audit holds counts, not what was said


def test_a_template_needs_exactly_its_parameters(world, meta_channel):
    meta_channel.templates = [
        {"name": "t", "language": "pt_BR", "status": "APPROVED", "body": "{{1}}", "parameters": 1}
    ]
    meta_channel.save(update_fields=["templates"])
    conversation = factories.make_conversation(meta_channel)

    with pytest.raises(TemplateError) as exc:
        template_message_send(
            conversation=conversation, actor=world.agent, name="t", language="pt_BR", parameters=[]
        )

    assert exc.value.code == "wrong_parameters"
    assert not Message.objects.exists()


@respx.mock
def test_a_cases_template_send_uses_the_templates_own_language(
    world, meta_channel, django_capture_on_commit_callbacks
):
    # The cases queue a follow-up by name only (template_for); the language comes from the
    # channel's entry for that template instead of a fixed pt_BR.
    route = respx.post(f"{GRAPH}/{META_NUMBER}/messages").respond(
        200, json={"messages": [{"id": "wamid.FU"}]}
    )
    conversation = factories.make_conversation(meta_channel)

    with django_capture_on_commit_callbacks(execute=True):
        outbound_enqueue(
            conversation=conversation,
            body="Ana",
            sender_kind="system",
            template_name=meta_channel.template_for("follow_up"),
        )

    template = json.loads(route.calls.last.request.content)["template"]
    assert template["language"] == {"code": "en_US"}
    assert template["components"][0]["parameters"] == [{"type": "text", "text": "Ana"}]
