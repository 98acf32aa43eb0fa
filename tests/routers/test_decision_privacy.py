"""The decision log never holds the customer's text (DESIGN §3, §6; intent-router Task 1):
after a routed turn that Claude decided — the path that also leaves a suggestion and a
model call — the decision row, the turn's routing trace, the audit rows and the router's
log lines carry ids and codes only. Only the suggestion keeps the phrase, stripped of
personal data, for an admin to judge."""

from __future__ import annotations

import json
import logging

from django.forms.models import model_to_dict
from django.test import Client

from accounts.models import AuditLog
from conversation.models import Message, Turn
from routers.models import RouterDecision, RouterSuggestion
from tests import factories
from tests.conftest import simulator_post
from tests.fakes.anthropic_bodies import tool_use_response
from tests.routers.factories import SUPORTE, VENDAS, make_router

TEXT = "olá, queria tirar uma dúvida sobre o xilofone azul, meu cpf é 123.456.789-00"


def test_a_routed_turn_leaves_no_customer_text_outside_the_suggestion(
    world, claude, caplog, django_capture_on_commit_callbacks
):
    vendas = factories.make_agent(world.org_a, "Vendas")
    channel = factories.make_channel(world.org_a, agent=world.agent_a)
    make_router(channel, [(vendas, VENDAS), (world.agent_a, SUPORTE)])
    claude.enqueue_json(
        200, tool_use_response("classify_intent", {"intent": "vendas", "confidence": 0.93})
    )

    with caplog.at_level(logging.DEBUG), django_capture_on_commit_callbacks(execute=True):
        simulator_post(Client(), channel, TEXT, msg_id="privacy-1")

    decision = RouterDecision.objects.get()
    assert (decision.stage, decision.intent_name) == ("llm", "vendas")  # Claude decided it
    turn = Turn.objects.get(trigger_key=Message.objects.get(provider_message_id="privacy-1").pk)
    stored = [
        json.dumps(model_to_dict(decision), default=str),
        json.dumps(turn.trace.get("route"), default=str),
        *(json.dumps(a.diff, default=str) for a in AuditLog.objects.all()),
        *(
            r.getMessage() + json.dumps(r.__dict__, default=str)
            for r in caplog.records
            if r.name.startswith("routers")
        ),
    ]
    for blob in stored:
        assert "xilofone" not in blob and "123.456.789" not in blob
    assert RouterSuggestion.objects.get().text.endswith("meu cpf é [cpf]")
