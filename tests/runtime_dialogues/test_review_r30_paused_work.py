"""Review round 30: work a workflow left waiting on the customer is never lost or answered
by a message that says something else. Each dialogue runs through the signed simulator
webhook and a real turn (``harness``), against the fake billing system over HTTP, with the
offline classifier and with the scripted closed-schema classifier.

Spec (conversation-runtime, mutations "Resume é dono do runtime"): when a step pauses
(``aguardando_resposta``) the state keeps ``pending_workflow`` and stays
``AWAITING_WORKFLOW_INPUT``; on the next turn the runtime interprets the answer and resumes
the workflow. DESIGN §10.1: nothing acts without the customer's consent to what acts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from . import harness
from .harness import Dialogue, Step, Suite, describe, load_suite, run_dialogue

pytestmark = pytest.mark.django_db

SUITE = load_suite()


def _say(line: str, **expect: Any) -> Step:
    return Step(lines=(line,), expect=expect)


# --- (1) a new request withdrawn entirely leaves the paused work paused ------------------

WITHDRAWN = Dialogue(
    id="r30_new_request_withdrawn_while_a_workflow_waits",
    covers="the retention question waits; the customer asks for another cancellation and "
    "takes its only item back out: the retention question is still the open one, and its "
    "answer resumes the workflow",
    backend="billing",
    steps=(
        _say("quero cancelar o HBO Max", asks_confirmation=["HBO Max"]),
        _say("sim", executed=["HBO Max"], reply_contains=["Quer manter com o desconto?"]),
        _say("quero cancelar o Tamboro", asks_confirmation=["Tamboro"]),
        # Nothing left of the new request: the paused question is the open one again.
        _say("sim, menos o Tamboro", reply_contains=["Quer manter com o desconto?"]),
        _say(
            "não",
            resumed="nao",
            closed=True,
            reply_contains=["Registrei o cancelamento de HBO Max"],
        ),
    ),
)


DECLINED = Dialogue(
    id="r30_new_request_declined_while_a_workflow_waits",
    covers="the retention question waits; the customer asks for another cancellation and "
    "says no to it: the orchestrator answers that no (rule 1.6), and the retention question "
    "is asked again and resumed by its answer instead of being out of reach for good",
    backend="billing",
    steps=(
        _say("quero cancelar o HBO Max", asks_confirmation=["HBO Max"]),
        _say("sim", executed=["HBO Max"], reply_contains=["Quer manter com o desconto?"]),
        _say("quero cancelar o Tamboro", asks_confirmation=["Tamboro"]),
        _say("não"),
        # A turn came between (the orchestrator's): asked again before any answer counts.
        _say("não", reply_contains=["Quer manter com o desconto?"]),
        _say(
            "não",
            resumed="nao",
            closed=True,
            reply_contains=["Registrei o cancelamento de HBO Max"],
        ),
    ),
)
WITHDRAWN_CASES = [(d, m) for d in (WITHDRAWN, DECLINED) for m in harness.MODES]


@pytest.mark.parametrize(
    ("dialogue", "mode"), WITHDRAWN_CASES, ids=[f"{d.id}-{m}" for d, m in WITHDRAWN_CASES]
)
def test_a_withdrawn_new_request_keeps_the_paused_workflow_resumable(
    dialogue: Dialogue, mode: str
) -> None:
    # Spec: a paused step keeps ``pending_workflow`` until the runtime resumes it with the
    # customer's answer; withdrawing (or declining) a request never confirmed acts on
    # nothing and must not drop work already under way (it "stays paused and resumable,
    # as when nothing new was asked"). DESIGN §10.1: after a turn in between, the question
    # is asked again before an answer counts.
    run = run_dialogue(dialogue, mode, SUITE)
    assert run.failures == [], describe(run)


# --- (2) a free-text question is not answered by a message that is something else ------


@pytest.fixture
def free_text_billing() -> Iterator[None]:
    with harness.free_text_retention():
        yield


ASKED = "por que você quer sair do HBO Max?"

NEW_REQUEST = Dialogue(
    id="r30_a_new_request_is_no_free_text_answer",
    covers="a free-text question waits; a new cancellation is a request, not the reason",
    backend="billing",
    steps=(
        _say("quero cancelar o HBO Max", asks_confirmation=["HBO Max"]),
        _say("sim", executed=["HBO Max"], reply_contains=[ASKED]),
        _say("quero cancelar o Tamboro", asks_confirmation=["Tamboro"]),
        _say("sim", reply_contains=["Tamboro", ASKED]),
        _say(
            "ficou caro demais",
            resumed="ficou caro demais",
            executed=["Tamboro"],
            reply_contains=["Registrei o cancelamento do HBO Max", "Cancelei o Tamboro"],
        ),
    ),
)

QUESTION = Dialogue(
    id="r30_a_question_is_no_free_text_answer",
    covers="a free-text question waits; the customer's own question is answered, and the "
    "reason given after it resumes the workflow",
    backend="billing",
    steps=(
        _say("quero cancelar o HBO Max", asks_confirmation=["HBO Max"]),
        _say("sim", executed=["HBO Max"], reply_contains=[ASKED]),
        _say("o que é esse tal de tamboro?", reply_contains=["jogos educativos"]),
        _say("ficou caro demais", reply_contains=[ASKED]),  # asked again: a turn came between
        _say("ficou caro demais", resumed="ficou caro demais"),
    ),
)

GOODBYE = Dialogue(
    id="r30_a_goodbye_is_no_free_text_answer",
    covers="a free-text question waits; 'tchau' closes and says what was left undone",
    backend="billing",
    steps=(
        _say("quero cancelar o HBO Max", asks_confirmation=["HBO Max"]),
        _say("sim", executed=["HBO Max"], reply_contains=[ASKED]),
        _say(
            "tchau",
            closed=True,
            reply_contains=["Não segui com a solicitação sobre HBO Max"],
        ),
    ),
)

CALLED_OFF = Dialogue(
    id="r30_calling_it_off_is_no_free_text_answer",
    covers="a free-text question waits; 'cancela isso' / 'mudei de ideia' call it off, "
    "they give no reason to pass on",
    backend="billing",
    steps=(
        _say("quero cancelar o HBO Max", asks_confirmation=["HBO Max"]),
        _say("sim", executed=["HBO Max"], reply_contains=[ASKED]),
        _say("mudei de ideia"),
        _say("cancela isso"),
    ),
)

FREE_TEXT_DIALOGUES = (NEW_REQUEST, QUESTION, GOODBYE, CALLED_OFF)
FREE_TEXT_SUITE = Suite(
    dialogues=FREE_TEXT_DIALOGUES,
    llm={
        **SUITE.llm,
        "mudei de ideia": {"kind": "unknown"},
        "cancela isso": {"kind": "action_request", "requested_action": True},
    },
    matcher=SUITE.matcher,
)
CASES = [(d, m) for d in FREE_TEXT_DIALOGUES for m in harness.MODES]


@pytest.mark.parametrize(("dialogue", "mode"), CASES, ids=[f"{d.id}-{m}" for d, m in CASES])
@pytest.mark.usefixtures("free_text_billing")
def test_a_free_text_workflow_question_is_not_answered_by_something_else(
    dialogue: Dialogue, mode: str
) -> None:
    # Spec: the runtime "interpreta a resposta (ValueInterpreter)" before classifying; a
    # message that is clearly something else — a new request, a question, a goodbye, the
    # customer calling it off — is no answer, so no ``resume_workflow`` is made with it
    # (the harness fails any resume the step did not expect) and the message is read as
    # what it is.
    run = run_dialogue(dialogue, mode, FREE_TEXT_SUITE)
    assert run.failures == [], describe(run)
