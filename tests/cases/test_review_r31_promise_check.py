"""The promise gate's model check and its block message (review r31).

Oracles:
- the issue: "when the workspace has a model, send only the uncertain band to a cheap
  closed-schema check ... and fail closed: a check that errors or times out counts as a
  promise"; a check that cannot run at all (the organization is past its AI budget) is a
  check that errors;
- DESIGN §3: the organization's settings say which LLM models are enabled; every model call
  of a turn respects them (a turn whose agent model is no longer enabled runs on the
  organization's generic model — its ``default_model`` when enabled);
- human-cases §6 (the teaching error): it tells the model to open a case, or to say only
  what it does itself now; it never lists words to avoid; and it is written in the agent's
  language (an agent told in English gets it in English).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from cases import promise_gate
from cases.guardrail import CASE_PROMISE_TEACHING_EN, CASE_PROMISE_TEACHING_PT
from cases.guardrail.promise import assess_promise
from cases.guardrail.teaching import case_promise_teaching
from cases.models import Case
from conversation import model_calls
from conversation.agents import AgentConfig, generic_agent_config
from conversation.llm.base import ToolResultBlock
from conversation.models import Turn
from conversation.turns.context import new_context
from tests import factories
from tests.cases.conftest import PHONE, Script, end, open_case, promise_check_answer, say, tool

# A near miss (the AI did it itself now) that the local stages are unsure about.
UNSURE = "Consultei o sistema e a sua consulta está marcada para terça, às 9h, com a Dra. Renata."
PROMISE_EN = "I'll check with our team and get back to you."
PROMISE_PT = "Vou verificar com a equipe e te retorno."
ENGLISH_PROMPT = (
    "You are the support assistant of Acme Rentals. Answer customers in English, politely "
    "and briefly. Use the knowledge base for prices and policies, and never invent a date."
)


def _restrict_models(org: Any, enabled: list[str], default: str) -> None:
    org.settings = {"llm": {"enabled_models": enabled, "default_model": default}}
    org.save(update_fields=["settings"])


def _no_answer(_request: Any) -> Any:
    raise AssertionError("the check must not be asked")


# --- 1. the check's model is one the organization enables ---------------------------------


def test_the_check_runs_on_an_enabled_model_when_the_configured_one_is_not(
    cases_world, settings, django_capture_on_commit_callbacks
):
    assert assess_promise(UNSURE).uncertain
    settings.PROMISE_CHECK_MODEL = "claude-haiku-4-5"
    _restrict_models(
        cases_world.org_a, ["claude-sonnet-5-5", "claude-haiku-5-5"], "claude-sonnet-5-5"
    )
    script = Script(
        [tool("send_message", {"text": UNSURE}), end()],
        promise_check=lambda _request: promise_check_answer(False),
    )
    with script:
        say(cases_world.channel_a, "minha consulta?", "m-1", django_capture_on_commit_callbacks)

    assert [r.model for r in script.checks] == ["claude-sonnet-5-5"]  # the org's default model
    trace = Turn.objects.get().trace
    assert trace["promise_check_model_substituted"] == {
        "configured": "claude-haiku-4-5",
        "used": "claude-sonnet-5-5",
    }


def test_the_configured_check_model_is_used_when_the_organization_enables_it(
    cases_world, settings, django_capture_on_commit_callbacks
):
    settings.PROMISE_CHECK_MODEL = "claude-haiku-5-5"
    _restrict_models(
        cases_world.org_a, ["claude-sonnet-5-5", "claude-haiku-5-5"], "claude-sonnet-5-5"
    )
    script = Script(
        [tool("send_message", {"text": UNSURE}), end()],
        promise_check=lambda _request: promise_check_answer(False),
    )
    with script:
        say(cases_world.channel_a, "minha consulta?", "m-2", django_capture_on_commit_callbacks)

    assert [r.model for r in script.checks] == ["claude-haiku-5-5"]
    assert "promise_check_model_substituted" not in Turn.objects.get().trace


# --- 2. a check that cannot run (over budget) fails closed --------------------------------


def _gate_context(world: Any, *, provider: str = "anthropic") -> Any:
    conversation = factories.make_conversation(world.channel_a, phone=PHONE)
    message = factories.make_message(conversation, "minha consulta?")
    turn = factories.make_turn(conversation, status="running", outcome="")
    ctx = new_context(conversation, turn, [message], {})
    ctx.agent = AgentConfig(
        agent_id=world.agent_a.pk,
        version_id=None,
        name="Suporte",
        prompt="Você atende como Suporte.",
        provider=provider,
        model="claude-haiku-4-5",
        max_steps=4,
        history_window=20,
        handoff_keywords=(),
        handoff_tool_enabled=True,
        cases_enabled=True,
        runtime_profile="",
        runtime_mode="off",
    )
    return ctx


def test_over_budget_with_a_model_configured_the_uncertain_band_counts_as_a_promise(
    cases_world, settings
):
    assessment = assess_promise(UNSURE)
    assert assessment.uncertain and not assessment.promise
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    settings.ANTHROPIC_BASE_URL = "http://127.0.0.1:9"  # nothing may be called anyway
    ctx = _gate_context(cases_world)

    with model_calls.spend_stopped("monthly_spend"):
        verdict = promise_gate.case_promise_send_gate(ctx, UNSURE)

    assert verdict is not None  # not sent: the check could not run, so it is a promise
    assert ctx.trace["promise_checks"] == [{"stage": "model", "promise": True, "check": "error"}]


def test_offline_without_a_model_the_uncertain_band_stays_local(cases_world, settings):
    """No API key: the workspace has no model; the local stages decide (documented)."""
    settings.ANTHROPIC_API_KEY = ""
    ctx = _gate_context(cases_world)

    assert promise_gate.case_promise_send_gate(ctx, UNSURE) is None
    assert "promise_checks" not in ctx.trace


# --- 3. the teaching error follows the agent's language -----------------------------------


def _teaching_received(model: Any) -> list[str]:
    return [
        block.content
        for request in model.requests
        for message in request.messages
        if not isinstance(message.content, str)
        for block in message.content
        if isinstance(block, ToolResultBlock) and block.is_error
    ]


def test_an_agent_told_in_english_gets_the_teaching_error_in_english(
    world, django_capture_on_commit_callbacks
):
    agent = factories.make_agent(world.org_a, "Acme", prompt=ENGLISH_PROMPT, cases_enabled=True)
    channel = factories.make_channel(world.org_a, agent=agent)
    with Script([tool("send_message", {"text": PROMISE_EN}), end()]) as model:
        say(
            channel,
            "my car broke down, can someone help?",
            "en-1",
            django_capture_on_commit_callbacks,
        )

    assert Turn.objects.get().trace["vetoes"] == ["case_promise_without_case"]
    assert _teaching_received(model) == [CASE_PROMISE_TEACHING_EN]
    assert not Case.objects.exists()


def test_an_agent_told_in_portuguese_gets_the_teaching_error_in_portuguese(
    cases_world, django_capture_on_commit_callbacks
):
    with Script([tool("send_message", {"text": PROMISE_PT}), end()]) as model:
        say(cases_world.channel_a, "meu acesso caiu", "pt-1", django_capture_on_commit_callbacks)

    assert _teaching_received(model) == [CASE_PROMISE_TEACHING_PT]


@pytest.mark.parametrize(
    ("prompt", "teaching"),
    [
        (generic_agent_config("Loja Demo").prompt, CASE_PROMISE_TEACHING_PT),
        ("Você atende como Suporte.", CASE_PROMISE_TEACHING_PT),
        ("", CASE_PROMISE_TEACHING_PT),  # pt-BR first
        ("Atenda em português. Our brand name is Blue Sky.", CASE_PROMISE_TEACHING_PT),
        (ENGLISH_PROMPT, CASE_PROMISE_TEACHING_EN),
        ("You are Max, the assistant of a bakery. Be brief.", CASE_PROMISE_TEACHING_EN),
    ],
)
def test_the_teaching_language_is_the_language_the_agent_is_told_in(prompt, teaching):
    assert case_promise_teaching(prompt) == teaching


@pytest.mark.parametrize("teaching", [CASE_PROMISE_TEACHING_PT, CASE_PROMISE_TEACHING_EN])
def test_the_teaching_names_the_ways_out_and_no_words_to_avoid(teaching):
    assert "`open_human_case`" in teaching  # open a case ...
    assert re.search(r"\b(agora|now)\b", teaching)  # ... or say only what it does now
    # No quoted phrase: it never lists words or expressions to avoid.
    assert not re.search(r"[\"“”«»]|'[^']+'", teaching)


# --- 4. the turn's deferred re-check is part of what the gate needs of the turn -----------


class _NoDefer:
    """A turn as the gate needs it, minus ``defer`` (the finish's re-check hook)."""

    def __init__(self, ctx: Any) -> None:
        self.conversation, self.turn, self.agent = ctx.conversation, ctx.turn, ctx.agent
        self.trace, self.vetoes, self.cases_opened = ctx.trace, ctx.vetoes, ctx.cases_opened
        self.customer_text = ctx.customer_text


def test_a_covered_promise_defers_its_recheck_to_the_finish(cases_world, settings):
    settings.ANTHROPIC_API_KEY = ""
    ctx = _gate_context(cases_world, provider="offline")
    open_case(ctx.conversation)

    assert promise_gate.case_promise_send_gate(ctx, PROMISE_PT) is None
    assert len(ctx.effects) == 1  # the locked re-check, ahead of the text's outbox row


def test_a_turn_that_cannot_defer_the_recheck_never_lets_the_promise_go_unchecked(
    cases_world, settings
):
    """The re-check at the send is what keeps "never a promise without an open case" when
    the team closes the case meanwhile; a turn without the hook must not pass the text
    silently unguarded."""
    settings.ANTHROPIC_API_KEY = ""
    ctx = _gate_context(cases_world, provider="offline")
    open_case(ctx.conversation)

    with pytest.raises(AttributeError):
        promise_gate.case_promise_send_gate(_NoDefer(ctx), PROMISE_PT)
