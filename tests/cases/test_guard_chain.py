"""The promise guardrail's chain (human-cases §6): the fail-safe table and its invariant."""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cases.guardrail import (
    AUTOFALLBACK_SOURCE,
    CASE_PROMISE_TEACHING_EN,
    CASE_PROMISE_TEACHING_PT,
    CASE_PROMISE_WITHOUT_CASE,
    GUARD_CHAIN,
    GUARD_CHAIN_VERSION,
    PROMISE_DETECTOR_VERSION,
    GuardContext,
    GuardVerdict,
    VerdictKind,
    case_promise_stage,
    detect_human_promise,
    run_guard_chain,
)

PROMISES = [
    "Vou verificar com a equipe e te retorno.",
    "Um atendente vai entrar em contato com você em breve.",
    "já repassei pro time, blz?",
    "Assim que tiver uma resposta te aviso 😊",
]
NON_PROMISES = [
    "Vou verificar aqui na sua fatura.",
    "Estou à disposição!",
    "Quer que eu encaminhe para a equipe?",
    "",
]


def ctx(
    body: str,
    *,
    open_case: bool = False,
    opened_now: bool = False,
    vetoes: int = 0,
    enabled: bool = True,
) -> GuardContext:
    return GuardContext(
        body=body,
        has_open_case_for_lead=open_case,
        case_opened_this_turn=opened_now,
        prior_vetoes_this_turn=vetoes,
        cases_enabled=enabled,
    )


def test_bodies_used_here_are_classified_as_intended() -> None:
    assert all(detect_human_promise(body) for body in PROMISES)
    assert not any(detect_human_promise(body) for body in NON_PROMISES)


# --- the fail-safe table, row by row ---------------------------------------------------------


def expected_kind(
    *, enabled: bool, open_case: bool, opened_now: bool, vetoes: int, promise: bool
) -> VerdictKind:
    """§6 written out as a table (see the docstring of cases.guardrail.chain)."""
    if not enabled or open_case or opened_now or not promise:
        return VerdictKind.ALLOW
    return VerdictKind.VETO if vetoes == 0 else VerdictKind.ALLOW_WITH_AUTOFALLBACK


TABLE = list(
    itertools.product(
        [True, False],  # cases_enabled
        [True, False],  # has_open_case_for_lead
        [True, False],  # case_opened_this_turn
        [0, 1, 2],  # prior_vetoes_this_turn
        [True, False],  # promise in the body
    )
)


@pytest.mark.parametrize(("enabled", "open_case", "opened_now", "vetoes", "promise"), TABLE)
def test_fail_safe_table_row(
    enabled: bool, open_case: bool, opened_now: bool, vetoes: int, promise: bool
) -> None:
    body = PROMISES[vetoes % len(PROMISES)] if promise else NON_PROMISES[vetoes]
    verdict = run_guard_chain(
        ctx(body, open_case=open_case, opened_now=opened_now, vetoes=vetoes, enabled=enabled)
    )
    assert verdict.kind is expected_kind(
        enabled=enabled, open_case=open_case, opened_now=opened_now, vetoes=vetoes, promise=promise
    )


def test_first_promise_without_case_is_vetoed_with_the_teaching_error() -> None:
    verdict = run_guard_chain(ctx("Vou verificar com a equipe e te retorno."))

    assert verdict.kind is VerdictKind.VETO
    assert not verdict.sends
    assert verdict.code == CASE_PROMISE_WITHOUT_CASE == "case_promise_without_case"
    assert verdict.stage == "case_promise_stage"
    assert verdict.error_message == CASE_PROMISE_TEACHING_PT
    assert verdict.promise is not None and verdict.promise.rule_id == "check_with_human"


def test_teaching_error_names_the_tool_and_both_ways_out() -> None:
    for text in (CASE_PROMISE_TEACHING_PT, CASE_PROMISE_TEACHING_EN):
        assert "`open_human_case`" in text
    assert "Você prometeu envolver um humano mas não abriu caso" in CASE_PROMISE_TEACHING_PT
    assert "reformule sem prometer humano" in CASE_PROMISE_TEACHING_PT
    assert "rephrase without promising a human" in CASE_PROMISE_TEACHING_EN


def test_second_promise_in_the_turn_goes_out_after_auto_opening_a_case() -> None:
    verdict = run_guard_chain(ctx("Vou verificar com a equipe e te retorno.", vetoes=1))

    assert verdict.kind is VerdictKind.ALLOW_WITH_AUTOFALLBACK
    assert verdict.sends
    assert verdict.code == CASE_PROMISE_WITHOUT_CASE
    assert verdict.error_message is None
    assert verdict.promise is not None
    assert AUTOFALLBACK_SOURCE == "guardrail_autofallback"


def test_promise_with_a_case_already_open_for_the_lead_is_allowed_without_a_new_case() -> None:
    verdict = run_guard_chain(ctx("Vou verificar com a equipe.", open_case=True, vetoes=1))
    assert verdict == GuardVerdict(VerdictKind.ALLOW)


def test_promise_after_opening_a_case_in_the_same_turn_is_allowed() -> None:
    assert (
        run_guard_chain(ctx("Vou verificar com a equipe.", opened_now=True)).kind
        is VerdictKind.ALLOW
    )


