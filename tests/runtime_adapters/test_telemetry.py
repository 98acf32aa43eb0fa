"""The runtime's outcome telemetry: the fallback rate per agent and organization over a
period (``runtime_outcomes``), per conversation, and the trace in pt-BR words."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, get_args

import pytest
from django.test import Client

from conversation.models import Conversation, RuntimeAction, Turn
from conversation.runtime import mutations
from conversation.runtime.intent_extractor import IntentKind
from conversation.runtime.policy_engine import DecisionKind
from conversation.runtime_adapters.telemetry import (
    OutcomeCounts,
    outcomes_of_traces,
    runtime_outcomes,
)
from conversation.runtime_adapters.trace_view import (
    DECISION_LABELS,
    HOOK_LABELS,
    INTENT_LABELS,
    REASON_LABELS,
    fallback_reason_label,
    runtime_sentence,
    runtime_trace_view,
)
from tests import factories

from .conftest import Customer, make_desk

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)

HANDLED = {"mode": "on", "handled": True, "decision": "ask_confirmation", "rule": "5"}
UNCOVERED = {"mode": "on", "handled": False, "fallback_reason": "uncovered_intent"}
NO_INVOICE = {"mode": "on", "handled": False, "fallback_reason": "invoice_unavailable"}
ERROR = {"mode": "on", "handled": False, "error": "runtime_error"}
SKIPPED = {"mode": "on", "skipped": "kill_switch"}
SHADOW_YES = {"mode": "shadow", "handled": True}
SHADOW_NO = {"mode": "shadow", "handled": False, "fallback_reason": "uncovered_intent"}
EXECUTED = {
    "mode": "on",
    "handled": True,
    "decision": "execute_action_queue",
    "actions": [
        {"tool": "cancelar_vas_single", "outcome": "success"},
        {"tool": "vas_strategic", "outcome": "failure"},
    ],
}


def add_turn(conversation: Conversation, agent: Any, runtime: dict[str, Any] | None, at: datetime):
    turn = Turn.objects.create(
        organization=conversation.organization,
        conversation=conversation,
        trigger_kind="inbound_message",
        trigger_key=f"k-{Turn.objects.count()}-{conversation.pk}",
        agent_version=agent.published_version,
        status="done",
        trace={"runtime": runtime} if runtime is not None else {"guard": "human_owned"},
    )
    Turn.objects.filter(pk=turn.pk).update(created_at=at)
    for n, action in enumerate((runtime or {}).get("actions") or []):
        RuntimeAction.objects.create(
            organization=conversation.organization,
            conversation=conversation,
            turn=turn,
            backend="demo",
            tool=action["tool"],
            items=["Vivo Play VOD"],
            msisdns=["11987654321"],
            outcome=action["outcome"],
            sequence=n,
        )
    return turn


@pytest.fixture
def two_agents(db: Any) -> dict[str, Any]:
    org = factories.make_org("Telemetria")
    fatura = factories.make_agent(org, "Fatura")
    vendas = factories.make_agent(org, "Vendas")
    c1 = factories.make_conversation(factories.make_channel(org, agent=fatura), phone="551101")
    c2 = factories.make_conversation(factories.make_channel(org, agent=vendas), phone="551102")
    traces = {
        "fatura": [HANDLED, HANDLED, EXECUTED, UNCOVERED, UNCOVERED, NO_INVOICE, ERROR, SKIPPED],
        "vendas": [HANDLED, UNCOVERED, SHADOW_YES, SHADOW_NO, None],
    }
    for i, rt in enumerate(traces["fatura"]):
        add_turn(c1, fatura, rt, T0 + timedelta(minutes=i))
    for i, rt in enumerate(traces["vendas"]):
        add_turn(c2, vendas, rt, T0 + timedelta(minutes=i))
    # Outside the period, and another organization's turns: never counted.
    add_turn(c1, fatura, UNCOVERED, T0 - timedelta(days=1))
    add_turn(c1, fatura, UNCOVERED, T0 + timedelta(days=1))
    other = factories.make_org("Outra")
    other_agent = factories.make_agent(other, "Fatura")
    oc = factories.make_conversation(factories.make_channel(other, agent=other_agent))
    add_turn(oc, other_agent, UNCOVERED, T0)
    return {"org": org, "fatura": fatura, "vendas": vendas, "traces": traces}


def test_runtime_outcomes_aggregates_the_fallback_rate_per_agent_over_the_period(
    two_agents, django_assert_max_num_queries
):
    org = two_agents["org"]
    with django_assert_max_num_queries(3):
        report = runtime_outcomes(org.pk, T0, T0 + timedelta(hours=1))

    fatura, vendas = report.by_agent  # busiest first
    assert (fatura.agent_id, fatura.agent_name) == (two_agents["fatura"].pk, "Fatura")
    assert fatura.counts == OutcomeCounts(
        turns=8,
        handled=3,
        fallbacks=4,
        errors=1,
        skipped=1,
        actions=1,  # the failed strategic call is not an executed action
        reasons=(("uncovered_intent", 2), ("invoice_unavailable", 1), ("runtime_error", 1)),
    )
    assert fatura.counts.fallback_rate == pytest.approx(4 / 7)
    assert fatura.counts.fallback_percent == 57
    assert vendas.counts.shadow == 2 and vendas.counts.shadow_handled == 1
    assert vendas.counts.fallback_rate == pytest.approx(1 / 2)
    assert vendas.counts.shadow_fallback_rate == pytest.approx(1 / 2)
    total = report.total
    assert (total.turns, total.handled, total.fallbacks, total.actions) == (12, 4, 5, 1)
    assert total.reasons[0] == ("uncovered_intent", 3)
    assert total.fallback_rate == pytest.approx(5 / 9)


def test_runtime_outcomes_narrows_to_one_agent(two_agents):
    report = runtime_outcomes(
        two_agents["org"].pk, T0, T0 + timedelta(hours=1), agent_id=two_agents["vendas"].pk
    )
    assert [a.agent_name for a in report.by_agent] == ["Vendas"]
    assert report.total.turns == 4 and report.total.fallbacks == 1


def test_the_sql_and_python_readings_of_a_turn_agree(two_agents):
    in_sql = runtime_outcomes(two_agents["org"].pk, T0, T0 + timedelta(hours=1)).total
    traces = [{"runtime": rt} for rts in two_agents["traces"].values() for rt in rts if rt]
    assert outcomes_of_traces(traces) == in_sql


def test_a_period_without_runtime_turns_has_no_rate(db):
    org = factories.make_org("Vazia")
    report = runtime_outcomes(org.pk, T0, T0 + timedelta(days=30))
    assert report.by_agent == () and report.total == OutcomeCounts()
    assert report.total.fallback_rate is None and report.total.fallback_percent is None


def test_the_conversation_page_shows_the_runtime_outcomes_in_words(
    db, settings, django_capture_on_commit_callbacks
):
    settings.CONVERSATION_RUNTIME_ENABLED = True
    desk = make_desk()
    customer = Customer(desk.channel, django_capture_on_commit_callbacks)
    customer.say("quero cancelar o VOD")  # the runtime asks
    customer.say("sim")  # ... and cancels
    customer.say("qual o horário da loja?")  # not the runtime's: the orchestrator answers
    conversation = Conversation.objects.get()
    report = runtime_outcomes(desk.org.pk, T0 - timedelta(days=3650), T0 + timedelta(days=3650))
    assert (report.total.handled, report.total.fallbacks, report.total.actions) == (2, 1, 1)

    client = Client()
    client.force_login(factories.make_user(desk.org, "viewer"))
    html = client.get(f"/conversas/{conversation.pk}/").content.decode()

    summary = re.search(r'<section class="runtime-outcomes".*?</section>', html, re.S)
    assert summary is not None
    shown = re.sub(r"\s+", " ", summary.group(0))
    assert "Respondidos pelo runtime</dt><dd>2" in shown
    assert "taxa de fallback 33%" in shown
    assert "pedido que o runtime não cobre (1)" in shown
    assert "Ações executadas</dt><dd>1" in shown
    turns = re.findall(r'<div class="grid-2 runtime-compare".*?</div>\s*</dl>\s*</div>', html, re.S)
    assert len(turns) == 3
    latest, executed, asked = turns  # the latest turn comes first
    assert "passou ao orquestrador, que respondeu: pedido que o runtime não cobre" in latest
    assert "Executar o que o cliente confirmou" in executed
    assert "Cancelamento avulso (Sucesso)" in executed
    assert "Pedir a confirmação do cliente · regra 5" in asked
    assert "turno iniciado → " in asked and "confirmação pedida" in asked
    for raw in ("ask_confirmation", "execute_action_queue", "uncovered_intent", "cancelar_vas"):
        assert raw not in html.split('id="llm-calls"')[0]


# --- every code the runtime writes has a label ----------------------------------------------


def _reason_codes() -> set[str]:
    sources = [*(ROOT / "conversation/runtime").glob("*.py")]
    sources.append(ROOT / "conversation/turns/runtime_step.py")
    pattern = re.compile(
        r'(?:reason="|_fallback\(state, turn, "|fallback_reason="|error=")([a-z_]+)"'
    )
    return {m for path in sources for m in pattern.findall(path.read_text(encoding="utf-8"))}


def test_every_fallback_reason_the_runtime_writes_has_a_label():
    codes = _reason_codes()
    assert {"uncovered_intent", "invoice_unavailable", "runtime_error"} <= codes
    assert codes - set(REASON_LABELS) == set()


def test_every_decision_intent_and_hook_has_a_label():
    decisions = {*get_args(DecisionKind), "ask_again", "resume_workflow"}
    assert decisions - set(DECISION_LABELS) == set()
    assert set(get_args(IntentKind)) - set(INTENT_LABELS) == set()
    assert {h.__name__ for h in mutations.HOOKS} == set(HOOK_LABELS)


def test_an_unknown_code_still_shows_as_another_reason():
    assert fallback_reason_label("brand_new_reason") == "outro motivo (brand_new_reason)"
    assert fallback_reason_label("invoice_unavailable") == "fatura indisponível"


def test_the_trace_view_of_a_kill_switch_turn_says_the_runtime_did_not_run():
    view = runtime_trace_view({"runtime": SKIPPED})
    assert view is not None and view.skipped
    assert [r.label for r in view.rows] == ["Runtime", "Resultado"]
    assert "desligado pela chave geral" in view.rows[1].value
    assert runtime_trace_view({"guard": "human_owned"}) is None


def test_a_turn_summary_sentence_says_what_the_runtime_did():
    assert runtime_sentence({"runtime": HANDLED}) == (
        "O runtime respondeu: Pedir a confirmação do cliente."
    )
    assert runtime_sentence({"runtime": EXECUTED}) == (
        "O runtime respondeu e executou: Cancelamento avulso."
    )
    assert runtime_sentence({"runtime": NO_INVOICE}) == (
        "O runtime passou ao orquestrador: fatura indisponível."
    )
    assert "chave geral" in (runtime_sentence({"runtime": SKIPPED}) or "")
    assert "falhou" in (runtime_sentence({"runtime": ERROR}) or "")
    assert runtime_sentence({"route": {}}) is None


def test_the_conversation_page_summary_says_what_the_runtime_and_the_budget_did():
    from conversation.views.trace_words import Names, turn_summary

    lines = turn_summary(
        {"runtime": EXECUTED, "budget": {"stop": "monthly_spend", "path": "offline"}}, Names()
    )
    assert "O runtime respondeu e executou: Cancelamento avulso." in lines
    assert any("limite mensal" in line for line in lines)
    rate = turn_summary({"budget": {"stop": "contact_rate", "path": "handoff"}}, Names())
    assert any("mensagens por minuto" in line for line in rate)
    assert not any("runtime" in line for line in turn_summary({"route": {}}, Names()))
