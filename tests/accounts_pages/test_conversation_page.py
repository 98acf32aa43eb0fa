"""The conversation page reads for a non-developer (issue 16 item 7): names instead of ids,
the routing decision in words, the developer trace behind a toggle, the header naming the
agent that answered last; the simulator marks each reply with its agent and intent."""

from __future__ import annotations

import re

from django.utils import timezone

from conversation.models import Turn
from tests import factories

UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _turn(conversation, agent, **trace):
    return factories.make_turn(
        conversation,
        agent_version=agent.published_version,
        trace={"agent_id": str(agent.pk), **trace},
    )


def _routed(agent, confidence=0.912, stage="local", outcome="classified", intent="cobranca"):
    return {
        "source": "router",
        "router_id": None,
        "outcome": outcome,
        "intent": intent,
        "confidence": confidence,
        "stage": stage,
        "agent_id": str(agent.pk),
        "latency_ms": 3,
    }


def _visible(html: str) -> str:
    """The page without the developer trace (<details>), attributes and scripts."""
    html = re.sub(r'<details class="dev-trace">.*?</details>', "", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


def test_the_routing_decision_reads_as_a_sentence_with_names(world):
    finance = factories.make_agent(world.org_a, "Financeiro")
    doc = factories.make_document(world.org_a, "Segunda via de boleto", "Acesse o portal.")
    conversation = factories.make_conversation(world.channel_a)
    _turn(conversation, finance, route=_routed(finance), knowledge_hits=[[str(doc.pk)]])

    html = world.client_for(world.viewer).get(f"/conversas/{conversation.pk}/").content.decode()

    visible = _visible(html)
    assert "Roteado para Financeiro — intenção “cobranca”, confiança 0,91, local" in visible
    assert "Consultou a base de conhecimento: “Segunda via de boleto”" in visible
    assert not UUID_RE.search(visible), UUID_RE.search(visible)
    assert '<details class="dev-trace">' in html and "Detalhes técnicos" in html


def test_every_routing_outcome_has_words_and_no_raw_code(world):
    finance = factories.make_agent(world.org_a, "Financeiro")
    conversation = factories.make_conversation(world.channel_a)
    for outcome in ("sticky", "reclassified", "fallback", "no_match", "classifier_failed"):
        _turn(conversation, finance, route=_routed(finance, outcome=outcome, stage="llm"))
    visible = _visible(
        world.client_for(world.viewer).get(f"/conversas/{conversation.pk}/").content.decode()
    )
    for words in (
        "Continuou com Financeiro",
        "Mudou de assunto: roteado para Financeiro",
        "agente de reserva Financeiro",
        "Nenhuma intenção reconhecida",
        "O classificador falhou",
        "modelo de linguagem",
    ):
        assert words in visible
    for code in ("classifier_failed", "no_match", "reclassified"):
        assert code not in visible


def test_the_header_names_the_agent_that_answered_last_not_the_channels(world):
    finance = factories.make_agent(world.org_a, "Financeiro")
    conversation = factories.make_conversation(world.channel_a)  # channel agent: Suporte
    first = _turn(conversation, world.agent_a)
    last = _turn(conversation, finance, route=_routed(finance))
    Turn.objects.filter(pk=first.pk).update(created_at=timezone.now() - timezone.timedelta(hours=1))
    assert last

    html = world.client_for(world.viewer).get(f"/conversas/{conversation.pk}/").content.decode()

    header = html.split('<div class="split">')[0]
    assert "respondida por Financeiro" in header and "Suporte" not in header


def test_an_opted_out_contact_shows_as_such_not_with_the_ai(world):
    conversation = factories.make_conversation(world.channel_a)
    conversation.contact.opted_out_at = timezone.now()
    conversation.contact.save(update_fields=["opted_out_at"])
    html = world.client_for(world.viewer).get(f"/conversas/{conversation.pk}/").content.decode()
    state = re.search(r'id="conversation-state">([^<]+)<', html).group(1)
    assert state == "Descadastrado"


def test_names_cost_a_constant_number_of_queries(world, django_assert_max_num_queries):
    client = world.client_for(world.viewer)
    conversation = factories.make_conversation(world.channel_a)

    def add_turns(n):
        for i in range(n):
            agent = factories.make_agent(world.org_a, f"Agente {Turn.objects.count()}")
            doc = factories.make_document(world.org_a, f"Doc {i}", "Texto.")
            _turn(conversation, agent, route=_routed(agent), knowledge_hits=[[str(doc.pk)]])

    add_turns(2)
    client.get(f"/conversas/{conversation.pk}/")
    with django_assert_max_num_queries(30) as before:
        client.get(f"/conversas/{conversation.pk}/")
    add_turns(6)
    # The page's queries plus one for all the documents' titles; agents come with the turns.
    with django_assert_max_num_queries(len(before.captured_queries)):
        page = client.get(f"/conversas/{conversation.pk}/")
    assert "Doc 5" in page.content.decode()


def test_the_simulator_marks_each_reply_with_its_agent_and_intent(world):
    finance = factories.make_agent(world.org_a, "Financeiro")
    phone = "5511977776666"
    conversation = factories.make_conversation(world.channel_a, phone=phone)
    turn = _turn(conversation, finance, route=_routed(finance))
    factories.make_message(conversation, "quero a segunda via", turn=turn)
    factories.make_message(
        conversation,
        "Segue o link.",
        direction="outbound",
        sender_kind="ai",
        status="sent",
        turn=turn,
    )
    client = world.client_for(world.agent)
    html = client.get(
        "/simulador/chat/", {"canal": str(world.channel_a.pk), "telefone": phone}
    ).content.decode()
    tag = re.search(r'<span class="reply-tag">([^<]+)</span>', html)
    assert tag and tag.group(1) == "Financeiro · intenção “cobranca”"
