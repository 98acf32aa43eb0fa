"""The conversation list: views (Minhas / Sem responsável / Todas), search by contact and
message text, filters, unread markers, labels, the polled fragment and its query count."""

from __future__ import annotations

from django.utils import timezone

from conversation.models import Conversation
from inbox import markers
from inbox.models import ConversationLabel, Label
from tests import factories
from tests.inbox.conftest import conversation_with, membership_of


def _html(world, user, query=""):
    response = world.client_for(user).get(f"/{query}")
    assert response.status_code == 200
    return response.content.decode()


def _label(world, conversation, name="Financeiro", color="green"):
    label, _ = Label.objects.get_or_create(organization=world.org_a, name=name, color=color)
    ConversationLabel.objects.create(
        organization=world.org_a, conversation=conversation, label=label
    )
    return label


def test_views_split_mine_unassigned_and_all(world):
    me = membership_of(world.agent)
    mine = conversation_with(world.channel_a, phone="5511900000001", assigned_to=me)
    nobody = conversation_with(world.channel_a, phone="5511900000002")
    theirs = conversation_with(
        world.channel_a, phone="5511900000003", assigned_to=membership_of(world.manager)
    )

    assert {mine.pk} == _listed(world, world.agent, "?ver=minhas")
    assert {nobody.pk} == _listed(world, world.agent, "?ver=sem-responsavel")
    assert {mine.pk, nobody.pk, theirs.pk} == _listed(world, world.agent, "?ver=todas")


def _listed(world, user, query):
    html = _html(world, user, query)
    return {c.pk for c in Conversation.objects.all() if f"conversation-row-{c.pk}" in html}


def test_search_finds_a_contact_by_name_and_by_phone(world):
    ana = conversation_with(world.channel_a, phone="5511912345678", name="Ana Souza")
    bia = conversation_with(world.channel_a, phone="5511987654321", name="Bia Lima")
    assert _listed(world, world.viewer, "?q=souza") == {ana.pk}
    assert _listed(world, world.viewer, "?q=87654") == {bia.pk}
    assert _listed(world, world.viewer, "?q=%2855%29+11+98765-4321") == {bia.pk}


def test_search_finds_a_conversation_by_a_word_of_a_message(world):
    hit = conversation_with(world.channel_a, phone="5511900000001", text="meu boleto venceu")
    conversation_with(world.channel_a, phone="5511900000002", text="quero trocar o tamanho")
    assert _listed(world, world.viewer, "?q=boleto") == {hit.pk}


def test_search_never_finds_another_orgs_messages(world):
    conversation_with(world.channel_b, phone="5511900000001", text="boleto secreto")
    assert _listed(world, world.viewer, "?q=boleto") == set()
    assert "Nenhuma conversa encontrada" in _html(world, world.viewer, "?q=boleto")


def test_filters_by_channel_agent_assignee_and_label(world):
    other_agent = factories.make_agent(world.org_a, "Financeiro")
    other_channel = factories.make_channel(world.org_a, agent=other_agent)
    a = conversation_with(world.channel_a, phone="5511900000001")
    b = conversation_with(other_channel, phone="5511900000002")
    routed = conversation_with(world.channel_a, phone="5511900000003", active_agent=other_agent)
    me = membership_of(world.agent)
    Conversation.objects.filter(pk=a.pk).update(assigned_to=me)
    label = _label(world, b)

    assert _listed(world, world.viewer, f"?canal={other_channel.pk}") == {b.pk}
    assert _listed(world, world.viewer, f"?agente={other_agent.pk}") == {b.pk, routed.pk}
    assert _listed(world, world.viewer, f"?agente={world.agent_a.pk}") == {a.pk}
    assert _listed(world, world.viewer, f"?responsavel={me.pk}") == {a.pk}
    assert _listed(world, world.viewer, f"?etiqueta={label.pk}") == {b.pk}


def test_a_filter_naming_another_orgs_row_is_ignored(world):
    conversation_with(world.channel_a, phone="5511900000001")
    html = _html(world, world.viewer, f"?canal={world.channel_b.pk}&q=")
    assert "5511900000001" in html


def test_unread_marker_is_per_member(world):
    conversation = conversation_with(world.channel_a, phone="5511900000001", text="oi")
    markers.conversation_mark_read(conversation=conversation, membership=membership_of(world.agent))
    assert "row-unread" not in _html(world, world.agent)
    assert "row-unread" in _html(world, world.viewer)


def test_a_new_customer_line_after_reading_is_unread_again(world):
    conversation = conversation_with(world.channel_a, phone="5511900000001", text="oi")
    earlier = timezone.now() - timezone.timedelta(minutes=5)
    markers.conversation_mark_read(
        conversation=conversation, membership=membership_of(world.agent), now=earlier
    )
    assert "row-unread" in _html(world, world.agent)


def test_opening_the_panel_marks_the_conversation_read(world):
    conversation = conversation_with(world.channel_a, phone="5511900000001", text="oi")
    client = world.client_for(world.agent)
    assert "row-unread" in client.get("/").content.decode()
    assert client.get(f"/caixa/conversas/{conversation.pk}/").status_code == 200
    assert "row-unread" not in client.get("/").content.decode()


def test_rows_show_labels_assignee_and_the_answering_agent(world):
    conversation = conversation_with(
        world.channel_a, phone="5511900000001", assigned_to=membership_of(world.manager)
    )
    _label(world, conversation, "Urgente", "red")
    html = _html(world, world.viewer)
    assert 'class="label label-red">Urgente<' in html
    assert world.manager.get_username() in html
    assert world.agent_a.name in html


def test_an_opted_out_contact_shows_as_such(world):
    conversation = conversation_with(world.channel_a, phone="5511900000001")
    conversation.contact.opted_out_at = timezone.now()
    conversation.contact.save(update_fields=["opted_out_at"])
    html = _html(world, world.viewer)
    assert "Descadastrado" in html and "Com a IA" not in html.split("conversation-list")[1]


def test_the_poll_returns_only_the_list_fragment(world):
    conversation_with(world.channel_a, phone="5511900000001")
    response = world.client_for(world.viewer).get(
        "/?ver=todas", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="conversation-list"
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="conversation-list"')
    assert 'hx-trigger="every 20s"' in html and "<nav" not in html.split("pagination")[0]


def test_list_query_count_is_constant(world, django_assert_num_queries):
    """session · user · membership (middleware) · filter choices (channels, agents,
    members, labels) · paginator count · nav handoff badge · memberships (context
    processor) · the page (contact, channel, agents, assignee, ``seen``) · the page's labels
    (one prefetch) = 12. Searching adds no query: the text match is a subquery."""
    client = world.client_for(world.viewer)
    for i in range(3):
        c = conversation_with(world.channel_a, phone=f"551190000000{i}", text="boleto")
        _label(world, c, f"L{i}")
    client.get("/")  # warm-up: content types, template loading
    with django_assert_num_queries(12) as first:
        client.get("/?q=boleto")
    for i in range(3, 15):
        c = conversation_with(
            world.channel_a,
            phone=f"55119000000{i:02d}",
            text="boleto",
            assigned_to=membership_of(world.agent),
        )
        _label(world, c, f"L{i}")
    with django_assert_num_queries(12) as second:
        response = client.get("/?q=boleto")
    assert len(first.captured_queries) == len(second.captured_queries)
    assert response.content.decode().count('id="conversation-row-') == 15
