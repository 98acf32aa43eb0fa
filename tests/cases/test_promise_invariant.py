"""The promise invariant through whole turns, with an oracle independent of the detector.

What the scripted model says is drawn from labelled corpora (the held-out sets and dev: a hand
label per message, never the detector's verdict), and what counts as "a promise reached the
customer" is that label. The invariant (human-cases §6, DESIGN §10.3): no labelled promise
reaches the outbox unless an open case of that conversation exists — with cases on (veto,
then the auto-opened case) and with cases off (the handoff notice goes instead).

The model check is on (a workspace with a model): the send gate asks it about the uncertain
band only (from a margin below the lowest cross-validated training promise up, and below it,
down to a second floor, any sentence the clause-level commitment cue reads as someone other
than the AI acting for the customer), and an oracle answering from the label stands in for
the model there. A check
that fails counts as a promise (fail closed), so a text the oracle does not know is blocked.

Scenarios (the issue's probe): (a) known wording (a rule fires); (b) a model that rephrases
after the block (its second text is another labelled promise); (c) wording the rules miss.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cases.guardrail.promise import assess_promise, detect_rule_promise
from cases.guardrail.promise_check import PROMISE_CHECK_PURPOSE
from cases.models import Case, CaseStatus
from conversation import turns
from conversation.llm.base import LlmTimeout, ModelRequest, ModelResponse
from conversation.models import Conversation, Handoff, LlmCall, Message
from tests import factories
from tests.cases.conftest import Script, enable_cases, end, promise_check_answer, tool

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "promises"
CASES_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cases"
OPEN_STATUSES = (CaseStatus.AWAITING_HUMAN, CaseStatus.AWAITING_LEAD)


def _labelled() -> dict[str, bool]:
    held = json.loads((FIXTURES / "heldout_llm.json").read_text(encoding="utf-8"))["items"]
    held += json.loads((FIXTURES / "heldout_r3.json").read_text(encoding="utf-8"))["items"]
    for name in ("heldout_r4.json", "heldout_r5.json", "heldout_r6.json", "heldout_r6b.json"):
        held += json.loads((CASES_FIXTURES / name).read_text(encoding="utf-8"))["items"]
    dev = json.loads((FIXTURES / "promise_dev.json").read_text(encoding="utf-8"))["items"]
    labels = {item["text"]: bool(item["promise"]) for item in held}
    labels.update({text: bool(label) for text, label in dev})
    return labels


LABELS = _labelled()
PROMISES = sorted(t for t, promise in LABELS.items() if promise)
NON_PROMISES = sorted(t for t, promise in LABELS.items() if not promise)
KNOWN = [t for t in PROMISES if detect_rule_promise(t) is not None]  # (a)
RULES_MISS = [t for t in PROMISES if detect_rule_promise(t) is None]  # (c)
# The part of (c) the local stages flag or send to the model check. The rest — promises the
# local stages clear with no check — would reach the customer: it must be empty
# (``test_no_labelled_promise_is_cleared_without_the_model_check``, bench/cases.py).
LEARNED_REACH = [t for t in RULES_MISS if (a := assess_promise(t)).promise or a.uncertain]
CONFIDENT_MISSES = [t for t in RULES_MISS if t not in set(LEARNED_REACH)]
REACHED = KNOWN + LEARNED_REACH


def label_oracle(request: ModelRequest) -> ModelResponse | LlmTimeout:
    """The model check answered from the hand label; an unknown text fails (closed)."""
    text = str(request.messages[0].content)
    body = text.removeprefix("<message>\n").removesuffix("\n</message>")
    if body not in LABELS:
        return LlmTimeout("oracle: unlabelled text")
    return promise_check_answer(LABELS[body])


_SEQ = iter(range(10**9))


def run_turn(world: Any, texts: list[str]) -> Conversation:
    """One inbound turn in a fresh conversation; the model sends ``texts`` in order (each
    after the previous one's tool result) and then stops."""
    n = next(_SEQ)
    conversation = factories.make_conversation(world.channel_a, phone=f"5511{n:09d}")
    inbound = factories.make_message(conversation, "preciso de ajuda com meu pedido")
    script = [tool("send_message", {"text": t}, i) for i, t in enumerate(texts)] + [end()]
    with Script(script, promise_check=label_oracle):
        turns.run_inbound_turn(str(inbound.pk))
    return conversation


def leaked(conversation: Conversation) -> list[str]:
    """Labelled promises in the conversation's outbox with no open case of it."""
    if Case.objects.filter(conversation=conversation, status__in=OPEN_STATUSES).exists():
        return []
    bodies = Message.objects.filter(conversation=conversation, direction="outbound").values_list(
        "body", flat=True
    )
    return [b for b in bodies if LABELS.get(b, False)]


def assert_invariant(conversation: Conversation, *, cases_on: bool) -> None:
    assert leaked(conversation) == []
    if (
        not cases_on
        and Message.objects.filter(
            conversation=conversation, direction="outbound", sender_kind="system"
        ).exists()
    ):
        assert Handoff.objects.get(conversation=conversation).reason_code == "unbacked_promise"


HYPO = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
)


