"""Review round 30: two consented actions never share an idempotency key, even when the
runtime closed the dialogue in between and the conversation goes on. Through the signed
simulator webhook and a real turn (``harness``), against the fake billing system over HTTP,
which, like a real one, answers a key it already saw from its records and acts on nothing.

billing_http: "Every POST carries an ``Idempotency-Key`` naming the consented action, not
the turn [...] A retry of the same action [...] sends the same key [...]; two actions never
share a key". consent: "The runtime's turn counter therefore counts every turn of the
conversation" (confirmations, and the action ids they stamp, are named by it).
"""

from __future__ import annotations

import pytest

from . import harness
from .harness import Dialogue, Step, describe, load_suite, run_dialogue

pytestmark = pytest.mark.django_db

SUITE = load_suite()

SAME_REQUEST_AFTER_A_CLOSE = Dialogue(
    id="r30_the_same_request_after_the_runtime_closed_is_a_new_action",
    covers="HBO Max kept with the discount closes the dialogue; months later the customer "
    "asks to cancel it again and confirms: the billing system is asked anew (a new key), not "
    "answered from the first request's record",
    backend="billing",
    steps=(
        Step(("quero cancelar o HBO Max",), expect={"asks_confirmation": ["HBO Max"]}),
        Step(
            ("sim",),
            expect={"executed": ["HBO Max"], "reply_contains": ["Quer manter com o desconto?"]},
        ),
        Step(("sim",), expect={"resumed": "sim", "closed": True}),
        Step(("quero cancelar o HBO Max",), expect={"asks_confirmation": ["HBO Max"]}),
        Step(
            ("sim",),
            expect={"executed": ["HBO Max"], "reply_contains": ["Quer manter com o desconto?"]},
        ),
        Step(
            ("não",),
            expect={
                "resumed": "nao",
                "closed": True,
                "reply_contains": ["Registrei o cancelamento de HBO Max"],
            },
        ),
    ),
)


@pytest.mark.parametrize("mode", harness.MODES)
def test_a_request_repeated_after_the_runtime_closed_is_not_answered_from_the_old_key(
    mode: str,
) -> None:
    run = run_dialogue(SAME_REQUEST_AFTER_A_CLOSE, mode, SUITE)
    assert run.failures == [], describe(run)
