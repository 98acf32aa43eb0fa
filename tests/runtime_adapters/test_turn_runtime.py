"""The runtime inside the inbound turn, driven through the simulator webhook (offline
classifier, demo backend): confirmation, ordered execution, scripts, kill switch, shadow
mode, state persistence, vetoes and the query budget."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from conversation import turns
from conversation.models import Conversation, LlmCall, Message, RuntimeAction, Turn
from conversation.runtime_adapters.demo import DEMO_CUSTOMER_PHONE
from conversation.runtime_adapters.invoices import demo_invoice_save
from conversation.turns.runtime_step import script_catalog

from .conftest import Customer, load_invoice, make_desk

CONFIRMATION = (
    "Entendi que você deseja cancelar o serviço Vivo Play VOD, no valor de R$ 14,90, "
    "vinculado ao número final 4321, e também falar sobre o serviço HBO Max vinculado ao "
    "número final 4321. Correto?"
)


def last_turn() -> Turn:
    turn = Turn.objects.order_by("-created_at").first()
    assert turn is not None
    return turn


def test_cancelling_two_services_asks_the_composers_confirmation(desk, customer):
    (asked,) = customer.say("quero cancelar o VOD e o HBO Max")
    assert asked.body == CONFIRMATION
    assert (asked.sender_kind, asked.script_id, asked.script_version) == ("ai", "", "")
    turn = last_turn()
    assert turn.outcome == "runtime"
    runtime = turn.trace["runtime"]
    assert runtime["mode"] == "on" and runtime["handled"] is True
    assert (runtime["decision"], runtime["rule"]) == ("ask_confirmation", "5")
    assert (runtime["intent"], runtime["classifier"], runtime["backend"]) == (
        "action_request",
        "offline",
        "demo",
    )
    assert runtime["fallback_reason"] is None and runtime["scripts"] == []
    assert "loop" not in turn.trace  # the orchestrator never ran
    assert not LlmCall.objects.exists()  # the offline classifier is not a model call
    assert not RuntimeAction.objects.exists()
    live = Conversation.objects.get().runtime_state["live"]
    assert live["status"] == "awaiting_confirmation"
    assert live["pending_confirmation"]["prompt_text"] == CONFIRMATION


def test_yes_executes_both_actions_in_order_avulso_then_strategic(desk, customer):
    customer.say("quero cancelar o VOD e o HBO Max")
    (done,) = customer.say("sim")

    actions = list(RuntimeAction.objects.all())  # ordered by created_at, sequence
    assert [(a.tool, a.items, a.outcome, a.sequence) for a in actions] == [
        ("cancelar_vas_single", ["Vivo Play VOD"], "success", 0),
        ("vas_strategic", ["HBO Max"], "success", 1),
    ]
    turn = last_turn()
    assert {a.turn_id for a in actions} == {turn.pk}
    assert {a.backend for a in actions} == {"demo"}
    assert actions[0].msisdns == ["11987654321"]
    body = done.body
    assert body.index("Cancelei o Vivo Play VOD") < body.index("Agora, vamos falar sobre HBO Max.")
    assert body.index("Agora, vamos falar sobre HBO Max.") < body.index("HBO Max junto ao parceiro")
    assert body.endswith("Posso ajudar com mais alguma coisa?")
    assert (done.script_id, done.script_version) == ("", "")  # composed, not from the catalog
    runtime = turn.trace["runtime"]
    assert (runtime["decision"], runtime["rule"], runtime["state"]) == (
        "execute_action_queue",
        "confirmation_manager",
        "restored",
    )
    assert runtime["actions"] == [
        {"tool": "cancelar_vas_single", "outcome": "success"},
        {"tool": "vas_strategic", "outcome": "success"},
    ]
    live = Conversation.objects.get().runtime_state["live"]
    assert "pending_confirmation" not in live and live["status"] == "open"
    assert live["action_queue"]["cursor"] == 2


def test_catalog_scripts_are_recorded_on_the_outbound_message(desk, customer):
    (not_found,) = customer.say("cancela o xyzflix")
    assert not_found.body.startswith("Não localizei o serviço xyzflix na sua fatura.")
    assert (not_found.script_id, not_found.script_version) == (
        "item_not_found",
        script_catalog().version,
    )
    (closing,) = customer.say("tchau")
    assert closing.script_id == "encerramento_nao_resolvido"
    assert closing.script_version == script_catalog().version
    runtime = last_turn().trace["runtime"]
    assert runtime["scripts"] == [
        {"script_id": "encerramento_nao_resolvido", "catalog_version": script_catalog().version}
    ]
    assert runtime["finalization"] == "nao_resolvido"


def test_a_cancelled_service_stays_cancelled_in_later_turns(desk, customer):
    customer.say("cancela o VOD")
    customer.say("sim")
    customer.say("cancela o VOD")
    (again,) = customer.say("sim")
    assert "Não encontrei Vivo Play VOD ativo." in again.body
    assert list(RuntimeAction.objects.values_list("outcome", flat=True)) == [
        "success",
        "no_match",
    ]


def test_kill_switch_off_lets_the_orchestrator_answer(desk, customer, settings):
    settings.CONVERSATION_RUNTIME_ENABLED = False
    (answer,) = customer.say("quero cancelar o VOD e o HBO Max")
    assert answer.body != CONFIRMATION
    turn = last_turn()
    assert turn.outcome == "replied"
    assert turn.trace["runtime"] == {"mode": "on", "skipped": "kill_switch"}
    assert turn.trace["loop"]["calls"]  # the orchestrator's tool loop answered
    assert {c.purpose for c in LlmCall.objects.all()} == {"orchestrator"}
    assert Conversation.objects.get().runtime_state is None
    assert not RuntimeAction.objects.exists()


def test_shadow_mode_orchestrator_answers_and_the_trace_has_the_runtimes_decision(
    db, settings, django_capture_on_commit_callbacks
):
    settings.CONVERSATION_RUNTIME_ENABLED = True
    shadow = make_desk(mode="shadow")
    customer = Customer(shadow.channel, django_capture_on_commit_callbacks)

    (answer,) = customer.say("quero cancelar o VOD e o HBO Max")
    assert answer.body != CONFIRMATION  # the orchestrator's words reached the customer
    turn = last_turn()
    assert turn.outcome == "replied" and turn.trace["loop"]["calls"]
    runtime = turn.trace["runtime"]
    assert runtime["mode"] == "shadow" and runtime["handled"] is True
    assert (runtime["decision"], runtime["rule"]) == ("ask_confirmation", "5")
    state = Conversation.objects.get().runtime_state
    assert set(state) == {"shadow"}  # the shadow dialogue never touches the live state
    assert state["shadow"]["status"] == "awaiting_confirmation"

    customer.say("sim")
    runtime = last_turn().trace["runtime"]
    assert runtime["decision"] == "execute_action_queue"
    assert runtime["backend"] == "dry_run"
    assert runtime["actions"] == [
        {"tool": "cancelar_vas_single", "outcome": "simulated"},
        {"tool": "vas_strategic", "outcome": "simulated"},
    ]
    assert not RuntimeAction.objects.exists()  # nothing was executed


def test_unreadable_state_resets_and_the_turn_goes_on(desk, customer):
    customer.say("oi")
    conversation = Conversation.objects.get()
    conversation.runtime_state = {"live": {"schema_version": 7, "status": "nao-existe"}}
    conversation.save(update_fields=["runtime_state"])
    (asked,) = customer.say("quero cancelar o VOD e o HBO Max")
    assert asked.body == CONFIRMATION
    assert last_turn().trace["runtime"]["state"] == "reset"
    conversation.refresh_from_db()
    assert conversation.runtime_state["live"]["status"] == "awaiting_confirmation"


def test_uncovered_intent_falls_back_to_the_orchestrator(desk, customer):
    (answer,) = customer.say("oi")
    turn = last_turn()
    assert turn.outcome == "replied" and answer.body.startswith("Olá! Sou Atendimento de fatura")
    runtime = turn.trace["runtime"]
    assert runtime["handled"] is False
    assert (runtime["decision"], runtime["fallback_reason"]) == (
        "fallback_to_orchestrator",
        "uncovered_intent",
    )
    # The offline orchestrator follows rules, not notes: it gets the customer's words only.
    assert runtime["note"] is False
    assert Conversation.objects.get().runtime_state["live"]["turn_index"] == 1


def test_a_contacts_own_invoice_wins_over_the_default(desk, django_capture_on_commit_callbacks):
    own = load_invoice()
    own["11987654321"]["SVA Detalhe Total"] = [{"desc": "Clube de Revistas", "valor": "R$ 5,00"}]
    demo_invoice_save(organization=desk.org, phone=DEMO_CUSTOMER_PHONE, detail=own, actor=None)
    customer = Customer(desk.channel, django_capture_on_commit_callbacks, DEMO_CUSTOMER_PHONE)
    (asked,) = customer.say("cancela o clube de revistas")
    assert asked.body.startswith("Vamos seguir com o cancelamento do serviço Clube de Revistas")
    assert last_turn().trace["runtime"]["invoice"] == "contact"


def test_without_any_invoice_the_orchestrator_answers(
    db, settings, django_capture_on_commit_callbacks
):
    settings.CONVERSATION_RUNTIME_ENABLED = True
    desk = make_desk()
    desk.org.demoinvoice_set.all().delete()
    (answer,) = Customer(desk.channel, django_capture_on_commit_callbacks).say(
        "quero cancelar o VOD"
    )
    assert not answer.body.startswith("Vamos seguir com o cancelamento")
    turn = last_turn()
    assert turn.outcome == "replied"
    assert turn.trace["runtime"] == {
        "mode": "on",
        "handled": False,
        "fallback_reason": "invoice_unavailable",
    }
    assert Conversation.objects.get().runtime_state is None


def test_a_vetoed_runtime_reply_goes_to_the_orchestrator_without_advancing_the_state(
    desk, customer, monkeypatch
):
    def veto_confirmations(ctx, text):
        return "não prometa" if text.startswith("Entendi que você deseja") else None

    veto_confirmations.code = "test_veto"  # type: ignore[attr-defined]
    monkeypatch.setattr(turns.tools, "BEFORE_SEND_GATES", [veto_confirmations])
    (answer,) = customer.say("quero cancelar o VOD e o HBO Max")
    assert answer.body != CONFIRMATION
    turn = last_turn()
    assert turn.outcome == "replied" and turn.trace["vetoes"] == ["test_veto"]
    assert turn.trace["runtime"]["state_discarded"] is True
    # The customer never saw the question: a later "sim" must not execute anything.
    assert Conversation.objects.get().runtime_state is None
    customer.say("sim")
    assert not RuntimeAction.objects.exists()


def test_the_trace_never_holds_the_customers_text(desk, customer):
    secret = "quero cancelar o VOD, meu cpf é 123.456.789-00"
    customer.say(secret)
    trace = str(last_turn().trace)
    assert "123.456" not in trace and "cpf" not in trace


@pytest.mark.parametrize(
    ("text", "budget"),
    [
        # lock conversation (+ already-turned) · unanswered inbound · insert turn · mark
        # batch · router lookup · agent config · demo invoice · insert outbound · save
        # runtime state · conversation last_message_at · finish turn
        ("quero cancelar o VOD e o HBO Max", 11),
        # ... the same, plus the contact's earlier cancellations (read before cancelling)
        # and the action log (one INSERT for both actions), and the consent check: the
        # latest message before this turn, to see whether a turn the runtime did not run
        # came between its question and this yes (DESIGN §10.1)
        ("sim", 14),
    ],
)
def test_a_runtime_turn_stays_within_its_query_budget(desk, customer, text, budget):
    from conversation.turns import run_inbound_turn

    if text == "sim":
        customer.say("quero cancelar o VOD e o HBO Max")
    else:
        customer.say("oi")
    conversation = Conversation.objects.get()
    message = Message.objects.create(
        organization=conversation.organization,
        conversation=conversation,
        channel=conversation.channel,
        direction="inbound",
        sender_kind="customer",
        status="received",
        body=text,
    )
    with CaptureQueriesContext(connection) as ctx:
        run_inbound_turn(str(message.pk))
    data = [
        q["sql"] for q in ctx.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))
    ]
    assert last_turn().outcome == "runtime"
    assert len(data) <= budget, "\n".join(data)


def test_a_runtime_crash_is_logged_and_the_orchestrator_answers(desk, customer, monkeypatch):
    from conversation.turns import runtime_step as step

    def broken(**kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(step, "build_runtime", broken)
    (answer,) = customer.say("quero cancelar o VOD e o HBO Max")
    turn = last_turn()
    assert turn.outcome == "replied" and answer.body != CONFIRMATION
    assert turn.trace["runtime"]["error"] == "runtime_error"
    assert turn.trace["runtime"]["handled"] is False
    assert Conversation.objects.get().runtime_state is None