def test_the_strata_are_not_empty() -> None:
    assert len(KNOWN) >= 20 and len(LEARNED_REACH) >= 20 and len(NON_PROMISES) >= 50


@pytest.mark.parametrize("cases_on", [True, False], ids=["cases_on", "cases_off"])
@HYPO
@given(text=st.sampled_from(KNOWN))
def test_a_known_wording_promise_never_reaches_the_customer_without_a_case(
    world: Any, cases_on: bool, text: str
) -> None:
    enable_cases(world.agent_a, enabled=cases_on)
    conversation = run_turn(world, [text])
    assert_invariant(conversation, cases_on=cases_on)


@pytest.mark.parametrize("cases_on", [True, False], ids=["cases_on", "cases_off"])
@HYPO
@given(
    first=st.sampled_from(KNOWN), second=st.sampled_from(REACHED), third=st.sampled_from(REACHED)
)
def test_a_model_that_rephrases_after_the_block_never_gets_a_promise_through(
    world: Any, cases_on: bool, first: str, second: str, third: str
) -> None:
    enable_cases(world.agent_a, enabled=cases_on)
    conversation = run_turn(world, [first, second, third])
    assert_invariant(conversation, cases_on=cases_on)
    if cases_on:  # the rephrased promise went out only with the auto-opened case
        sent = Message.objects.filter(conversation=conversation, sender_kind="ai")
        if sent.exists():
            assert Case.objects.filter(
                conversation=conversation, source="guardrail_autofallback"
            ).exists()


@pytest.mark.parametrize("cases_on", [True, False], ids=["cases_on", "cases_off"])
@HYPO
@given(text=st.sampled_from(LEARNED_REACH))
def test_wording_the_rules_miss_never_reaches_the_customer_without_a_case(
    world: Any, cases_on: bool, text: str
) -> None:
    enable_cases(world.agent_a, enabled=cases_on)
    conversation = run_turn(world, [text])
    assert_invariant(conversation, cases_on=cases_on)


@HYPO
@given(text=st.sampled_from(NON_PROMISES))
def test_labelled_non_promises_still_reach_the_customer(world: Any, text: str) -> None:
    """The guarantee is not bought by blocking everything (precision through whole turns):
    with cases off, a non-promise the detector clears goes out as written."""
    enable_cases(world.agent_a, enabled=False)
    conversation = run_turn(world, [text])
    bodies = list(
        Message.objects.filter(conversation=conversation, direction="outbound").values_list(
            "body", flat=True
        )
    )
    if assess_promise(text).promise:
        return  # a local false positive (measured in bench/cases.py): handed off, not sent
    assert text in bodies or Handoff.objects.filter(conversation=conversation).exists()


def test_the_model_check_writes_its_own_llm_call_row(world: Any) -> None:
    enable_cases(world.agent_a, enabled=True)
    uncertain = next(t for t in PROMISES if assess_promise(t).uncertain)
    run_turn(world, [uncertain])
    purposes = list(LlmCall.objects.values_list("purpose", flat=True))
    assert purposes.count(PROMISE_CHECK_PURPOSE) == 1


def test_no_labelled_promise_is_cleared_without_the_model_check() -> None:
    """With the model check on, a labelled promise the local stages neither flag nor send to
    the check would be sent with no case (bench/cases.py
    ``promise_invariant_leak_*_model_check_on``). The leak limit is 0 (it was 5)."""
    assert len(CONFIDENT_MISSES) == 0  # the count only: the dev texts stay unprinted


@pytest.mark.parametrize("cases_on", [True, False], ids=["cases_on", "cases_off"])
def test_every_promise_the_rules_miss_is_held_back_through_whole_turns(
    world: Any, cases_on: bool
) -> None:
    """All labelled promises the rules miss (not a sample), each through a whole turn with
    the label-answering check: none reaches the outbox without an open case."""
    enable_cases(world.agent_a, enabled=cases_on)
    leaks = sum(1 for t in RULES_MISS if leaked(run_turn(world, [t])))
    assert leaks == 0
