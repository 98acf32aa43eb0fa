"""Two members acting on the same conversation from pages that were both up to date when
they opened: the second click never silently undoes or steals what the first one did."""

from __future__ import annotations

from accounts.models import AuditLog
from conversation import handoff as handoff_service
from conversation.handoff import perform_human_handoff
from conversation.models import Conversation, Handoff
from inbox import services
from inbox.models import ConversationLabel, Label
from tests.inbox.conftest import conversation_with, membership_of

PHONE = "5511944443333"


def _panel(response) -> str:
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="inbox-panel"' in html
    return html


# --- "Atribuir a mim" and the assignee picker ---------------------------------------------


def test_assign_me_refuses_a_conversation_a_colleague_took_meanwhile(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    world.manager.first_name = "Carla"
    world.manager.save(update_fields=["first_name"])
    # Both panels showed "Equipe (sem responsável)"; the manager clicked first.
    world.client_for(world.manager).post(
        f"/caixa/conversas/{conversation.pk}/para-mim/", {"atual": ""}, HTTP_HX_REQUEST="true"
    )

    response = world.client_for(world.agent).post(
        f"/caixa/conversas/{conversation.pk}/para-mim/", {"atual": ""}, HTTP_HX_REQUEST="true"
    )

    html = _panel(response)
    assert Conversation.objects.get(pk=conversation.pk).assigned_to == membership_of(world.manager)
    assert "Carla assumiu esta conversa antes" in html
    assert AuditLog.objects.filter(action="conversation.assign").count() == 1


def test_assign_me_takes_over_from_the_colleague_the_page_showed(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    manager = membership_of(world.manager)
    services.conversation_assign(conversation=conversation, assignee=manager, actor=world.admin)

    world.client_for(world.agent).post(
        f"/caixa/conversas/{conversation.pk}/para-mim/",
        {"atual": str(manager.pk)},
        HTTP_HX_REQUEST="true",
    )

    assert Conversation.objects.get(pk=conversation.pk).assigned_to == membership_of(world.agent)


def test_the_assignee_picker_refuses_when_someone_changed_it_meanwhile(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    manager, agent = membership_of(world.manager), membership_of(world.agent)
    services.conversation_assign(conversation=conversation, assignee=manager, actor=world.admin)

    # The admin's panel still shows "Equipe": they pick the agent.
    response = world.client_for(world.admin).post(
        f"/caixa/conversas/{conversation.pk}/responsavel/",
        {"responsavel": str(agent.pk), "atual": ""},
        HTTP_HX_REQUEST="true",
    )

    assert "assumiu esta conversa antes" in _panel(response)
    assert Conversation.objects.get(pk=conversation.pk).assigned_to == manager


def test_the_panel_posts_the_assignee_it_shows(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    manager = membership_of(world.manager)
    services.conversation_assign(conversation=conversation, assignee=manager, actor=world.admin)
    html = _panel(world.client_for(world.agent).get(f"/caixa/conversas/{conversation.pk}/"))
    assert html.count(f'name="atual" value="{manager.pk}"') == 2  # the picker and "a mim"


# --- taking over ---------------------------------------------------------------------------


def test_a_second_take_over_keeps_the_conversation_with_who_took_it_first(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    url = f"/conversas/{conversation.pk}/assumir/"
    world.client_for(world.manager).post(url)

    response = world.client_for(world.agent).post(url, follow=True)

    conversation.refresh_from_db()
    assert conversation.assigned_to == membership_of(world.manager)
    handoff = Handoff.objects.get(conversation=conversation)
    assert handoff.reason == "Assumida pela equipe."  # not appended a second time
    assert response.redirect_chain[-1][0] == f"/transbordos/{handoff.pk}/"
    assert "já assumiu esta conversa" in response.content.decode()
    assert AuditLog.objects.filter(action="handoff.perform").count() == 1


def test_a_double_click_on_take_over_takes_it_once(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    client = world.client_for(world.agent)
    url = f"/conversas/{conversation.pk}/assumir/"
    client.post(url)
    client.post(url)

    handoff = Handoff.objects.get(conversation=conversation)
    assert handoff.reason == "Assumida pela equipe."
    assert Conversation.objects.get(pk=conversation.pk).assigned_to == membership_of(world.agent)
    assert AuditLog.objects.filter(action="handoff.perform").count() == 1


def test_taking_over_a_handoff_waiting_for_the_team_makes_it_mine(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    perform_human_handoff(conversation=conversation, reason_code="requested_human")

    world.client_for(world.agent).post(f"/conversas/{conversation.pk}/assumir/")

    assert Conversation.objects.get(pk=conversation.pk).assigned_to == membership_of(world.agent)
    assert Handoff.objects.filter(conversation=conversation).count() == 1


# --- giving back to the AI -----------------------------------------------------------------


def test_returning_a_handoff_twice_at_once_returns_it_once(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    handoff = perform_human_handoff(conversation=conversation, reason_code="requested_human")
    # Two members' requests, each with the handoff as it was when their request read it.
    first, second = Handoff.objects.get(pk=handoff.pk), Handoff.objects.get(pk=handoff.pk)

    handoff_service.handoff_return_to_ai(handoff=first, actor=world.agent)
    handoff_service.handoff_return_to_ai(handoff=second, actor=world.manager)

    row = AuditLog.objects.get(action="handoff.return_to_ai")
    assert row.actor == world.agent
    assert Handoff.objects.get(pk=handoff.pk).returned_by == world.agent


def test_a_late_return_does_not_reopen_a_conversation_resolved_meanwhile(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    handoff = perform_human_handoff(conversation=conversation, reason_code="requested_human")
    late = Handoff.objects.select_related("conversation__contact").get(pk=handoff.pk)
    services.conversation_resolve(
        conversation=Conversation.objects.get(pk=conversation.pk), actor=world.manager
    )

    handoff_service.handoff_return_to_ai(handoff=late, actor=world.agent)

    assert Conversation.objects.get(pk=conversation.pk).status == "closed"


# --- labels --------------------------------------------------------------------------------


def test_a_label_two_members_put_on_at_once_stays_on(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    label = Label.objects.create(organization=world.org_a, name="Urgente", color="red")
    url = f"/caixa/conversas/{conversation.pk}/etiquetas/{label.pk}/"
    # Both panels showed the label off: each button asks to put it on.
    world.client_for(world.agent).post(url, {"ligar": "1"}, HTTP_HX_REQUEST="true")
    world.client_for(world.manager).post(url, {"ligar": "1"}, HTTP_HX_REQUEST="true")

    assert ConversationLabel.objects.filter(conversation=conversation, label=label).exists()
    assert AuditLog.objects.filter(action="conversation.label_add").count() == 1
    assert not AuditLog.objects.filter(action="conversation.label_remove").exists()


def test_a_label_button_asks_for_the_state_it_shows_the_opposite_of(world):
    conversation = conversation_with(world.channel_a, phone=PHONE, text="oi")
    label = Label.objects.create(organization=world.org_a, name="Urgente", color="red")
    client = world.client_for(world.agent)
    html = _panel(client.get(f"/caixa/conversas/{conversation.pk}/"))
    assert 'name="ligar" value="1"' in html
    html = _panel(
        client.post(
            f"/caixa/conversas/{conversation.pk}/etiquetas/{label.pk}/",
            {"ligar": "1"},
            HTTP_HX_REQUEST="true",
        )
    )
    assert 'name="ligar" value="0"' in html


# --- the handoff inbox says who is on each one ---------------------------------------------


def test_the_handoff_inbox_says_who_took_each_handoff(world, django_assert_num_queries):
    world.manager.first_name = "Carla"
    world.manager.save(update_fields=["first_name"])
    taken = conversation_with(world.channel_a, phone=PHONE, text="oi")
    services.conversation_take_over(
        conversation=taken, assignee=membership_of(world.manager), actor=world.manager
    )
    waiting = conversation_with(world.channel_a, phone="5511944443334", text="oi")
    perform_human_handoff(conversation=waiting, reason_code="requested_human")
    client = world.client_for(world.agent)
    client.get("/transbordos/")

    # The same seven queries as without the names (tests/conversation/test_views_handoffs).
    with django_assert_num_queries(7):
        html = client.get("/transbordos/").content.decode()

    rows = {
        h.conversation_id: html.split(f"/transbordos/{h.pk}/")[1].split("</li>")[0]
        for h in Handoff.objects.all()
    }
    assert "com Carla" in rows[taken.pk]
    assert "Aguardando a equipe" in rows[waiting.pk]
