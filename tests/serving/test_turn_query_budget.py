"""The SQL a turn costs is pinned (issue 14 item 4): a turn is claim (lock, unanswered
lines, turn insert, lines → turn), decide (routing, open cases, history, knowledge) and
finish (turn update, reply insert, ledger insert, conversation update) — 12 queries. The
promise gate adds one (does the conversation have an open case?) only when its local stages
flag the reply; bench/turns.py prints the same counts."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from conversation.models import Message, Turn
from conversation.turns import run_inbound_turn
from tests import factories

pytestmark = pytest.mark.django_db

TURN_BUDGET = 12
GATED_TURN_BUDGET = 13
TEXTS = ("oi", "qual o prazo de entrega?", "aceitam pix?", "qual o horário de atendimento?")


def _queries_of_one_turn(conversation, text: str) -> list[str]:
    message = factories.make_message(conversation, text)
    # The outer atomic holds the delivery (on commit) outside the capture: the turn alone.
    with transaction.atomic(), CaptureQueriesContext(connection) as captured:
        run_inbound_turn(str(message.pk))
    statements = [q["sql"] for q in captured.captured_queries]
    return [s for s in statements if not s.startswith(("SAVEPOINT", "RELEASE", "BEGIN"))]


@pytest.mark.parametrize("text", TEXTS)
def test_a_turn_stays_within_its_query_budget(world, settings, text):
    settings.TURN_BURST_WINDOW_S = 0
    factories.make_document(world.org_a, "Entrega", "O prazo de entrega é de 3 dias úteis.")
    conversation = factories.make_conversation(world.channel_a)
    _queries_of_one_turn(conversation, "oi")  # the conversation's first turn: warm
    queries = _queries_of_one_turn(conversation, text)
    gated = any('FROM "cases_case"' in q and "SELECT 1 AS" in q for q in queries)
    budget = GATED_TURN_BUDGET if gated else TURN_BUDGET
    assert len(queries) <= budget, "\n".join(queries)
    turn = Turn.objects.order_by("-created_at").first()
    assert turn is not None and turn.outcome == "replied"
    assert Message.objects.filter(turn=turn, direction="outbound").exists()
