"""The backend wrappers: the action log of any backend, the dry run of shadow mode, the
knowledge search of the RAG answers."""

from __future__ import annotations

from typing import Any

import pytest

from conversation.models import RuntimeAction
from conversation.runtime import DemoBackend
from conversation.runtime_adapters.backends import DryRunBackend, KnowledgeSearch, RecordingBackend
from tests import factories

from .conftest import load_invoice

VOD = {"service": "Vivo Play VOD", "msisdn": "11987654321", "value": "R$ 14,90"}
HBO = {"name": "HBO Max", "msisdn": "11987654321", "item_type": "estrategico"}


def test_every_action_call_is_recorded_in_order_with_its_outcome():
    recording = RecordingBackend(
        DemoBackend(load_invoice(), strategic_retention_offer=True), name="demo"
    )
    recording.cancelar_vas_single(items=[VOD], workflow_input={})
    recording.cancelar_vas_single(items=[VOD], workflow_input={})  # already cancelled
    paused = recording.vas_strategic(items=[HBO], workflow_input={})
    recording.resume_workflow(
        tool="vas_estrategico",
        execution_id=paused["execution_id"],
        input_key="manter_com_desconto",
        value="nao",
    )
    recording.pro_rata(items=[{"service": "Tamboro", "msisdn": "11987654321"}], remaining=[])

    assert [(r.tool, r.items, r.outcome) for r in recording.records] == [
        ("cancelar_vas_single", ("Vivo Play VOD",), "success"),
        ("cancelar_vas_single", ("Vivo Play VOD",), "no_match"),
        ("vas_strategic", ("HBO Max",), "partial"),  # paused: waits for the customer
        ("resume_workflow", (), "success"),
        ("pro_rata", ("Tamboro",), "success"),
    ]
    assert recording.records[2].execution_id == paused["execution_id"]
    assert (recording.records[3].execution_id, recording.records[3].answer) == (
        paused["execution_id"],
        "nao",
    )


def test_the_action_log_is_written_in_one_insert(db, django_assert_num_queries):
    conversation = factories.make_conversation(factories.make_channel(factories.make_org()))
    recording = RecordingBackend(
        DemoBackend(load_invoice(), unavailable_tools=["vas_strategic"]), name="demo"
    )
    recording.cancelar_vas_single(items=[VOD], workflow_input={})
    recording.vas_strategic(items=[HBO], workflow_input={})
    with django_assert_num_queries(1):
        assert recording.flush(conversation=conversation, turn=None) == 2
    rows = list(RuntimeAction.objects.all())
    assert [(r.sequence, r.outcome, r.error_code) for r in rows] == [
        (0, "success", ""),
        (1, "failure", "parceiro indisponível"),
    ]
    assert recording.flush(conversation=conversation, turn=None) == 0  # nothing twice


@pytest.mark.parametrize(
    ("call", "kwargs"),
    [
        ("cancelar_vas_single", {"items": [VOD], "workflow_input": {}}),
        ("vas_strategic", {"items": [HBO], "workflow_input": {}}),
        ("pro_rata", {"items": [VOD], "remaining": []}),
        (
            "resume_workflow",
            {"tool": "vas_estrategico", "execution_id": "e", "input_key": "k", "value": "sim"},
        ),
    ],
)
def test_a_dry_run_never_reaches_the_backend(call: str, kwargs: dict[str, Any]):
    class Untouchable:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"the dry run called {name}")

    dry = DryRunBackend(Untouchable())  # type: ignore[arg-type]
    assert getattr(dry, call)(**kwargs) == {"success": True, "dry_run": True}
    assert len(dry.simulated) == 1


def test_a_dry_run_still_reads_the_invoice():
    dry = DryRunBackend(DemoBackend(load_invoice()))
    assert dry.invoice_explanation(msisdn="11987654321")["success"] is True


def test_the_knowledge_search_answers_with_one_passage_per_concept(db):
    org = factories.make_org()
    tamboro = factories.make_document(org, "Tamboro", "Tamboro é uma plataforma de jogos.")
    factories.make_document(org, "Aya Ensina", "Aya Ensina é um serviço de cursos.")
    factories.make_document(factories.make_org(), "Tamboro", "Texto de outra empresa.")
    search = KnowledgeSearch(org.pk)

    answer = search.buscar_informacao(queries=["tamboro o que é", "tamboro o que é"])
    assert answer == {"answer": "Tamboro é uma plataforma de jogos."}
    assert search.hit_ids == [str(tamboro.pk)]
    assert search.buscar_informacao(queries=["youtube o que é"]) == {"answer": None}
