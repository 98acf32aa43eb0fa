"""Work the runtime started and must not lose, through ``try_handle`` (pure: no Django):
a failed resume retries the paused step, a confirmation given while a workflow waits asks
the waiting question first, and every consented action keeps one id across its retries."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conversation.runtime import DemoBackend
from conversation.runtime.state import ConversationStatus

from .conftest import CANNED, ScriptedClassifier
from .test_runtime_consent import PausingAvulso
from .test_runtime_end_to_end import Conversation

ACTION = {"kind": "action_request", "requested_action": True, "action_verbs": ["cancelar"]}
OUTPUTS: dict[str, Mapping[str, Any]] = {
    **CANNED,
    "cancela o VOD": {**ACTION, "mentioned_items": ["VOD"]},
    "cancela o Tamboro": {**ACTION, "mentioned_items": ["Tamboro"]},
    "quero cancelar o HBO Max": {**ACTION, "mentioned_items": ["HBO Max"]},
    "tchau": {"kind": "human_or_end"},
}


class ResumeFailsOnce(PausingAvulso):
    """Single cancellations pause on a question; the first resume fails."""

    def __init__(self, invoice: Mapping[str, Any]) -> None:
        super().__init__(invoice)
        self.resume_down = True

    def resume_workflow(
        self, *, tool: str, execution_id: str, input_key: str, value: str
    ) -> dict[str, Any]:
        if self.resume_down:
            self.resume_down = False
            return {"error": "billing_unavailable"}
        return super().resume_workflow(
            tool=tool, execution_id=execution_id, input_key=input_key, value=value
        )


class KeptIds(DemoBackend):
    """Records the action id the runtime passes with every action call."""

    def __init__(self, invoice: Mapping[str, Any], **kwargs: Any) -> None:
        super().__init__(invoice, **kwargs)
        self.ids: list[tuple[str, str]] = []

    def cancelar_vas_single(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> dict[str, Any]:
        self.ids.append(("cancelar_vas_single", action_id))
        return super().cancelar_vas_single(items=items, workflow_input=workflow_input)

    def vas_strategic(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> dict[str, Any]:
        self.ids.append(("vas_strategic", action_id))
        return super().vas_strategic(items=items, workflow_input=workflow_input)


def test_a_failed_resume_offers_to_retry_the_paused_step_not_the_next_one(
    invoice: dict[str, Any],
) -> None:
    backend = ResumeFailsOnce(invoice)
    talk = Conversation(backend, ScriptedClassifier(OUTPUTS))
    talk.say("quero cancelar o VOD e o HBO Max")
    paused = talk.say("sim")
    assert paused.content is not None and paused.content.endswith("Qual o motivo do cancelamento?")

    failed = talk.say("preço")
    assert failed.content is not None
    assert failed.content.endswith("Quer que eu tente de novo a solicitação sobre Vivo Play VOD?")
    pending = talk.state.pending_confirmation
    assert pending is not None
    assert [s.subject for s in pending.authorized_queue.steps] == ["Vivo Play VOD", "HBO Max"]

    again = talk.say("sim")  # the retry runs the step that failed, and asks its question again
    assert [a.tool for a in backend.executed] == ["cancelar_vas_single", "cancelar_vas_single"]
    assert again.content is not None and again.content.endswith("Qual o motivo do cancelamento?")
    done = talk.say("preço")
    assert [a.tool for a in backend.executed][-2:] == ["resume_workflow", "vas_strategic"]
    assert done.content is not None and "HBO Max" in done.content


def test_a_confirmation_given_while_a_workflow_waits_asks_the_waiting_question_first(
    invoice: dict[str, Any],
) -> None:
    backend = DemoBackend(invoice, strategic_retention_offer=True)
    talk = Conversation(backend, ScriptedClassifier(OUTPUTS))
    talk.say("quero cancelar o HBO Max")
    talk.say("sim")
    assert talk.state.status is ConversationStatus.AWAITING_WORKFLOW_INPUT
    asked = talk.say("cancela o Tamboro")
    assert asked.content is not None and asked.content.endswith("Você confirma?")

    first = talk.say("sim")
    # Nothing runs yet: the waiting question comes first, and says the new request waits.
    assert [a.tool for a in backend.executed] == ["vas_strategic"]
    assert first.content is not None and "Tamboro" in first.content
    assert first.content.endswith("Quer manter com o desconto?")
    assert talk.state.status is ConversationStatus.AWAITING_WORKFLOW_INPUT

    done = talk.say("não")  # the answer resumes the old workflow, then the new request runs
    assert [(a.tool, a.items) for a in backend.executed][1:] == [
        ("resume_workflow", ("HBO Max",)),
        ("cancelar_vas_single", ("Tamboro",)),
    ]
    assert done.content is not None
    assert "Registrei o cancelamento de HBO Max" in done.content
    assert "Cancelei o Tamboro" in done.content


def test_a_goodbye_while_a_workflow_waits_says_what_was_left_undone(
    invoice: dict[str, Any],
) -> None:
    backend = DemoBackend(invoice, strategic_retention_offer=True)
    talk = Conversation(backend, ScriptedClassifier(OUTPUTS))
    talk.say("quero cancelar o HBO Max")
    talk.say("sim")
    talk.say("cancela o Tamboro")
    talk.say("sim")
    closed = talk.say("tchau")
    assert closed.content is not None
    assert "Não segui com a solicitação sobre HBO Max e Tamboro." in closed.content
    assert [a.tool for a in backend.executed] == ["vas_strategic"]


def test_a_consented_action_keeps_its_id_across_retries_and_ids_differ_between_actions(
    invoice: dict[str, Any],
) -> None:
    backend = KeptIds(invoice, unavailable_tools={"cancelar_vas_single"})
    talk = Conversation(backend, ScriptedClassifier(OUTPUTS))
    talk.say("quero cancelar o VOD e o HBO Max")
    talk.say("sim")  # the VOD fails: a retry is offered
    backend.unavailable_tools.clear()
    talk.say("sim")  # the retry, a turn later
    tools = [t for t, _ in backend.ids]
    ids = [i for _, i in backend.ids]
    assert tools == ["cancelar_vas_single", "cancelar_vas_single", "vas_strategic"]
    assert ids[0] and ids[0] == ids[1]  # the same consented action, retried
    assert ids[2] and ids[2] != ids[0]  # another action of the same consent

    talk.say("cancela o Tamboro")
    talk.say("sim")
    assert backend.ids[-1][1] not in ids  # another consent, another action
