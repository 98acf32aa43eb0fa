from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from conversation.runtime import Channel, DemoBackend, ExecutedAction, build_runtime

from .conftest import FIXTURES, LINE_A, LINE_B, FixedClock, ScriptedClassifier


def test_cancel_vod_and_hbo_max_confirm_then_execute_avulso_before_strategic() -> None:
    backend = DemoBackend.from_json(FIXTURES / "demo_invoice.json")
    runtime = build_runtime(
        classifier=ScriptedClassifier(), backend=backend, channel=Channel.TEXT, clock=FixedClock()
    )
    context = {"session_id": "demo", "msisdn": LINE_A, "invoice_detail": backend.invoice_detail}

    asked = runtime.try_handle(user_text="quero cancelar o VOD e o HBO Max", context=context)

    assert asked.handled
    assert asked.content == (
        "Entendi que você deseja cancelar o serviço Vivo Play VOD, no valor de R$ 14,90, "
        "vinculado ao número final 4321, e também falar sobre o serviço HBO Max vinculado ao "
        "número final 4321. Correto?"
    )
    assert backend.executed == []

    done = runtime.try_handle(user_text="sim", context=context)

    assert done.handled
    assert backend.executed == [
        ExecutedAction("cancelar_vas_single", ("Vivo Play VOD",), (LINE_A,)),
        ExecutedAction("vas_strategic", ("HBO Max",), (LINE_A,)),
    ]
    assert done.content == (
        "Pronto! Cancelei o Vivo Play VOD. O valor de R$ 14,90 será retirado da sua próxima "
        "fatura.\n\nAgora, vamos falar sobre HBO Max.\n\nRegistrei o pedido de cancelamento de "
        "HBO Max junto ao parceiro. Em até 48 horas deixa de ser cobrado.\n\n"
        "Posso ajudar com mais alguma coisa?"
    )


def test_from_json_accepts_a_document_string(invoice: dict[str, Any]) -> None:
    backend = DemoBackend.from_json(json.dumps(invoice))
    assert backend.invoice_detail == invoice
    backend.invoice_detail["Fatura Resumo"]["total"] = "0"
    assert backend.invoice_detail == invoice  # callers get copies


def test_from_json_rejects_a_non_object() -> None:
    try:
        DemoBackend.from_json("[1, 2]")
    except ValueError as exc:
        assert "object" in str(exc)
    else:
        raise AssertionError("a list is not an invoice")


def test_cancelled_item_is_not_found_a_second_time(backend: DemoBackend) -> None:
    item = {"service": "Vivo Play VOD", "msisdn": LINE_A, "value": "14.90"}
    assert backend.cancelar_vas_single(items=[item], workflow_input={})["success"] is True
    again = backend.cancelar_vas_single(items=[item], workflow_input={})
    assert again["not_found"] is True and len(backend.executed) == 1


def test_cancelling_several_items_uses_plural(backend: DemoBackend) -> None:
    items = [
        {"service": "Vivo Play VOD", "msisdn": LINE_A, "value": "14.90"},
        {"service": "Tamboro", "msisdn": LINE_A, "value": "12.90"},
    ]
    result = backend.cancelar_vas_single(items=items, workflow_input={})
    assert result["message"].startswith("Pronto! Cancelei os serviços Vivo Play VOD e Tamboro.")


def test_unavailable_tool_returns_an_error(invoice: dict[str, Any]) -> None:
    backend = DemoBackend(invoice, unavailable_tools={"vas_strategic"})
    assert "error" in backend.vas_strategic(items=[], workflow_input={})


def test_pro_rata_is_recorded(backend: DemoBackend) -> None:
    result = backend.pro_rata(items=[{"service": "Plano", "msisdn": LINE_A}], remaining=[])
    assert result["success"] and backend.executed[0].tool == "pro_rata"


def test_resume_with_yes_keeps_the_service_and_unknown_execution_fails(
    invoice: dict[str, Any],
) -> None:
    backend = DemoBackend(invoice, strategic_retention_offer=True)
    paused = backend.vas_strategic(items=[{"name": "HBO Max", "msisdn": LINE_A}], workflow_input={})
    assert paused["aguardando_resposta"] and paused["execution_id"] == "exec-1"
    kept = backend.resume_workflow(
        tool="vas_estrategico", execution_id="exec-1", input_key="manter", value="sim"
    )
    assert kept["message"].startswith("Combinado! HBO Max continua ativo")
    missing = backend.resume_workflow(tool="x", execution_id="exec-1", input_key="k", value="sim")
    assert "error" in missing


def test_explanation_of_one_line_lists_its_items(backend: DemoBackend) -> None:
    text = backend.invoice_explanation(msisdn=LINE_B)["text"]
    assert "Na linha final 5678: Vivo Controle Dependente (R$ 19,99)" in text
    assert "4321" not in text
    every_line = backend.invoice_explanation(msisdn="")["text"]
    assert "final 4321" in every_line and "final 5678" in every_line


def test_knowledge_search_joins_answers_per_query(backend: DemoBackend) -> None:
    assert backend.buscar_informacao(queries=["tamboro o que é"])["answer"].startswith("Tamboro")
    assert backend.buscar_informacao(queries=["nada"])["answer"] is None


def test_demo_invoice_amounts_add_up_to_the_summary_total(invoice: dict[str, Any]) -> None:
    total = sum(
        Decimal(e["valor"].replace("R$ ", "").replace(",", "."))
        for line, sections in invoice.items()
        if line != "Fatura Resumo"
        for entries in sections.values()
        for e in entries
    )
    assert f"R$ {total}".replace(".", ",") == invoice["Fatura Resumo"]["total"]
