"""LGPD retention reaches every copy of a message's text, not only the message row: an
organization that keeps messages for N days must not keep their words longer in the case
that quoted them (the conversation snapshot taken when the case opened, the customer's
answer and the question the AI relayed, both copied onto the case's timeline)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import AuditLog
from cases import services
from cases.models import Case, CaseEvent, CaseEventKind
from conversation.models import Message
from conversation.privacy import RETAINED_TEXT, retention_apply
from tests.cases.conftest import enable_cases, open_case, say
from tests.privacy.scan import tenant_text

ASKED = "Qwertz pergunta do pedido"  # the team's question, relayed to the customer
SAID = "Plimbo meu pedido e o 8842 da Rua Jacarandá"  # the customer's first message
ANSWERED = "Vorpal o numero certo e 99173"  # the customer's answer to the relayed question


@pytest.fixture
def quoted_case(world: Any, django_capture_on_commit_callbacks: Any) -> Case:
    """A case that quoted the customer: its snapshot holds their first message, its
    timeline the relayed question and their answer (each through the product's own path)."""
    enable_cases(world.agent_a)
    say(world.channel_a, SAID, "r-1", django_capture_on_commit_callbacks)
    conversation = Message.objects.get(provider_message_id="r-1").conversation
    case = open_case(conversation)
    with django_capture_on_commit_callbacks(execute=True):
        services.case_answer(case=case, actor=world.agent, action="need_lead_info", text=ASKED)
    case.refresh_from_db()
    services.case_provide_update(case=case, conversation=conversation, info=ANSWERED)
    return case


def test_retention_erases_the_words_a_case_copied_from_old_messages(world, quoted_case):
    world.org_a.message_retention_days = 30
    world.org_a.save()
    text = tenant_text(world.org_a)
    assert SAID in json.dumps(quoted_case.context_snapshot, ensure_ascii=False)
    assert CaseEvent.objects.filter(case=quoted_case, kind=CaseEventKind.LEAD_ASKED).exists()
    assert ANSWERED in text and SAID in text
    messages = Message.objects.count()

    later = timezone.now() + timedelta(days=40)
    assert retention_apply(organization=world.org_a, now=later) >= 1

    text = tenant_text(world.org_a)
    for words in (SAID, ANSWERED, "Rua Jacarandá", "Plimbo", "Vorpal"):
        assert words not in text, words
    assert Message.objects.count() == messages  # rows and counts stay
    case = Case.objects.get(pk=quoted_case.pk)
    # The snapshot keeps its shape (who spoke, when), without the words.
    assert [m["body"] for m in case.context_snapshot["messages"]] == [RETAINED_TEXT] * len(
        case.context_snapshot["messages"]
    )
    asked = CaseEvent.objects.get(case=case, kind=CaseEventKind.LEAD_ASKED)
    assert asked.body == RETAINED_TEXT
    audit = AuditLog.objects.get(action="retention.apply")
    assert audit.diff["case_copies"] >= 3


def test_retention_keeps_the_case_copies_of_recent_messages(world, quoted_case):
    world.org_a.message_retention_days = 30
    world.org_a.save()
    retention_apply(organization=world.org_a, now=timezone.now() + timedelta(days=10))
    case = Case.objects.get(pk=quoted_case.pk)
    assert SAID in json.dumps(case.context_snapshot, ensure_ascii=False)
    provided = CaseEvent.objects.get(case=case, kind=CaseEventKind.LEAD_PROVIDED)
    assert provided.body == ANSWERED


def test_a_second_retention_run_finds_no_case_copy_left(world, quoted_case):
    world.org_a.message_retention_days = 30
    world.org_a.save()
    later = timezone.now() + timedelta(days=40)
    retention_apply(organization=world.org_a, now=later)
    retention_apply(organization=world.org_a, now=later)
    assert AuditLog.objects.filter(action="retention.apply").count() == 1


def test_retention_clears_the_runtime_state_of_a_conversation_silent_past_it(world):
    """The runtime's serialized state quotes what it last asked (``prompt_text``, the text
    of a message it sent) and the customer's line: once every message of the conversation
    is past the retention, that copy goes too."""
    from conversation.models import Conversation
    from tests import factories

    world.org_a.message_retention_days = 30
    world.org_a.save()
    asked = "Confirma o cancelamento do Gizmotron na linha 11 98765-4321?"
    state = {"msisdn": "5511987654321", "pending_confirmation": {"prompt_text": asked}}
    silent = factories.make_conversation(world.channel_a, phone="5511900000001")
    active = factories.make_conversation(world.channel_a, phone="5511900000002")
    for conversation, days in ((silent, 40), (active, 5)):
        factories.make_message(conversation, asked, direction="outbound", sender_kind="ai")
        Message.objects.filter(conversation=conversation).update(
            created_at=timezone.now() - timedelta(days=days)
        )
        Conversation.objects.filter(pk=conversation.pk).update(
            runtime_state=state, last_message_at=timezone.now() - timedelta(days=days)
        )

    retention_apply(organization=world.org_a)

    assert "Gizmotron" not in json.dumps(
        Conversation.objects.get(pk=silent.pk).runtime_state, ensure_ascii=False
    )
    assert Conversation.objects.get(pk=active.pk).runtime_state == state
    assert Message.objects.get(conversation=active).body == asked


def test_retention_erases_the_link_and_name_of_a_file_sent_without_a_caption(world):
    """A file sent by its link with no caption has no text and no stored file, only its
    link and name: those are the message's media, and go with the retention too."""
    from conversation.outbox.media import outbound_media_enqueue
    from tests import factories

    world.org_a.message_retention_days = 30
    world.org_a.save()
    conversation = factories.make_conversation(world.channel_a)
    message = outbound_media_enqueue(
        conversation=conversation,
        kind="document",
        url="https://files.example.com/laudo-Genoveva-Quiteria.pdf",
        filename="laudo-Genoveva-Quiteria.pdf",
        sender_kind="human",
        actor=world.agent,
    )
    Message.objects.filter(pk=message.pk).update(
        status="sent", created_at=timezone.now() - timedelta(days=40)
    )

    retention_apply(organization=world.org_a)

    message.refresh_from_db()
    assert (message.media_url, message.media_filename) == ("", "")
    assert "Genoveva" not in tenant_text(world.org_a)
