"""The HTTP billing backend (respx at httpx's transport): wire contract, error mapping to
the executor's outcomes, and whole turns against a billing system."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx
from django.core.exceptions import ImproperlyConfigured

from conversation.models import RuntimeAction, Turn
from conversation.runtime.action_executor import classify_outcome
from conversation.runtime.state import ToolOutcome
from conversation.runtime_adapters.backends import KnowledgeSearch
from conversation.runtime_adapters.billing_http import (
    BillingConfig,
    BillingError,
    HttpBillingBackend,
    billing_config,
)

from .conftest import PHONE, load_invoice

BASE = "https://billing.test/api"
TOKEN = "tok-123"
CANCEL_ITEMS = [{"service": "Vivo Play VOD", "msisdn": "11987654321", "value": "R$ 14,90"}]


@pytest.fixture
def api() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE, assert_all_called=False) as mock:
        yield mock


def backend() -> HttpBillingBackend:
    return HttpBillingBackend(
        BillingConfig(base_url=BASE, token=TOKEN, timeout_s=2),
        knowledge_search=KnowledgeSearch(uuid.uuid4()),
        idempotency_scope="conversation-1",
    )


def test_actions_post_with_the_token_and_an_idempotency_key_per_action(api):
    cancel = api.post("/vas/cancel").respond(
        200, json={"success": True, "message": "Cancelado.", "internal_ref": "x9"}
    )
    strategic = api.post("/vas/strategic").respond(200, json={"success": True})
    billing = backend()

    result = billing.cancelar_vas_single(
        items=CANCEL_ITEMS, workflow_input={"remaining": []}, action_id="conv#2/0"
    )
    billing.vas_strategic(
        items=[{"name": "HBO Max", "msisdn": "1"}], workflow_input={}, action_id="conv#2/1"
    )

    assert result == {"success": True, "message": "Cancelado."}  # unknown keys dropped
    sent = cancel.calls.last.request
    assert sent.headers["authorization"] == f"Bearer {TOKEN}"
    key = sent.headers["idempotency-key"]
    assert key.startswith("rt-") and len(key) < 80
    assert json.loads(sent.content) == {"items": CANCEL_ITEMS, "workflow_input": {"remaining": []}}
    assert strategic.calls.last.request.headers["idempotency-key"] != key


def test_the_idempotency_key_is_the_actions_whatever_the_call_or_turn(api):
    """The key is made of the conversation, the action's id and its arguments: a retry, by
    another backend instance (a later turn), sends the same one; anything else changes it."""
    cancel = api.post("/vas/cancel").respond(200, json={"success": True})
    resume = api.post("/workflows/exec-7/resume").respond(200, json={"success": True})

    def key(action_id: str = "conv#2/0", items: Any = CANCEL_ITEMS, scope: str = "") -> str:
        billing = backend()
        if scope:
            billing = HttpBillingBackend(
                BillingConfig(base_url=BASE, token=TOKEN, timeout_s=2),
                knowledge_search=KnowledgeSearch(uuid.uuid4()),
                idempotency_scope=scope,
            )
        billing.cancelar_vas_single(items=items, workflow_input={}, action_id=action_id)
        return str(cancel.calls.last.request.headers["idempotency-key"])

    first = key()
    assert key() == first  # a retry of the same action
    assert key(action_id="conv#2/1") != first  # another action of the same consent
    assert key(action_id="conv#5/0") != first  # the same items consented to again
    assert key(items=[{**CANCEL_ITEMS[0], "service": "Tamboro"}]) != first
    assert key(scope="conversation-2") != first

    def resumed(value: str) -> str:
        backend().resume_workflow(
            tool="vas_estrategico", execution_id="exec-7", input_key="manter", value=value
        )
        return str(resume.calls.last.request.headers["idempotency-key"])

    assert resumed("nao") == resumed("nao") != resumed("sim")


def test_a_paused_workflow_keeps_its_fields(api):
    paused = {
        "aguardando_resposta": True,
        "execution_id": "exec-7",
        "expected_input_key": "manter_com_desconto",
        "allowed_values": ["sim", "nao"],
        "normalize": "yes_no",
        "question": "Quer manter com desconto?",
    }
    api.post("/vas/strategic").respond(200, json=paused)
    resumed = api.post("/workflows/exec-7/resume").respond(200, json={"success": True})
    billing = backend()
    assert billing.vas_strategic(items=[], workflow_input={}) == paused
    billing.resume_workflow(
        tool="vas_estrategico", execution_id="exec-7", input_key="manter", value="nao"
    )
    assert json.loads(resumed.calls.last.request.content) == {
        "tool": "vas_estrategico",
        "input_key": "manter",
        "value": "nao",
    }


@pytest.mark.parametrize(
    ("reply", "expected", "outcome"),
    [
        (httpx.Response(404), {"not_found": True}, ToolOutcome.NO_MATCH),
        (httpx.Response(401), {"error": "billing_unauthorized"}, ToolOutcome.FAILURE),
        (httpx.Response(403), {"error": "billing_unauthorized"}, ToolOutcome.FAILURE),
        (httpx.Response(409), {"error": "billing_rejected"}, ToolOutcome.FAILURE),
        (httpx.Response(422, json={"message": "x"}), {"error": "billing_rejected"}, None),
        (httpx.Response(429), {"error": "billing_rate_limited"}, ToolOutcome.FAILURE),
        (httpx.Response(400), {"error": "billing_bad_request"}, ToolOutcome.FAILURE),
        (httpx.Response(503), {"error": "billing_unavailable"}, ToolOutcome.FAILURE),
        (httpx.Response(200, text="<html>ok</html>"), {"error": "billing_bad_response"}, None),
        (httpx.Response(200, json=["success"]), {"error": "billing_bad_response"}, None),
        (httpx.ConnectTimeout("slow"), {"error": "billing_timeout"}, ToolOutcome.FAILURE),
        (httpx.ConnectError("refused"), {"error": "billing_unreachable"}, ToolOutcome.FAILURE),
    ],
    ids=[
        "404",
        "401",
        "403",
        "409",
        "422",
        "429",
        "400",
        "503",
        "html",
        "json_list",
        "timeout",
        "unreachable",
    ],
)
def test_failures_map_to_the_executors_outcomes(api, reply, expected, outcome):
    route = api.post("/vas/cancel")
    if isinstance(reply, Exception):
        route.mock(side_effect=reply)
    else:
        route.mock(return_value=reply)
    result = backend().cancelar_vas_single(items=CANCEL_ITEMS, workflow_input={})
    assert result == expected
    assert classify_outcome(result) is (outcome or ToolOutcome.FAILURE)


def test_invoice_explanation_reads_text_and_maps_failures(api):
    api.get("/invoices/11987654321/explanation").respond(200, json={"text": "Sua fatura..."})
    api.get("/invoices/000/explanation").respond(200, json={"text": ""})
    api.get("/invoices/404/explanation").respond(404)
    api.get("/invoices/500/explanation").respond(500)
    billing = backend()
    assert billing.invoice_explanation(msisdn="11987654321") == {
        "success": True,
        "text": "Sua fatura...",
    }
    assert billing.invoice_explanation(msisdn="000") == {"error": "billing_bad_response"}
    assert billing.invoice_explanation(msisdn="404") == {"error": "billing_not_found"}
    assert billing.invoice_explanation(msisdn="500") == {"error": "billing_unavailable"}


def test_fetching_an_unknown_customers_invoice_raises_not_found(api):
    api.get(f"/customers/{PHONE}/invoice").respond(404)
    with pytest.raises(BillingError) as caught:
        backend().fetch_invoice(PHONE)
    assert caught.value.code == "billing_not_found"


def test_configuration_comes_from_settings_then_the_environment(settings, monkeypatch):
    settings.BILLING_API_URL = ""
    monkeypatch.delenv("BILLING_API_URL", raising=False)
    assert billing_config() is None
    monkeypatch.setenv("BILLING_API_URL", f"{BASE}/")
    monkeypatch.setenv("BILLING_API_TOKEN", TOKEN)
    assert billing_config() == BillingConfig(base_url=BASE, token=TOKEN)
    settings.BILLING_API_URL = BASE
    settings.BILLING_API_TOKEN = ""
    monkeypatch.delenv("BILLING_API_TOKEN")
    with pytest.raises(ImproperlyConfigured):
        billing_config()


# --- whole turns against the billing system ---------------------------------------------


@pytest.fixture
def billing_api(settings: Any, api: respx.MockRouter) -> respx.MockRouter:
    settings.BILLING_API_URL = BASE
    settings.BILLING_API_TOKEN = TOKEN
    api.get(f"/customers/{PHONE}/invoice").respond(200, json=load_invoice())
    return api


def test_a_confirmed_cancellation_posts_to_the_billing_system_in_order(desk, customer, billing_api):
    cancel = billing_api.post("/vas/cancel").respond(
        200, json={"success": True, "message": "Cancelei o Vivo Play VOD no sistema."}
    )
    strategic = billing_api.post("/vas/strategic").respond(
        200, json={"success": True, "message": "Pedido ao parceiro registrado."}
    )
    customer.say("quero cancelar o VOD e o HBO Max")
    (done,) = customer.say("sim")

    assert cancel.call_count == 1 and strategic.call_count == 1
    keys = [r.calls.last.request.headers["idempotency-key"] for r in (cancel, strategic)]
    assert keys[0] != keys[1]  # one key per action, never per turn
    assert json.loads(strategic.calls.last.request.content)["items"] == [
        {"name": "HBO Max", "msisdn": "11987654321", "item_type": "estrategico"}
    ]
    assert done.body.index("Cancelei o Vivo Play VOD no sistema.") < done.body.index(
        "Pedido ao parceiro registrado."
    )
    assert list(RuntimeAction.objects.values_list("backend", "tool", "outcome")) == [
        ("http", "cancelar_vas_single", "success"),
        ("http", "vas_strategic", "success"),
    ]


def test_idempotency_keys_name_the_consented_action_not_the_turn(desk, customer, billing_api):
    """A retry of the same action, turns later, carries the same key (a billing system that
    acted on the first call and lost its reply must not act twice); two actions of one
    consent, or the same item consented to again, carry different keys."""
    cancel = billing_api.post("/vas/cancel").mock(
        side_effect=[
            httpx.Response(503),
            httpx.Response(200, json={"success": True, "message": "Cancelei o Vivo Play VOD."}),
            httpx.Response(200, json={"success": True, "message": "Cancelei o Vivo Play VOD."}),
        ]
    )
    strategic = billing_api.post("/vas/strategic").respond(
        200, json={"success": True, "message": "Pedido ao parceiro registrado."}
    )
    customer.say("quero cancelar o VOD e o HBO Max")
    (failed,) = customer.say("sim")
    assert failed.body.endswith("Quer que eu tente de novo a solicitação sobre Vivo Play VOD?")
    customer.say("sim")  # the retry, a turn later: the VOD, then the HBO Max

    first, retried = (c.request.headers["idempotency-key"] for c in cancel.calls)
    partner = strategic.calls.last.request.headers["idempotency-key"]
    assert first == retried
    assert partner != first

    customer.say("quero cancelar o VOD")  # asked again later: a new consent, a new action
    customer.say("sim")
    assert cancel.call_count == 3
    again = cancel.calls.last.request.headers["idempotency-key"]
    assert again not in {first, partner}


def test_a_billing_outage_reports_the_failure_and_offers_a_retry(desk, customer, billing_api):
    billing_api.post("/vas/cancel").respond(503)
    strategic = billing_api.post("/vas/strategic").respond(200, json={"success": True})
    customer.say("quero cancelar o VOD e o HBO Max")
    (done,) = customer.say("sim")

    assert "Não consegui concluir a solicitação sobre Vivo Play VOD agora." in done.body
    assert done.body.endswith("Quer que eu tente de novo a solicitação sobre Vivo Play VOD?")
    assert strategic.call_count == 0  # the queue stops at the failed step
    action = RuntimeAction.objects.get()
    assert (action.outcome, action.error_code) == ("failure", "billing_unavailable")


def test_without_the_customers_invoice_the_orchestrator_answers(desk, customer, settings, api):
    settings.BILLING_API_URL = BASE
    settings.BILLING_API_TOKEN = TOKEN
    api.get(f"/customers/{PHONE}/invoice").respond(502)
    customer.say("quero cancelar o VOD")
    turn = Turn.objects.get()
    assert turn.outcome == "replied"
    assert turn.trace["runtime"] == {
        "mode": "on",
        "invoice_error": "billing_unavailable",
        "handled": False,
        "fallback_reason": "invoice_unavailable",
    }
