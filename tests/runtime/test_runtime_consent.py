"""Issue 11 through ``try_handle``: consent bound to its question, amended answers, lines,
the runtime's own questions, paused workflows and closing (pure: DemoBackend, no Django)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from conversation.runtime import DemoBackend
from conversation.runtime.consent import note_unseen_turn
from conversation.runtime.serialization import migrate_state, serialize_state
from conversation.runtime.state import ConversationStatus

from .conftest import CANNED, LINE_B, ScriptedClassifier
from .test_runtime_end_to_end import Conversation

ACTION = {"kind": "action_request", "requested_action": True, "action_verbs": ["cancelar"]}
OUTPUTS: dict[str, Mapping[str, Any]] = {
    **CANNED,
    "cancela o VOD": {**ACTION, "mentioned_items": ["VOD"]},
    "cancela o VOD e o Tamboro": {**ACTION, "mentioned_items": ["VOD", "Tamboro"]},
    "cancela o Aya Ensina": {**ACTION, "mentioned_items": ["Aya Ensina"]},
    "cancela o Aya Ensina da linha final 5678": {
        **ACTION,
        "mentioned_items": ["Aya Ensina da linha final 5678"],
    },
    "quero cancelar a vivo": {**ACTION, "mentioned_items": ["vivo"]},
    "sim, mas só o VOD": {"kind": "confirmation_response", "affirmation": True},
    "sim, menos o Tamboro": {"kind": "confirmation_response", "affirmation": True},
    "sim, menos o VOD": {"kind": "confirmation_response", "affirmation": True},
    "sim, e cancela o Tamboro também": {**ACTION, "mentioned_items": ["Tamboro"]},
    "sim, quer dizer, não": {
        "kind": "confirmation_response",
        "affirmation": True,
        "negation": True,
    },
    "acho que sim": {"kind": "confirmation_response", "affirmation": True},
    "o da 5678": {"kind": "unknown"},
    "das duas": {"kind": "unknown"},
    "exijo o reembolso em dobro do Tamboro": {
        **ACTION,
        "action_verbs": ["reembolso em dobro"],
        "mentioned_items": ["Tamboro"],
    },
    "quero meu dinheiro de volta em dobro pelo VOD": {"kind": "unknown"},
}


@pytest.fixture
def talk(backend: DemoBackend) -> Conversation:
    return Conversation(backend, ScriptedClassifier(OUTPUTS))


def executed(talk: Conversation) -> list[tuple[str, ...]]:
    return [a.items for a in talk.backend.executed]


def test_a_yes_after_an_unseen_turn_asks_again_then_the_next_yes_executes(
    talk: Conversation,
) -> None:
    asked = talk.say("cancela o VOD")
    talk.runtime.restore_state(serialize_state(note_unseen_turn(talk.state, "human_owned")))
    again = talk.say("sim")
    assert executed(talk) == [] and again.content == asked.content
    talk.say("sim")
    assert executed(talk) == [("Vivo Play VOD",)]


def test_a_yes_with_only_narrows_the_queue_and_asks_again(talk: Conversation) -> None:
    talk.say("quero cancelar o VOD e o HBO Max")
    narrowed = talk.say("sim, mas só o VOD")
    assert executed(talk) == [] and narrowed.decision == "ask_confirmation"
    assert narrowed.content is not None and "HBO Max" not in narrowed.content
    talk.say("sim")
    assert executed(talk) == [("Vivo Play VOD",)]


def test_a_yes_with_except_removes_the_item(talk: Conversation) -> None:
    talk.say("cancela o VOD e o Tamboro")
    narrowed = talk.say("sim, menos o Tamboro")
    assert narrowed.content is not None and "Tamboro" not in narrowed.content
    talk.say("sim")
    assert executed(talk) == [("Vivo Play VOD",)]


def test_extending_a_pending_request_keeps_what_was_pending(talk: Conversation) -> None:
    talk.say("cancela o VOD")
    extended = talk.say("sim, e cancela o Tamboro também")
    assert executed(talk) == []
    assert extended.content is not None
    assert "Vivo Play VOD" in extended.content and "Tamboro" in extended.content
    talk.say("sim")
    assert executed(talk) == [("Vivo Play VOD", "Tamboro")]


@pytest.mark.parametrize("answer", ["sim, quer dizer, não", "acho que sim", "👍"])
def test_a_contradictory_doubtful_or_emoji_answer_asks_again(
    talk: Conversation, answer: str
) -> None:
    talk.say("cancela o VOD")
    again = talk.say(answer)
    assert executed(talk) == [] and again.content is not None
    assert "Você confirma?" in again.content
    talk.say("sim")
    assert executed(talk) == [("Vivo Play VOD",)]


def test_an_ambiguous_item_asks_which_line_and_a_line_answer_selects_it(
    talk: Conversation,
) -> None:
    asked = talk.say("cancela o Aya Ensina")
    assert asked.decision == "ask_which_line" and asked.content is not None
    assert "final 4321 (titular, Maria Souza) e final 5678" in asked.content
    still = talk.say("sim")  # a yes is not a line
    assert executed(talk) == [] and still.content is not None and "linha" in still.content
    confirm = talk.say("o da 5678")
    assert confirm.decision == "ask_confirmation" and confirm.content is not None
    assert "final 5678" in confirm.content and "final 4321" not in confirm.content
    talk.say("sim")
    assert [(a.items, a.msisdns) for a in talk.backend.executed] == [(("Aya Ensina",), (LINE_B,))]


def test_both_lines_can_be_chosen(talk: Conversation) -> None:
    talk.say("cancela o Aya Ensina")
    talk.say("das duas")
    talk.say("sim")
    assert len(talk.backend.executed[0].msisdns) == 2


def test_a_request_naming_its_line_is_not_ambiguous(talk: Conversation) -> None:
    result = talk.say("cancela o Aya Ensina da linha final 5678")
    assert result.decision == "ask_confirmation"
    talk.say("sim")
    assert talk.backend.executed[0].msisdns == (LINE_B,)


def test_a_brand_is_not_an_item(talk: Conversation) -> None:
    result = talk.say("quero cancelar a vivo")
    assert result.decision == "item_not_found"
    assert result.content is not None and "Vivo Play VOD" not in result.content


def test_a_no_to_the_runtimes_own_question_is_not_a_no_to_the_pending_confirmation(
    talk: Conversation,
) -> None:
    talk.say("cancela o VOD")
    talk.say("o que é esse tal de tamboro?")
    result = talk.say("não")
    assert result.fallback_reason == "negation_without_pending"
    assert result.orchestrator_directive is None  # not rule 1.6's "rejected the cancellation"
    assert talk.state.pending_confirmation is not None


def test_a_yes_to_the_runtimes_own_question_asks_the_pending_confirmation_again(
    talk: Conversation,
) -> None:
    asked = talk.say("cancela o VOD")
    talk.say("o que é esse tal de tamboro?")
    again = talk.say("sim")
    assert executed(talk) == [] and again.content == asked.content
    assert talk.state.status is ConversationStatus.AWAITING_CONFIRMATION


def test_a_goodbye_with_a_pending_request_asks_once_then_closes_saying_so(
    talk: Conversation,
) -> None:
    talk.say("cancela o VOD")
    checked = talk.say("obrigado")
    assert checked.decision == "reask_confirmation" and checked.content is not None
    assert checked.content.startswith("Antes de encerrar")
    closed = talk.say("tchau")
    assert closed.finalization is not None and closed.content is not None
    assert "Não segui com a solicitação sobre Vivo Play VOD." in closed.content
    assert executed(talk) == []


def test_tchau_right_after_a_successful_cancellation_is_resolved(talk: Conversation) -> None:
    talk.say("cancela o VOD")
    talk.say("sim")
    closed = talk.say("tchau")
    assert closed.finalization is not None and closed.finalization["status"] == "resolvido"


@pytest.mark.parametrize(
    "text",
    ["exijo o reembolso em dobro do Tamboro", "quero meu dinheiro de volta em dobro pelo VOD"],
)
def test_the_double_refund_refusal_is_said_for_usual_wordings(
    talk: Conversation, text: str
) -> None:
    result = talk.say(text)
    assert [s.script_id for s in result.scripts][:1] == ["recusa_ressarcimento_dobro"]
    assert result.content is not None and result.content.endswith("Você confirma?")


def test_a_stale_workflow_answer_asks_the_question_again(invoice: dict[str, Any]) -> None:
    talk = Conversation(DemoBackend(invoice, strategic_retention_offer=True))
    talk.say("quero cancelar o VOD e o HBO Max")
    paused = talk.say("sim")
    assert paused.content is not None and "Concluí apenas parte" not in paused.content
    talk.runtime.restore_state(serialize_state(note_unseen_turn(talk.state, "staff_message")))
    again = talk.say("não")
    assert again.content is not None and again.content.endswith("Quer manter com o desconto?")
    assert [a.tool for a in talk.backend.executed] == ["cancelar_vas_single", "vas_strategic"]
    talk.say("não")
    assert talk.backend.executed[-1].tool == "resume_workflow"


class PausingAvulso(DemoBackend):
    """A billing system whose single cancellations ask a question first."""

    def cancelar_vas_single(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> dict[str, Any]:
        self._record("cancelar_vas_single", items, "service")
        self._paused["exec-avulso"] = [{"name": i["service"], "msisdn": i["msisdn"]} for i in items]
        return {
            "aguardando_resposta": True,
            "execution_id": "exec-avulso",
            "expected_input_key": "motivo",
            "allowed_values": ["preço", "não uso"],
            "normalize": "choice",
            "question": "Qual o motivo do cancelamento?",
        }

    def resume_workflow(
        self, *, tool: str, execution_id: str, input_key: str, value: str
    ) -> dict[str, Any]:
        super().resume_workflow(
            tool=tool, execution_id=execution_id, input_key=input_key, value=value
        )
        return {"success": True, "message": "Cancelamento registrado."}


def test_a_workflow_paused_mid_queue_asks_its_question_and_the_queue_resumes(
    invoice: dict[str, Any],
) -> None:
    backend = PausingAvulso(invoice)
    talk = Conversation(backend)
    talk.say("quero cancelar o VOD e o HBO Max")
    paused = talk.say("sim")
    assert paused.content is not None and paused.content.endswith("Qual o motivo do cancelamento?")
    assert "Concluí apenas parte" not in paused.content and "HBO Max" not in paused.content
    assert [a.tool for a in backend.executed] == ["cancelar_vas_single"]
    resumed = talk.say("preço")
    assert [a.tool for a in backend.executed] == [
        "cancelar_vas_single",
        "resume_workflow",
        "vas_strategic",
    ]
    assert resumed.content is not None and "HBO Max" in resumed.content


def test_a_v7_state_migrates_to_v8_keeping_its_pending_questions(talk: Conversation) -> None:
    talk.say("cancela o VOD")
    data = serialize_state(talk.state)
    data["schema_version"] = 7
    del data["pending_confirmation"]["choices"]
    del data["pending_confirmation"]["reasked"]
    restored = migrate_state(data)
    assert restored == talk.state


def test_removing_every_pending_item_withdraws_the_request(talk: Conversation) -> None:
    talk.say("cancela o VOD")
    talk.say("sim, menos o VOD")
    assert talk.state.pending_confirmation is None
    assert talk.state.status is ConversationStatus.OPEN
    talk.say("sim")
    assert executed(talk) == []


def test_a_yes_the_classifier_took_for_an_empty_request_asks_again(
    backend: DemoBackend,
) -> None:
    outputs = {**OUTPUTS, "pode cancelar": {**ACTION, "mentioned_items": []}}
    talk = Conversation(backend, ScriptedClassifier(outputs))
    talk.say("cancela o VOD")
    again = talk.say("pode cancelar")
    assert again.content is not None and "Responda *sim*" in again.content
    assert executed(talk) == []
