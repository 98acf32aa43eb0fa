from __future__ import annotations

from typing import Any

import pytest

from conversation.runtime.action_queue import ActionQueueBuilder
from conversation.runtime.invoice_resolver import InvoiceResolver
from conversation.runtime.response_composer import ResponseComposer
from conversation.runtime.script_catalog import ScriptCatalog
from conversation.runtime.state import (
    ActionQueue,
    ActionStep,
    Channel,
    PendingConfirmation,
    ToolOutcome,
)

CATALOG = ScriptCatalog()


def composer(channel: Channel = Channel.TEXT) -> ResponseComposer:
    return ResponseComposer(CATALOG, channel=channel)


def queue(invoice: dict[str, Any], *mentions: str) -> ActionQueue:
    return ActionQueueBuilder().build(InvoiceResolver().resolve_items(list(mentions), invoice))


def test_vod_and_hbo_max_join_two_fragments(invoice: dict[str, Any]) -> None:
    assert composer().confirmation(queue(invoice, "VOD", "HBO Max")) == (
        "Entendi que você deseja cancelar o serviço Vivo Play VOD, no valor de R$ 14,90, "
        "vinculado ao número final 4321, e também falar sobre o serviço HBO Max vinculado ao "
        "número final 4321. Correto?"
    )


def test_single_avulso_step(invoice: dict[str, Any]) -> None:
    assert composer().confirmation(queue(invoice, "VOD")) == (
        "Vamos seguir com o cancelamento do serviço Vivo Play VOD, no valor de R$ 14,90, "
        "vinculado ao número final 4321 e providenciar a retirada dos valores da fatura. "
        "Você confirma?"
    )


def test_several_avulso_items_in_one_step_use_plural(invoice: dict[str, Any]) -> None:
    text = composer().confirmation(queue(invoice, "VOD", "Revista Digital"))
    assert text.startswith("Vamos seguir com o cancelamento dos serviços Vivo Play VOD, ")
    assert "Revista Digital Moda, no valor de R$ 2,99, vinculado ao número final 5678" in text


def test_single_strategic_intent_groups_by_line(invoice: dict[str, Any]) -> None:
    assert composer().confirmation(queue(invoice, "HBO Max", "Deezer", "Paramount")) == (
        "Entendi que você deseja falar sobre os serviços HBO Max e Deezer Premium vinculados "
        "ao número final 4321, e também do Paramount+ vinculado ao número final 5678. Correto?"
    )


def test_strategic_block_never_mentions_amounts_even_when_cancel_was_asked(
    invoice: dict[str, Any],
) -> None:
    text = composer().confirmation(queue(invoice, "HBO Max"))
    assert text == (
        "Entendi que você deseja falar sobre o serviço HBO Max vinculado ao número final 4321. "
        "Correto?"
    )


def test_voice_spells_the_final_digits_and_keeps_canonical_currency(
    invoice: dict[str, Any],
) -> None:
    text = composer(Channel.VOICE).confirmation(queue(invoice, "VOD"))
    assert "número final quatro três dois um" in text and "R$ 14,90" in text


def test_three_categories_in_fixed_order() -> None:
    q = ActionQueue(
        [
            ActionStep("cancelar_vas_avulso", "A", ({"canonical_name": "A", "msisdn": "1"},)),
            ActionStep("pro_rata", "Plano", ({"canonical_name": "Plano", "msisdn": "1"},)),
            ActionStep("vas_estrategico", "B", ({"canonical_name": "B", "msisdn": "1"},)),
        ]
    )
    assert composer().confirmation(q) == (
        "Entendi que você deseja cancelar o serviço A, vinculado ao número final 1, "
        "e também revisar a cobrança proporcional de Plano, e também falar sobre o serviço B "
        "vinculado ao número final 1. Correto?"
    )


def test_single_pro_rata_uses_the_static_fragment() -> None:
    q = ActionQueue([ActionStep("pro_rata", "Plano", ({"canonical_name": "Plano"},))])
    assert composer().confirmation(q) == (
        "Entendi que você deseja revisar a cobrança proporcional de Plano. Correto?"
    )


def test_empty_queue_composes_nothing_and_unknown_tool_raises() -> None:
    assert composer().confirmation(ActionQueue()) == ""
    with pytest.raises(ValueError):
        composer().confirmation(ActionQueue([ActionStep("xpto", "X")]))  # type: ignore[arg-type]


def test_confirmation_starts_at_the_cursor(invoice: dict[str, Any]) -> None:
    q = queue(invoice, "VOD", "HBO Max")
    q.advance()
    assert (
        composer().confirmation(q).startswith("Entendi que você deseja falar sobre o serviço HBO")
    )


def test_from_catalog_proxies_the_catalog_in_the_composer_channel() -> None:
    rendered = composer(Channel.VOICE).from_catalog("encerramento_resolvido")
    assert rendered == CATALOG.render("encerramento_resolvido", channel=Channel.VOICE)
    assert rendered.script_id == "encerramento_resolvido"


@pytest.mark.parametrize(
    ("mentions", "expected"),
    [
        (["Globoplay"], "Não localizei o serviço Globoplay na sua fatura."),
        (["Globoplay", "Max"], "Não localizei os serviços Globoplay e Max na sua fatura."),
        ([], "Não localizei esse serviço na sua fatura."),
    ],
)
def test_item_not_found_names_the_service(mentions: list[str], expected: str) -> None:
    rendered = composer().item_not_found(mentions)
    assert rendered.text.startswith(expected)
    assert rendered.text.endswith("Pode confirmar o nome do serviço, por favor?")
    assert rendered.script_id == "item_not_found"


def test_next_action_transition_and_outcome_texts() -> None:
    c = composer()
    assert c.next_action_transition("HBO Max") == "Agora, vamos falar sobre HBO Max."
    assert "concluída" in c.action_outcome("VOD", ToolOutcome.SUCCESS)
    assert "Não encontrei VOD" in c.action_outcome("VOD", ToolOutcome.NO_MATCH)
    assert "parte" in c.action_outcome("VOD", ToolOutcome.PARTIAL)
    assert "Não consegui" in c.action_outcome("VOD", ToolOutcome.FAILURE)


def test_regulated_preamble_follows_action_verbs() -> None:
    c = composer()
    (script,) = c.regulated_preamble(["Ressarcimento em dobro", "cancelar"])
    assert script.script_id == "recusa_ressarcimento_dobro"
    both = c.regulated_preamble(["devolução", "devolver em dobro"])
    assert [s.script_id for s in both] == [
        "recusa_ressarcimento_dobro",
        "devolucao_antes_cancelamento",
    ]
    assert c.regulated_preamble(["cancelar"]) == ()


def test_disambiguation_directive_lists_candidates_with_line_finals(
    invoice: dict[str, Any],
) -> None:
    outcome = InvoiceResolver().resolve(["aya"], invoice)
    directive = composer().disambiguation_directive(outcome.ambiguous)
    assert "pergunte a qual deles" in directive
    assert (
        'Menção "aya": Aya Ensina (linha final 4321); Aya Ensina (linha final 5678).' in directive
    )


def test_negation_directive_lists_pending_items_and_both_paths(invoice: dict[str, Any]) -> None:
    pending = PendingConfirmation("s#1", queue(invoice, "VOD", "HBO Max"), 1, "Correto?")
    directive = composer().negation_with_pending_directive(pending)
    assert "Vivo Play VOD (linha final 4321) e HBO Max (linha final 4321)" in directive
    assert "Caminho A" in directive and "Caminho B" in directive
    assert "Não ofereça o cancelamento por iniciativa própria." in directive