def test_stage_is_off_when_cases_are_disabled_for_the_agent() -> None:
    # §5.3: with cases_enabled off there are no case tools to call, so no veto either.
    verdict = run_guard_chain(ctx("Vou verificar com a equipe.", enabled=False, vetoes=5))
    assert verdict.kind is VerdictKind.ALLOW and verdict.promise is None


def test_plain_allow_carries_no_code_nor_message() -> None:
    verdict = run_guard_chain(ctx("Estou à disposição!"))
    assert (verdict.kind, verdict.code, verdict.error_message, verdict.stage) == (
        VerdictKind.ALLOW,
        None,
        None,
        None,
    )


# --- the chain ------------------------------------------------------------------------------


def veto_stage(ctx: GuardContext) -> GuardVerdict:
    return GuardVerdict(VerdictKind.VETO, stage="veto_stage", code="other_reason")


def fallback_stage(ctx: GuardContext) -> GuardVerdict:
    return GuardVerdict(VerdictKind.ALLOW_WITH_AUTOFALLBACK, stage="fallback_stage", code="x")


def allow_stage(ctx: GuardContext) -> GuardVerdict:
    return GuardVerdict(VerdictKind.ALLOW)


def test_chain_contains_the_case_promise_stage() -> None:
    assert case_promise_stage in GUARD_CHAIN


def test_first_veto_in_the_chain_wins() -> None:
    promise = ctx("Vou verificar com a equipe.")
    assert run_guard_chain(promise, [veto_stage, case_promise_stage]).code == "other_reason"
    assert (
        run_guard_chain(promise, [case_promise_stage, veto_stage]).code == CASE_PROMISE_WITHOUT_CASE
    )


def test_later_veto_beats_an_earlier_auto_fallback() -> None:
    # A message that will not be sent must not cause a case to be auto-opened.
    assert run_guard_chain(ctx("oi"), [fallback_stage, veto_stage]).stage == "veto_stage"


def test_auto_fallback_survives_stages_that_allow() -> None:
    assert (
        run_guard_chain(ctx("oi"), [allow_stage, fallback_stage, allow_stage]).stage
        == "fallback_stage"
    )


def test_empty_chain_allows() -> None:
    assert run_guard_chain(ctx("Vou verificar com a equipe."), []).kind is VerdictKind.ALLOW


def test_chain_version_changes_with_the_detector_version() -> None:
    assert PROMISE_DETECTOR_VERSION in GUARD_CHAIN_VERSION


def test_context_rejects_a_negative_veto_counter() -> None:
    with pytest.raises(ValueError, match="negative"):
        ctx("oi", vetoes=-1)


def test_context_and_verdict_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx("oi").body = "outra"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        run_guard_chain(ctx("oi")).kind = VerdictKind.VETO  # type: ignore[misc]


# --- the invariant over whole conversations --------------------------------------------------

# What the model does next: send a message (promise or not), call open_human_case, or the
# turn ends and the customer writes again.
Step = tuple[str, str]
steps = st.one_of(
    st.tuples(st.just("send"), st.sampled_from(PROMISES + NON_PROMISES)),
    st.tuples(st.just("open_case"), st.just("")),
    st.tuples(st.just("new_turn"), st.just("")),
)


@dataclass
class Simulation:
    """The orchestrator's side of §6: counters per turn and the effect of each verdict."""

    cases_enabled: bool
    case_open: bool = False
    opened_this_turn: bool = False
    vetoes_this_turn: int = 0
    auto_opened: int = 0
    max_vetoes_in_a_turn: int = 0

    def send(self, body: str) -> bool:
        verdict = run_guard_chain(
            GuardContext(
                body=body,
                has_open_case_for_lead=self.case_open,
                case_opened_this_turn=self.opened_this_turn,
                prior_vetoes_this_turn=self.vetoes_this_turn,
                cases_enabled=self.cases_enabled,
            )
        )
        if verdict.kind is VerdictKind.VETO:
            self.vetoes_this_turn += 1
            self.max_vetoes_in_a_turn = max(self.max_vetoes_in_a_turn, self.vetoes_this_turn)
            return False
        if verdict.kind is VerdictKind.ALLOW_WITH_AUTOFALLBACK:
            self.case_open = self.opened_this_turn = True
            self.auto_opened += 1
        return True

    def open_case(self) -> None:
        self.case_open = self.opened_this_turn = True

    def new_turn(self) -> None:
        self.opened_this_turn = False
        self.vetoes_this_turn = 0


@settings(max_examples=300)
@given(st.lists(steps, max_size=30), st.booleans())
def test_no_promise_reaches_the_customer_without_an_open_case(
    script: list[Step], cases_enabled: bool
) -> None:
    sim = Simulation(cases_enabled=cases_enabled)
    for action, body in script:
        if action == "open_case":
            sim.open_case()
        elif action == "new_turn":
            sim.new_turn()
        else:
            delivered = sim.send(body)
            is_promise = detect_human_promise(body) is not None
            if delivered and is_promise and cases_enabled:
                assert sim.case_open, "a promise went out while no case was open"
            if not is_promise or not cases_enabled:
                assert delivered, "only a promise with the guardrail on is ever held back"
    assert sim.auto_opened <= 1
    # The model is taught once per turn, never stuck: a second attempt always goes out.
    assert sim.max_vetoes_in_a_turn <= 1
