from __future__ import annotations

import json
from typing import Any

from conversation.runtime.action_queue import ACTION_ORDER, ActionQueueBuilder
from conversation.runtime.invoice_resolver import InvoiceResolver


def resolve(invoice: dict[str, Any], *mentions: str) -> list:
    return InvoiceResolver().resolve_items(list(mentions), invoice)


def test_vod_and_hbo_max_make_two_steps_in_fixed_order(invoice: dict[str, Any]) -> None:
    queue = ActionQueueBuilder().build(resolve(invoice, "HBO Max", "VOD"))
    assert [s.tool for s in queue.steps] == ["cancelar_vas_avulso", "vas_estrategico"]
    assert [s.subject for s in queue.steps] == ["Vivo Play VOD", "HBO Max"]
    assert queue.cursor == 0


def test_single_tool_makes_one_step(invoice: dict[str, Any]) -> None:
    queue = ActionQueueBuilder().build(resolve(invoice, "HBO Max"))
    assert len(queue.steps) == 1 and queue.steps[0].tool == "vas_estrategico"


def test_empty_items_make_an_empty_queue() -> None:
    assert ActionQueueBuilder().build([]).is_empty()


def test_same_tool_items_are_grouped_in_one_step(invoice: dict[str, Any]) -> None:
    queue = ActionQueueBuilder().build(resolve(invoice, "VOD", "Tamboro", "Jogo Premium"))
    (only,) = queue.steps
    assert only.subject == "Vivo Play VOD, Tamboro e Jogo Premium Ilimitado"
    assert [i["canonical_name"] for i in only.items] == [
        "Vivo Play VOD",
        "Tamboro",
        "Jogo Premium Ilimitado",
    ]


def test_step_items_are_json_safe(invoice: dict[str, Any]) -> None:
    (step,) = ActionQueueBuilder().build(resolve(invoice, "VOD")).steps
    assert json.loads(json.dumps(list(step.items)))[0]["value"] == "14.90"


def test_action_order_puts_avulso_first_and_strategic_last() -> None:
    assert sorted(ACTION_ORDER, key=ACTION_ORDER.__getitem__) == [
        "cancelar_vas_avulso",
        "pro_rata",
        "vas_estrategico",
    ]
