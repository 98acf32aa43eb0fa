"""The inbound turn: guards in order, batching, idempotency, handoff, query budget."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from conversation import dispatch
from conversation.handoff import handoff_return_to_ai
from conversation.models import (
    SILENCED_FOREVER,
    Conversation,
    Handoff,
    LlmCall,
    Message,
    Turn,
)
from conversation.turns import OPT_OUT_CONFIRMATION, run_inbound_turn
from tests import factories
from tests.conftest import simulator_post


def say(channel, text, msg_id, phone="5511988887777", capture=None):
    if capture is None:
        return simulator_post(Client(), channel, text, msg_id=msg_id, phone=phone)
    with capture(execute=True):
        return simulator_post(Client(), channel, text, msg_id=msg_id, phone=phone)


def replies(kind=None):
    qs = Message.objects.filter(direction="outbound").order_by("created_at")
    if kind:
        qs = qs.filter(sender_kind=kind)
    return list(qs.values_list("body", flat=True))


def test_force_human_gets_no_ai_reply_and_lands_in_the_handoff_inbox(
    world, django_capture_on_commit_callbacks
):
    conversation = factories.make_conversation(world.channel_a)
    conversation.contact.force_human = True
    conversation.contact.save()
    say(world.channel_a, "oi, alguém aí?", "fh-1", capture=django_capture_on_commit_callbacks)
    assert replies() == []
    turn = Turn.objects.get()
    assert turn.outcome == "human_owned"
    handoff = Handoff.objects.get(conversation=conversation, status="open")

    handoff_return_to_ai(handoff=handoff, actor=world.agent)
    say(world.channel_a, "oi de novo", "fh-2", capture=django_capture_on_commit_callbacks)
    assert len(replies("ai")) == 1
    conversation.refresh_from_db()
    assert conversation.status == "ai_handling" and conversation.bot_silenced_until is None


def test_silenced_conversation_is_never_answered(world, django_capture_on_commit_callbacks):
    conversation = factories.make_conversation(world.channel_a)
    conversation.bot_silenced_until = timezone.now() + timezone.timedelta(hours=1)
    conversation.save()
    say(world.channel_a, "oi", "s-1", capture=django_capture_on_commit_callbacks)
    assert replies() == []
    assert Turn.objects.get().outcome == "human_owned"


@pytest.mark.parametrize("keyword", ["parar", "SAIR", "Stop", "descadastrar"])
def test_opt_out_marks_contact_and_confirms_once(
    world, keyword, django_capture_on_commit_callbacks
):
    say(world.channel_a, keyword, "o-1", capture=django_capture_on_commit_callbacks)
    say(world.channel_a, keyword, "o-2", capture=django_capture_on_commit_callbacks)
    say(world.channel_a, "qual o horário?", "o-3", capture=django_capture_on_commit_callbacks)
    conversation = Conversation.objects.get()
    assert conversation.contact.opted_out_at is not None
    assert replies() == [OPT_OUT_CONFIRMATION]
    assert list(Turn.objects.order_by("created_at").values_list("outcome", flat=True)) == [
        "opted_out",
        "opted_out",
        "no_reply",
    ]


def test_opt_out_keyword_inside_a_sentence_is_not_an_opt_out(
    world, django_capture_on_commit_callbacks
):
    say(
        world.channel_a,
        "como faço para sair do plano?",
        "o-4",
        capture=django_capture_on_commit_callbacks,
    )
    assert Conversation.objects.get().contact.opted_out_at is None
    assert len(replies("ai")) == 1


def test_handoff_keyword_hands_off_through_the_canonical_path(
    world, django_capture_on_commit_callbacks
):
    say(
        world.channel_a,
        "quero FALAR com atendente!",
        "h-1",
        capture=django_capture_on_commit_callbacks,
    )
    conversation = Conversation.objects.select_related("contact").get()
    assert conversation.status == "pending"
    assert conversation.bot_silenced_until == SILENCED_FOREVER
    assert conversation.contact.force_human is True
    handoff = Handoff.objects.get()
    assert handoff.reason_code == "requested_human"
    assert "quero FALAR com atendente!" in handoff.briefing
    assert Turn.objects.get().outcome == "handoff"
    say(world.channel_a, "e aí?", "h-2", capture=django_capture_on_commit_callbacks)
    assert len(replies()) == 1  # only the handoff notice; the AI stays out


def test_three_lines_typed_within_the_window_get_one_turn_and_one_reply(
    world, settings, django_capture_on_commit_callbacks
):
    settings.TURN_BURST_WINDOW_S = 2
    for i, line in enumerate(["oi", "tudo bem?", "qual o prazo de entrega?"]):
        say(world.channel_a, line, f"b-{i}", capture=django_capture_on_commit_callbacks)
    assert replies() == []  # nothing answered before the window closes
    # The burst closes 2 s after its last line (the claim reads the lines' stored times).
    with (
        time_machine.travel(timezone.now() + timedelta(seconds=3)),
        django_capture_on_commit_callbacks(execute=True),
    ):
        dispatch.run_delayed()
    outcomes = sorted(Turn.objects.values_list("outcome", flat=True))
    assert outcomes == ["merged", "merged", "replied"]
    assert len(replies("ai")) == 1
    answering = Turn.objects.get(outcome="replied")
    assert answering.messages.filter(direction="inbound").count() == 3


def test_redelivered_turn_task_does_not_answer_twice(world, django_capture_on_commit_callbacks):
    say(world.channel_a, "oi", "r-1", capture=django_capture_on_commit_callbacks)
    message = Message.objects.get(direction="inbound")
    with django_capture_on_commit_callbacks(execute=True):
        assert run_inbound_turn(str(message.pk)) is None
    assert len(replies()) == 1 and Turn.objects.count() == 1


def test_vanished_message_ends_the_turn_quietly(db):
    assert run_inbound_turn("00000000-0000-0000-0000-000000000000") is None


def test_channel_without_agent_answers_with_the_generic_assistant(
    world, django_capture_on_commit_callbacks
):
    channel = factories.make_channel(world.org_a, agent=None)
    say(channel, "oi", "g-1", capture=django_capture_on_commit_callbacks)
    turn = Turn.objects.get()
    assert turn.outcome == "replied" and turn.trace["route"] == {"source": "generic"}
    assert "Assistente" in replies("ai")[0]


def test_knowledge_answer_comes_from_the_organizations_own_documents(
    world, django_capture_on_commit_callbacks
):
    factories.make_document(world.org_a, "Prazo de entrega", "Entregamos em até 3 dias úteis.")
    factories.make_document(world.org_b, "Prazo de entrega", "Segredo da outra empresa: 1 dia.")
    say(
        world.channel_a,
        "qual o prazo de entrega?",
        "k-1",
        capture=django_capture_on_commit_callbacks,
    )
    (answer,) = replies("ai")
    assert "3 dias úteis" in answer and "outra empresa" not in answer
    # search, then the answer; the accepted send ends the turn (no third call)
    assert [c.purpose for c in LlmCall.objects.all()] == ["orchestrator"] * 2


def test_turn_trace_never_holds_the_customers_text(world, django_capture_on_commit_callbacks):
    secret = "meu cpf é 123.456.789-00"
    say(world.channel_a, secret, "p-1", capture=django_capture_on_commit_callbacks)
    assert "123.456" not in str(Turn.objects.get().trace)


def test_a_turn_stays_within_its_query_budget(world, django_capture_on_commit_callbacks):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    factories.make_document(world.org_a, "Horário", "Atendemos das 8h às 20h.")
    say(world.channel_a, "oi", "q-0", capture=django_capture_on_commit_callbacks)
    conversation = Conversation.objects.get()
    message = factories.make_message(conversation, "qual o horário de atendimento?")
    with CaptureQueriesContext(connection) as ctx:
        run_inbound_turn(str(message.pk))
    data = [
        q["sql"] for q in ctx.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))
    ]
    # lock conversation (+ already-turned) · unanswered inbound · insert turn · mark batch ·
    # agent config · the conversation's open cases (new agents have cases on, DESIGN §10.3) ·
    # history · knowledge search · insert outbound · ledger bulk insert ·
    # conversation last_message_at · finish turn
    assert len(data) <= 12, "\n".join(data)
    assert len(replies("ai")) == 2
