"""The case-promise gate in the turn's before-send chain (human-cases §6), and its invariant
for any sequence of agent messages."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from django.db import DatabaseError, transaction
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cases import promise_gate
from cases.guardrail import GUARD_CHAIN_VERSION, detect_human_promise
from cases.models import Case
from conversation import turns
from conversation.models import Handoff, Message, Turn
from conversation.turns.guards import HANDOFF_NOTICE
from tests import factories
from tests.cases.conftest import PHONE, Script, enable_cases, end, open_case, say, tool

PROMISE = "Vou verificar com a equipe e te retorno."
OPEN_INPUT = {
    "title": "Verificar pedido",
    "summary": "O cliente pediu.",
    "blocker": "Exige a equipe.",
}


def ai_sent() -> list[str]:
    return list(
        Message.objects.filter(direction="outbound", sender_kind="ai")
        .order_by("created_at")
        .values_list("body", flat=True)
    )


def test_a_promise_with_cases_off_is_replaced_by_the_handoff(
    world, django_capture_on_commit_callbacks
):
    """DESIGN §10.3: with cases off the promise never goes; the turn hands off instead."""
    enable_cases(world.agent_a, enabled=False)
    with Script([tool("send_message", {"text": PROMISE}), end()]) as model:
        say(world.channel_a, "oi", "off-1", django_capture_on_commit_callbacks)

    assert ai_sent() == []
    assert not Case.objects.exists()
    sent = Message.objects.get(direction="outbound")
    assert (sent.sender_kind, sent.body) == ("system", HANDOFF_NOTICE)
    handoff = Handoff.objects.get()
    assert (handoff.reason_code, handoff.status) == ("unbacked_promise", "open")
    turn = Turn.objects.get()
    assert turn.outcome == "handoff"
    assert turn.trace["vetoes"] == ["unbacked_promise"]
    assert turn.trace["handoff"] == "unbacked_promise"
    assert model.remaining == 1  # the tool result ended the loop: no second model step


def test_a_veto_is_recorded_in_the_trace_as_codes_only(
    cases_world, django_capture_on_commit_callbacks
):
    with Script([tool("send_message", {"text": PROMISE}), end()]):
        say(
            cases_world.channel_a,
            "meu acesso caiu, sou a Ana",
            "v-1",
            django_capture_on_commit_callbacks,
        )

    trace = Turn.objects.get().trace
    assert trace["vetoes"] == ["case_promise_without_case"]
    assert trace["gate_chain"] == GUARD_CHAIN_VERSION
    assert trace["promise_rules"] and all(" " not in r for r in trace["promise_rules"])
    assert PROMISE not in str(trace) and "Ana" not in str(trace)
    assert ai_sent() == []  # one veto and the model gave up: nothing promised, nothing sent
    assert not Case.objects.exists()


def test_the_autofallback_case_is_derived_from_the_turn(
    cases_world, django_capture_on_commit_callbacks
):
    with Script(
        [tool("send_message", {"text": PROMISE}), tool("send_message", {"text": PROMISE}, 1), end()]
    ):
        say(
            cases_world.channel_a,
            "quero trocar a titularidade da conta",
            "af-1",
            django_capture_on_commit_callbacks,
        )

    case = Case.objects.get()
    assert case.source == "guardrail_autofallback"
    assert "quero trocar a titularidade da conta" in case.title
    assert PROMISE in case.summary
    assert case.events.get().metadata["source"] == "guardrail_autofallback"
    assert Turn.objects.get().trace["case_autofallback"] == str(case.pk)
    assert ai_sent() == [PROMISE]


def test_no_autofallback_when_the_lead_already_has_an_open_case(
    cases_world, django_capture_on_commit_callbacks
):
    conversation = factories.make_conversation(cases_world.channel_a, phone=PHONE)
    existing = open_case(conversation)
    with Script([tool("send_message", {"text": PROMISE}), end()]):
        say(cases_world.channel_a, "novidades?", "dd-1", django_capture_on_commit_callbacks)

    assert list(Case.objects.values_list("pk", flat=True)) == [existing.pk]
    assert ai_sent() == [PROMISE]


def test_an_open_case_of_the_lead_on_another_channel_does_not_cover_the_promise(
    cases_world, django_capture_on_commit_callbacks
):
    """DESIGN §10.3: only an open case of the same conversation covers a promise."""
    other = factories.make_channel(cases_world.org_a, agent=cases_world.agent_a)
    elsewhere = open_case(factories.make_conversation(other, phone=PHONE))
    with Script([tool("send_message", {"text": PROMISE}), end()]):
        say(cases_world.channel_a, "novidades?", "dd-2", django_capture_on_commit_callbacks)

    assert ai_sent() == []
    assert Case.objects.get() == elsewhere
    assert Turn.objects.get().trace["vetoes"] == ["case_promise_without_case"]


def test_when_the_autofallback_cannot_open_a_case_the_promise_is_not_sent(
    cases_world, django_capture_on_commit_callbacks, monkeypatch
):
    def broken(**kwargs: Any) -> Case:
        raise DatabaseError("disk full")

    monkeypatch.setattr(promise_gate.services, "case_open", broken)
    with Script(
        [tool("send_message", {"text": PROMISE}), tool("send_message", {"text": PROMISE}, 1), end()]
    ) as model:
        say(cases_world.channel_a, "oi", "fail-1", django_capture_on_commit_callbacks)

    assert ai_sent() == []
    assert model.requests[2].messages[-1].content[0].is_error


# --- the invariant, for any sequence of agent actions ------------------------------------

ACTIONS = st.lists(
    st.one_of(
        st.sampled_from(
            [
                ("send", PROMISE),
                ("send", "Já repassei pro time, blz?"),
                ("send", "Um atendente vai entrar em contato com você em breve."),
                ("send", "Assim que tiver uma resposta te aviso 😊"),
                ("send", "Vou verificar aqui na sua fatura."),
                ("send", "Estou à disposição!"),
                ("send", "Quer que eu encaminhe para a equipe?"),
                ("open", ""),
            ]
        ),
        st.text(min_size=1, max_size=80).map(lambda t: ("send", t)),
    ),
    min_size=1,
    max_size=7,
)
_phones = itertools.count(5511970000000)


def as_sent(text: str) -> str:
    """What a customer can receive of ``text``: no NUL, lone surrogates as U+FFFD (neither
    can be stored in PostgreSQL nor encoded for the provider), trimmed."""
    return re.sub("[\ud800-\udfff]", "\ufffd", text.replace("\x00", "")).strip()


@pytest.fixture
def roomy_world(world: Any) -> Any:
    enable_cases(world.agent_a, max_steps=12)  # room for every scripted action
    return world


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(actions=ACTIONS, has_case=st.booleans())
@example(actions=[("send", "\x00"), ("send", "o\x00i \ud800")], has_case=True)
def test_no_promise_is_ever_sent_while_the_lead_has_no_case(roomy_world, actions, has_case):
    script = []
    for n, (kind, text) in enumerate(actions):
        if kind == "open":
            script.append(tool("open_human_case", OPEN_INPUT, n))
        elif as_sent(text):
            script.append(tool("send_message", {"text": text}, n))
    script.append(end())
    with transaction.atomic():
        conversation = factories.make_conversation(roomy_world.channel_a, phone=str(next(_phones)))
        if has_case:
            open_case(conversation)
        inbound = factories.make_message(conversation, "preciso de ajuda")
        with Script(script):
            turns.run_inbound_turn(str(inbound.pk))
        sent = Message.objects.filter(
            conversation=conversation, direction="outbound", sender_kind="ai"
        ).order_by("created_at")
        if has_case:  # a covering case: the first message goes, and ends the turn
            # NUL and lone surrogates never reach a customer (nor PostgreSQL).
            wanted = [as_sent(t) for k, t in actions if k == "send"]
            wanted = [t for t in wanted if t][:1]
            assert [m.body for m in sent] == wanted
        for message in sent:
            if detect_human_promise(message.body):
                assert Case.objects.filter(
                    lead=conversation.contact, created_at__lte=message.created_at
                ).exists(), message.body
        transaction.set_rollback(True)
