"""Review round 31, end to end: short replies while something waits on the customer, each
line through the signed simulator webhook and a real turn (``tests.runtime_dialogues.
harness``), with the offline classifier and with the scripted closed-schema classifier.

What is judged comes from the system's own records (the fake billing system's action log,
the stored runtime state, the outbound messages); the harness fails any backend action or
workflow resume a step did not expect.

Oracles: DESIGN §10.1 and the issue behind the consent work (a dialogue never cancels a
service the customer did not name or agree to); product behaviour (a call-off while
something is pending is about the pending thing — never "Não localizei esse serviço", the
pending service is on the invoice); the consent module (courtesy around an answer is not its
content: "não, obrigado" to a yes/no workflow question is its "não"); the spec's workflow
resume (the runtime resumes with the customer's *answer*; "pera" is none).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.runtime_dialogues import harness
from tests.runtime_dialogues.harness import Dialogue, Step, Suite, describe, run_dialogue

pytestmark = pytest.mark.django_db

BASE = harness.load_suite()
RETENTION = "Quer manter com o desconto?"
NOT_FOUND = "Não localizei"


def _say(line: str, **expect: Any) -> Step:
    return Step(lines=(line,), expect=expect)


WORKFLOW_CALLED_OFF = Dialogue(
    id="r31_a_call_off_while_a_workflow_waits_withdraws_it",
    covers="the retention question waits; 'cancela isso' is asked about (never 'not found', "
    "never resumed), 'esquece' withdraws the cancellation, and nothing acts afterwards",
    backend="billing",
    steps=(
        _say("quero cancelar o HBO Max", asks_confirmation=["HBO Max"]),
        _say("sim", executed=["HBO Max"], reply_contains=[RETENTION]),
        _say("cancela isso", reply_contains=[RETENTION], reply_excludes=[NOT_FOUND]),
        _say("esquece", reply_contains=["não vou seguir", "HBO Max"], reply_excludes=[NOT_FOUND]),
        _say("não"),
        _say("sim"),
    ),
)

CONFIRMATION_CALLED_OFF = Dialogue(
    id="r31_a_call_off_while_a_confirmation_waits_withdraws_it",
    covers="a confirmation waits; 'deixa pra lá' withdraws it and the next 'sim' acts on nothing",
    steps=(
        _say("quero cancelar o VOD", asks_confirmation=["Vivo Play VOD"]),
        _say("deixa pra lá", reply_contains=["não vou seguir", "Vivo Play VOD"], pending=[]),
        _say("sim"),
    ),
)

POLITE_NO = Dialogue(
    id="r31_a_polite_no_answers_the_retention_question",
    covers="the retention question waits; 'não, obrigado' is its 'não': the consented "
    "cancellation completes instead of being dropped by a goodbye",
    backend="billing",
    steps=(
        _say("quero cancelar o HBO Max", asks_confirmation=["HBO Max"]),
        _say("sim", executed=["HBO Max"], reply_contains=[RETENTION]),
        _say(
            "não, obrigado",
            resumed="nao",
            closed=True,
            reply_contains=["Registrei o cancelamento de HBO Max"],
            reply_excludes=["Não segui"],
        ),
    ),
)

DIALOGUES = (WORKFLOW_CALLED_OFF, CONFIRMATION_CALLED_OFF, POLITE_NO)
SUITE = Suite(
    dialogues=DIALOGUES,
    llm={
        **BASE.llm,
        # What a closed-schema classifier returns for a cancel that names nothing.
        "cancela isso": {"kind": "action_request", "requested_action": True},
        "esquece": {"kind": "unknown"},
        "deixa pra lá": {"kind": "unknown"},
        "pera": {"kind": "unknown"},
    },
    matcher=BASE.matcher,
)
CASES = [(d, m) for d in DIALOGUES for m in harness.MODES]


@pytest.mark.parametrize(("dialogue", "mode"), CASES, ids=[f"{d.id}-{m}" for d, m in CASES])
def test_short_replies_while_something_waits_are_read_as_what_they_say(
    dialogue: Dialogue, mode: str
) -> None:
    run = run_dialogue(dialogue, mode, SUITE)
    assert run.failures == [], describe(run)


# --- a wait is no free-text answer ----------------------------------------------------------

ASKED = "por que você quer sair do HBO Max?"


@pytest.fixture
def free_text_billing() -> Iterator[None]:
    with harness.free_text_retention():
        yield


WAIT = Dialogue(
    id="r31_a_wait_is_no_free_text_answer",
    covers="a free-text question waits; 'pera' is not passed on as the reason (that would "
    "complete the cancellation); the reason given later resumes it",
    backend="billing",
    steps=(
        _say("quero cancelar o HBO Max", asks_confirmation=["HBO Max"]),
        _say("sim", executed=["HBO Max"], reply_contains=[ASKED]),
        _say("pera"),
        _say("ficou caro demais", reply_contains=[ASKED]),  # asked again: a turn came between
        _say("ficou caro demais", resumed="ficou caro demais"),
    ),
)
WAIT_CASES = [(WAIT, m) for m in harness.MODES]


@pytest.mark.parametrize(
    ("dialogue", "mode"), WAIT_CASES, ids=[f"{WAIT.id}-{m}" for m in harness.MODES]
)
@pytest.mark.usefixtures("free_text_billing")
def test_a_wait_is_never_resumed_as_a_free_text_answer(dialogue: Dialogue, mode: str) -> None:
    run = run_dialogue(dialogue, mode, SUITE)
    assert run.failures == [], describe(run)
