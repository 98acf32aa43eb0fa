"""Review round 31: how the runtime reads short replies while something waits on the
customer (a confirmation question, a paused workflow's question), through ``try_handle``
(pure: DemoBackend, no Django).

Oracles (never the runtime's own verdicts):
- DESIGN §10.1 and the issue behind the consent work: a dialogue never cancels a service
  the customer did not name or agree to; nothing acts without a canonical yes to the
  question that names it. So a reply that names nothing ("cancela isso", "esquece") never
  makes a backend act, and never resumes a paused workflow (a resume completes it).
- Product behaviour: a deictic cancel or a call-off while something is pending is about the
  pending thing. "Não localizei esse serviço na sua fatura" answers a request for a service
  the invoice lacks, and is wrong when nothing was named and the pending item is on it.
  "esquece" / "deixa pra lá" / "mudei de ideia" withdraw what waits; a bare "cancela
  (isso)" may be the yes or the call-off, so the runtime asks (never acts).
- consent module (DESIGN §10.1): courtesy around an answer is never its content ("sim,
  obrigado" is a yes) — so "não, obrigado" to a yes/no workflow question is its "não".
- spec, mutations ("Resume é dono do runtime"): the runtime resumes a paused workflow with
  the customer's interpreted *answer*; "pera" (wait) is no answer to pass on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conversation.runtime import DemoBackend
from conversation.runtime.action_executor import ValueInterpreter
from conversation.runtime.state import ConversationStatus, PendingWorkflowResume
from conversation.runtime_adapters.offline import OfflineIntentClassifier

from .conftest import CANNED, ScriptedClassifier, load_invoice
from .test_runtime_consent import PausingAvulso
from .test_runtime_end_to_end import Conversation

ACTION = {"kind": "action_request", "requested_action": True, "action_verbs": ["cancelar"]}
OUTPUTS: dict[str, Mapping[str, Any]] = {
    **CANNED,
    "quero cancelar o VOD": {**ACTION, "mentioned_items": ["VOD"]},
    "quero cancelar o HBO Max": {**ACTION, "mentioned_items": ["HBO Max"]},
    "quero cancelar o Tamboro": {**ACTION, "mentioned_items": ["Tamboro"]},
    # What an LLM classifier returns for a cancel that names nothing.
    "cancela isso": dict(ACTION),
    "cancela": dict(ACTION),
    "não quero mais": dict(ACTION),
    "pode cancelar isso": dict(ACTION),
}
NOT_FOUND = "Não localizei"
ACTING = {"cancelar_vas_single", "vas_strategic", "pro_rata", "resume_workflow"}
FREE_QUESTION = "Por que você quer cancelar?"
RETENTION_QUESTION = "Quer manter com o desconto?"


class FreeTextReason(DemoBackend):
    """Single cancellations pause on a free-text question; the resume completes them."""

    def cancelar_vas_single(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> dict[str, Any]:
        self._record("cancelar_vas_single", items, "service")
        self._paused["exec-free"] = [{"name": i["service"], "msisdn": i["msisdn"]} for i in items]
        return {
            "aguardando_resposta": True,
            "execution_id": "exec-free",
            "expected_input_key": "motivo",
            "normalize": "free_text",
            "question": FREE_QUESTION,
        }

    def resume_workflow(
        self, *, tool: str, execution_id: str, input_key: str, value: str
    ) -> dict[str, Any]:
        super().resume_workflow(
            tool=tool, execution_id=execution_id, input_key=input_key, value=value
        )
        return {"success": True, "message": "Cancelamento registrado."}


class YesNoRetention(FreeTextReason):
    """Single cancellations pause on a yes/no retention offer."""

    def cancelar_vas_single(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> dict[str, Any]:
        result = super().cancelar_vas_single(items=items, workflow_input=workflow_input)
        return {
            **result,
            "normalize": "yes_no",
            "allowed_values": ["sim", "nao"],
            "question": RETENTION_QUESTION,
        }


BACKENDS: dict[str, type[DemoBackend]] = {
    "choice": PausingAvulso,
    "free_text": FreeTextReason,
    "yes_no": YesNoRetention,
}
_OFFLINE: OfflineIntentClassifier | None = None


def offline() -> OfflineIntentClassifier:
    global _OFFLINE
    if _OFFLINE is None:
        _OFFLINE = OfflineIntentClassifier()
    return _OFFLINE


def talk_with(backend: DemoBackend, classifier: str) -> Conversation:
    if classifier == "offline":
        return Conversation(backend, offline())  # type: ignore[arg-type]
    return Conversation(backend, ScriptedClassifier(OUTPUTS, default={"kind": "unknown"}))


def confirmation_pending(classifier: str) -> Conversation:
    talk = talk_with(DemoBackend(load_invoice()), classifier)
    talk.say("quero cancelar o VOD")
    assert talk.state.pending_confirmation is not None
    return talk


def workflow_paused(kind: str, classifier: str) -> Conversation:
    talk = talk_with(BACKENDS[kind](load_invoice()), classifier)
    talk.say("quero cancelar o VOD")
    talk.say("sim")
    assert talk.state.pending_workflow is not None
    return talk


def acted_since(talk: Conversation, mark: int) -> list[str]:
    return [a.tool for a in talk.backend.executed[mark:] if a.tool in ACTING]


CLASSIFIERS = ("offline", "scripted")


# --- (1) a deictic cancel or a call-off while something is pending ----------------------


@pytest.mark.parametrize("classifier", CLASSIFIERS)
@pytest.mark.parametrize("kind", sorted(BACKENDS))
@pytest.mark.parametrize("text", ["cancela isso", "cancela", "não quero mais"])
def test_a_deictic_cancel_while_a_workflow_waits_is_about_the_workflow(
    text: str, kind: str, classifier: str
) -> None:
    talk = workflow_paused(kind, classifier)
    mark = len(talk.backend.executed)
    question = talk.state.pending_workflow.question  # type: ignore[union-attr]

    result = talk.say(text)

    assert acted_since(talk, mark) == []  # never resumed, never a new cancellation
    assert result.handled and result.content is not None
    assert NOT_FOUND not in result.content  # the pending service is on the invoice
    # It may be the answer or calling it off: the runtime asks, naming the pending service.
    assert question in result.content and "Vivo Play VOD" in result.content
    state = talk.state
    assert state.pending_workflow is not None
    assert state.pending_workflow.asked_turn_index == state.turn_index


@pytest.mark.parametrize("classifier", CLASSIFIERS)
@pytest.mark.parametrize("kind", sorted(BACKENDS))
@pytest.mark.parametrize("text", ["esquece", "deixa pra lá", "mudei de ideia", "desisto"])
def test_a_call_off_while_a_workflow_waits_withdraws_it(
    text: str, kind: str, classifier: str
) -> None:
    talk = workflow_paused(kind, classifier)
    mark = len(talk.backend.executed)

    result = talk.say(text)

    assert acted_since(talk, mark) == []
    assert result.handled and result.content is not None
    assert "não vou seguir" in result.content and "Vivo Play VOD" in result.content
    state = talk.state
    assert state.pending_workflow is None and state.pending_confirmation is None
    assert state.status is ConversationStatus.OPEN
    # Withdrawn: the next "sim" (or the old question's answer) acts on nothing.
    talk.say("sim")
    talk.say("preço")
    assert acted_since(talk, mark) == []


@pytest.mark.parametrize("classifier", CLASSIFIERS)
@pytest.mark.parametrize("text", ["esquece", "deixa pra lá", "mudei de ideia", "desisto"])
def test_a_call_off_while_a_confirmation_waits_withdraws_it(text: str, classifier: str) -> None:
    talk = confirmation_pending(classifier)

    result = talk.say(text)

    assert result.handled and result.content is not None
    assert "não vou seguir" in result.content and "Vivo Play VOD" in result.content
    assert talk.state.pending_confirmation is None
    talk.say("sim")
    assert acted_since(talk, 0) == []


@pytest.mark.parametrize("classifier", CLASSIFIERS)
@pytest.mark.parametrize("text", ["cancela", "não quero mais"])
def test_a_deictic_cancel_while_a_confirmation_waits_asks_it_again(
    text: str, classifier: str
) -> None:
    talk = confirmation_pending(classifier)

    result = talk.say(text)

    assert result.handled and result.content is not None
    assert NOT_FOUND not in result.content
    assert "Vivo Play VOD" in result.content and "*sim*" in result.content
    assert acted_since(talk, 0) == []
    assert talk.state.pending_confirmation is not None


def test_a_call_off_while_a_new_request_waits_behind_a_workflow_withdraws_the_new_one() -> None:
    # The most recent question (the new request) is withdrawn; the paused workflow's
    # question is the open one again and its answer still resumes it.
    talk = workflow_paused("choice", "scripted")
    talk.say("quero cancelar o Tamboro")
    assert talk.state.pending_confirmation is not None
    mark = len(talk.backend.executed)

    result = talk.say("esquece")

    assert result.content is not None
    assert "Tamboro" in result.content and "Qual o motivo do cancelamento?" in result.content
    assert talk.state.pending_confirmation is None and talk.state.pending_workflow is not None
    assert acted_since(talk, mark) == []
    talk.say("preço")
    assert acted_since(talk, mark) == ["resume_workflow"]


@pytest.mark.parametrize("classifier", CLASSIFIERS)
def test_a_deictic_cancel_with_nothing_pending_keeps_the_item_not_found_answer(
    classifier: str,
) -> None:
    talk = talk_with(DemoBackend(load_invoice()), classifier)
    result = talk.say("cancela isso")
    assert result.content is not None and NOT_FOUND in result.content
    assert acted_since(talk, 0) == []


LEADS = ["", "ah ", "ok, ", "não, ", "então ", "Olha, "]
CORES = [
    "cancela",
    "cancela isso",
    "pode cancelar isso",
    "cancelar",
    "não quero mais",
    "esquece",
    "esquece isso",
    "deixa pra lá",
    "deixa quieto",
    "mudei de ideia",
    "desisto",
    "pode parar",
]
TAILS = ["", " por favor", ", obrigado", " aí", " então"]
MARKS = ["", ".", "!", "!!", " 👍"]
SETUPS = ["nothing", "confirmation", "choice", "free_text", "yes_no"]


@st.composite
def deictic_replies(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(LEADS)) + draw(st.sampled_from(CORES))
    text += draw(st.sampled_from(TAILS)) + draw(st.sampled_from(MARKS))
    return text.upper() if draw(st.booleans()) and len(text) < 12 else text


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=deictic_replies(),
    setup=st.sampled_from(SETUPS),
    classifier=st.sampled_from(CLASSIFIERS),
)
def test_a_reply_that_names_nothing_never_cancels_a_service(
    text: str, setup: str, classifier: str
) -> None:
    # The rule behind the consent work, for every phrasing and every pending state: a
    # message that names no service and is no canonical yes makes no backend act — no new
    # cancellation, no resume of a paused one — and, with something pending, it is never
    # answered as a request for a service missing from the invoice.
    if setup == "nothing":
        talk = talk_with(DemoBackend(load_invoice()), classifier)
    elif setup == "confirmation":
        talk = confirmation_pending(classifier)
    else:
        talk = workflow_paused(setup, classifier)
    mark = len(talk.backend.executed)

    result = talk.say(text)

    assert acted_since(talk, mark) == [], text
    if setup != "nothing":
        assert NOT_FOUND not in (result.content or ""), text


# --- (2) "pera" (wait) is no answer to a free-text question -----------------------------


@pytest.mark.parametrize("classifier", CLASSIFIERS)
@pytest.mark.parametrize("text", ["pera", "peraí", "pera aí", "calma", "um momento"])
def test_a_wait_is_never_passed_to_a_free_text_workflow_as_its_answer(
    text: str, classifier: str
) -> None:
    talk = workflow_paused("free_text", classifier)
    mark = len(talk.backend.executed)

    talk.say(text)

    # Resuming would complete the cancellation the customer just asked to hold.
    assert acted_since(talk, mark) == []
    assert talk.state.pending_workflow is not None


# --- (3) courtesy around a yes/no answer to a workflow question -------------------------


@pytest.mark.parametrize("classifier", CLASSIFIERS)
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("não, obrigado", "nao"),
        ("Não, obrigada!", "nao"),
        ("sim, por favor", "sim"),
        ("sim, obrigado", "sim"),
        ("sim pode", "sim"),
    ],
)
def test_a_polite_yes_or_no_answers_a_yes_no_workflow_question(
    text: str, value: str, classifier: str
) -> None:
    talk = workflow_paused("yes_no", classifier)
    mark = len(talk.backend.executed)

    result = talk.say(text)

    resumed = [a.value for a in talk.backend.executed[mark:] if a.tool == "resume_workflow"]
    assert resumed == [value]
    assert result.content is not None and "Não segui" not in result.content


WORKFLOW = PendingWorkflowResume(
    tool="vas_estrategico",
    subject="HBO Max",
    execution_id="exec-1",
    expected_input_key="manter",
    allowed_values=("sim", "nao"),
    question=RETENTION_QUESTION,
    normalize="yes_no",
)


@settings(max_examples=60, deadline=None)
@given(
    answer=st.sampled_from(["sim", "não", "nao", "ok", "s", "n", "negativo", "claro"]),
    courtesy=st.sampled_from(
        ["obrigado", "obrigada", "por favor", "valeu", "brigado", "obg", "pf"]
    ),
    before=st.booleans(),
    mark=st.sampled_from(["", ",", "!", "."]),
)
def test_courtesy_never_changes_a_yes_no_answer(
    answer: str, courtesy: str, before: bool, mark: str
) -> None:
    interpreter = ValueInterpreter()
    bare = interpreter.interpret(answer, WORKFLOW)
    assert bare is not None
    text = f"{courtesy}{mark} {answer}" if before else f"{answer}{mark} {courtesy}"
    assert interpreter.interpret(text, WORKFLOW) == bare
