"""The inbox pages: the conversation panel (labels, notes), canned replies for the reply
box, the member's queue for desktop alerts, the contact profile and the settings page."""

from __future__ import annotations

import json

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import AuditLog
from cases.models import Case
from conversation.handoff import perform_human_handoff
from conversation.models import Contact, Conversation, Message
from inbox import services
from inbox.models import CannedReply, ConversationLabel, InternalNote, Label
from tests.cases.conftest import enable_cases, open_case
from tests.inbox.conftest import conversation_with, membership_of

PHONE = "5511977776666"


def _label(world, name="Financeiro"):
    return Label.objects.create(organization=world.org_a, name=name, color="green")


# --- panel ---------------------------------------------------------------------------


def test_panel_shows_assignee_labels_and_notes(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    label = _label(world)
    unused = _label(world, "Nunca usada")
    services.conversation_label_toggle(conversation=conversation, label=label, actor=world.agent)
    services.internal_note_add(
        contact=conversation.contact, conversation=conversation, actor=world.agent, body="VIP"
    )
    html = world.client_for(world.viewer).get(f"/caixa/conversas/{conversation.pk}/").content
    text = html.decode()
    assert 'id="inbox-panel"' in text and label.name in text and "VIP" in text
    assert unused.name not in text  # a viewer sees the labels on it, not the whole set
    assert "Equipe (sem responsável)" in text
    assert "Resolver" not in text  # a viewer reads only


def test_label_toggle_puts_it_on_and_takes_it_off_audited(world):
    conversation = conversation_with(world.channel_a, phone=PHONE)
    label = _label(world)
    client = world.client_for(world.agent)
    url = f"/caixa/conversas/{conversation.pk}/etiquetas/{label.pk}/"

    client.post(url, HTTP_HX_REQUEST="true")
    assert ConversationLabel.objects.filter(conversation=conversation, label=label).exists()
    client.post(url, HTTP_HX_REQUEST="true")
    assert not ConversationLabel.objects.exists()
    actions = list(AuditLog.objects.order_by("id").values_list("action", flat=True))
    assert actions == ["conversation.label_add", "conversation.label_remove"]


def test_label_of_another_org_is_404(world):
    conversation = conversation_with(world.channel_a, phone=PHONE)
    theirs = Label.objects.create(organization=world.org_b, name="Deles")
    response = world.client_for(world.agent).post(
        f"/caixa/conversas/{conversation.pk}/etiquetas/{theirs.pk}/"
    )
    assert response.status_code == 404
    assert not ConversationLabel.objects.exists()


def test_a_note_is_stored_for_the_team_and_never_sent(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    before = Message.objects.count()
    response = world.client_for(world.agent).post(
        f"/caixa/conversas/{conversation.pk}/notas/",
        {"body": "Cliente prefere ligação à tarde"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert "Cliente prefere ligação à tarde" in response.content.decode()
    note = InternalNote.objects.get()
    assert note.conversation == conversation and note.author == world.agent
    assert Message.objects.count() == before  # nothing queued to the customer
    row = AuditLog.objects.get(action="note.add")
    assert "ligação" not in json.dumps(row.diff)  # the audit names the note, not its text


def test_an_empty_note_is_refused(world):
    conversation = conversation_with(world.channel_a, phone=PHONE)
    world.client_for(world.agent).post(
        f"/caixa/conversas/{conversation.pk}/notas/", {"body": "  "}, HTTP_HX_REQUEST="true"
    )
    assert not InternalNote.objects.exists()


def test_a_viewer_cannot_add_a_note(world):
    conversation = conversation_with(world.channel_a, phone=PHONE)
    response = world.client_for(world.viewer).post(
        f"/caixa/conversas/{conversation.pk}/notas/", {"body": "x"}
    )
    assert response.status_code == 403 and not InternalNote.objects.exists()


def test_panel_of_another_org_is_404(world):
    theirs = conversation_with(world.channel_b, phone=PHONE)
    assert world.client_for(world.viewer).get(f"/caixa/conversas/{theirs.pk}/").status_code == 404


# --- canned replies ------------------------------------------------------------------


def test_canned_replies_come_filled_for_the_conversation(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, name="Ana Souza")
    services.canned_reply_create(
        organization=world.org_a,
        actor=world.admin,
        title="Saudação",
        body="Olá, {{nome}}! Aqui é {{atendente}}.",
    )
    CannedReply.objects.create(organization=world.org_b, shortcut="deles", title="x", body="y")
    response = world.client_for(world.agent).get(
        f"/caixa/conversas/{conversation.pk}/respostas-prontas/"
    )
    assert response.json() == {
        "replies": [
            {
                "shortcut": "saudacao",
                "title": "Saudação",
                "text": f"Olá, Ana! Aqui é {world.agent.get_username()}.",
            }
        ]
    }


def test_the_reply_box_of_a_handoff_offers_canned_replies(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    handoff = perform_human_handoff(conversation=conversation, reason_code="requested_human")
    html = world.client_for(world.agent).get(f"/transbordos/{handoff.pk}/").content.decode()
    assert f'data-canned-url="/caixa/conversas/{conversation.pk}/respostas-prontas/"' in html
    assert 'src="/static/inbox/inbox.js"' in html


# --- the member's queue ----------------------------------------------------------------


def test_queue_lists_open_handoffs_of_mine_and_the_teams_only(world):
    me, other = membership_of(world.agent), membership_of(world.manager)
    rows = {}
    for i, assignee in enumerate((me, None, other)):
        c = conversation_with(world.channel_a, phone=f"55119000000{i}", text="oi")
        Conversation.objects.filter(pk=c.pk).update(assigned_to=assignee)
        c.refresh_from_db()
        rows[i] = perform_human_handoff(conversation=c, reason_code="requested_human")
    theirs = conversation_with(world.channel_b, phone=PHONE, text="oi")
    perform_human_handoff(conversation=theirs, reason_code="requested_human")

    data = world.client_for(world.agent).get("/caixa/fila/").json()

    assert {h["id"] for h in data["handoffs"]} == {str(rows[0].pk), str(rows[1].pk)}
    assert all(h["url"].startswith("/transbordos/") for h in data["handoffs"])
    assert "oi" not in json.dumps(data)  # names and links, never message text


def test_queue_needs_a_login(world):
    from django.test import Client

    response = Client().get("/caixa/fila/")
    assert response.status_code == 302


# --- contact profile -----------------------------------------------------------------------


def test_contact_profile_lists_every_conversation_case_and_note(world):
    enable_cases(world.agent_a)
    first = conversation_with(world.channel_a, phone=PHONE, text="oi", name="Ana")
    services.conversation_resolve(conversation=first, actor=world.agent)
    second = conversation_with(world.channel_a, phone=PHONE, text="de novo")
    case = open_case(second)
    services.internal_note_add(contact=first.contact, actor=world.agent, body="Cliente antiga")

    html = world.client_for(world.viewer).get(f"/caixa/contatos/{first.contact_id}/").content
    text = html.decode()

    assert f"/conversas/{first.pk}/" in text and f"/conversas/{second.pk}/" in text
    assert f"/casos/{case.pk}/" in text and case.title in text
    assert "Cliente antiga" in text
    assert Case.objects.filter(lead=first.contact).exists()


def test_contact_profile_costs_the_same_queries_however_many_notes(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    client = world.client_for(world.viewer)
    url = f"/caixa/contatos/{conversation.contact_id}/"

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    services.internal_note_add(
        contact=conversation.contact, actor=world.agent, body="um", conversation=conversation
    )
    one = queries()
    for n in range(5):
        services.conversation_resolve(conversation=conversation, actor=world.agent)
        conversation = conversation_with(world.channel_a, phone=PHONE, text=f"de novo {n}")
        services.internal_note_add(
            contact=conversation.contact,
            actor=world.agent,
            body=f"nota {n}",
            conversation=conversation,
        )
    assert queries() == one  # no query per note (each note names its conversation's channel)


def test_contact_profile_shows_opt_out_and_human_ownership_truthfully(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    client = world.client_for(world.viewer)
    url = f"/caixa/contatos/{conversation.contact_id}/"
    state = client.get(url).content.decode().split('id="contact-state"')[1].split("</div>")[0]
    assert "Com a IA" in state

    perform_human_handoff(conversation=conversation, reason_code="requested_human")
    state = client.get(url).content.decode().split('id="contact-state"')[1].split("</div>")[0]
    assert "Com humano" in state and "Com a IA" not in state

    Contact.objects.filter(pk=conversation.contact_id).update(
        opted_out_at=timezone.now(), force_human=False
    )
    Conversation.objects.filter(pk=conversation.pk).update(bot_silenced_until=None)
    state = client.get(url).content.decode().split('id="contact-state"')[1].split("</div>")[0]
    assert "Descadastrado" in state and "Com a IA" not in state


def test_contact_edit_is_audited_with_before_and_after(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, name="Ana")
    response = world.client_for(world.agent).post(
        f"/caixa/contatos/{conversation.contact_id}/editar/", {"name": "Ana Souza"}
    )
    assert response.status_code == 302
    assert Contact.objects.get(pk=conversation.contact_id).name == "Ana Souza"
    assert AuditLog.objects.get(action="contact.update").diff == {"name": ["Ana", "Ana Souza"]}


def test_contact_of_another_org_is_404_and_viewer_cannot_edit(world):
    theirs = conversation_with(world.channel_b, phone=PHONE, name="Deles")
    mine = conversation_with(world.channel_a, phone=PHONE, name="Ana")
    client = world.client_for(world.agent)
    assert client.get(f"/caixa/contatos/{theirs.contact_id}/").status_code == 404
    viewer = world.client_for(world.viewer)
    assert (
        viewer.post(f"/caixa/contatos/{mine.contact_id}/editar/", {"name": "X"}).status_code == 403
    )
    assert Contact.objects.get(pk=mine.contact_id).name == "Ana"


def test_contact_note_from_the_profile(world):
    conversation = conversation_with(world.channel_a, phone=PHONE)
    world.client_for(world.agent).post(
        f"/caixa/contatos/{conversation.contact_id}/notas/", {"body": "Prefere e-mail"}
    )
    note = InternalNote.objects.get()
    assert note.contact_id == conversation.contact_id and note.conversation is None


# --- settings --------------------------------------------------------------------------------


def test_manager_creates_and_deletes_labels_and_canned_replies(world):
    client = world.client_for(world.manager)
    assert (
        client.post("/caixa/ajustes/etiquetas/", {"name": "Urgente", "color": "red"}).status_code
        == 302
    )
    assert (
        client.post(
            "/caixa/ajustes/respostas/",
            {"title": "Prazo de entrega", "body": "Até 3 dias, {{nome}}."},
        ).status_code
        == 302
    )
    label = Label.objects.get(organization=world.org_a)
    reply = CannedReply.objects.get(organization=world.org_a)
    assert (label.name, label.color, reply.shortcut) == ("Urgente", "red", "prazo-de-entrega")
    html = client.get("/caixa/ajustes/").content.decode()
    assert "Urgente" in html and "/prazo-de-entrega" in html

    client.post(f"/caixa/ajustes/etiquetas/{label.pk}/excluir/")
    client.post(f"/caixa/ajustes/respostas/{reply.pk}/excluir/")
    assert not Label.objects.exists() and not CannedReply.objects.exists()
    actions = set(AuditLog.objects.values_list("action", flat=True))
    assert {"label.create", "label.delete", "canned_reply.create", "canned_reply.delete"} <= actions


def test_a_duplicate_label_is_refused_with_a_message(world):
    _label(world, "Urgente")
    response = world.client_for(world.manager).post(
        "/caixa/ajustes/etiquetas/", {"name": "urgente", "color": "red"}
    )
    assert response.status_code == 200
    assert "Já existe uma etiqueta com esse nome." in response.content.decode()
    assert Label.objects.count() == 1


def test_an_agent_cannot_edit_settings(world):
    response = world.client_for(world.agent).post(
        "/caixa/ajustes/etiquetas/", {"name": "Urgente", "color": "red"}
    )
    assert response.status_code == 403 and not Label.objects.exists()
    html = world.client_for(world.agent).get("/caixa/ajustes/").content.decode()
    assert "Criar etiqueta" not in html


def test_menu_shows_the_settings_entry_to_managers_only(world):
    assert "/caixa/ajustes/" in world.client_for(world.manager).get("/").content.decode()
    assert "/caixa/ajustes/" not in world.client_for(world.agent).get("/").content.decode()


def test_the_handoff_inbox_refreshes_itself(world):
    html = world.client_for(world.viewer).get("/transbordos/").content.decode()
    assert 'id="handoff-inbox" hx-get="/transbordos/" hx-trigger="every 15s"' in html
    assert 'hx-select="#handoff-inbox"' in html


def test_a_contact_name_too_long_is_refused_with_a_message_that_says_why(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, name="Ana")
    response = world.client_for(world.agent).post(
        f"/caixa/contatos/{conversation.contact_id}/editar/", {"name": "A" * 121}, follow=True
    )
    html = response.content.decode()
    assert "flash-error" in html and "120 caracteres" in html
    assert Contact.objects.get(pk=conversation.contact_id).name == "Ana"
    assert not AuditLog.objects.filter(action="contact.update").exists()


def test_a_contact_note_too_long_says_so_rather_than_asking_for_a_note(world):
    conversation = conversation_with(world.channel_a, phone=PHONE)
    response = world.client_for(world.agent).post(
        f"/caixa/contatos/{conversation.contact_id}/notas/", {"body": "x" * 4001}, follow=True
    )
    html = response.content.decode()
    assert "4000 caracteres" in html and "Escreva a nota." not in html
    assert not InternalNote.objects.exists()
