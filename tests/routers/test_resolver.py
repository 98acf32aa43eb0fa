"""resolve_turn_agent (spec Task 4): the decision rule with injected loaders and
classifier. Every case asserts the outcome AND which agent ends up answering."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import pytest

from conversation.agents import AgentConfig
from routers.classification import CascadeResult
from routers.loaders import LoadedMember, LoadedRouter, RouterConfig
from routers.resolver import ResolverDeps, TurnInput, resolve_turn_agent

ORG = uuid.uuid4()
CHANNEL_AGENT, VENDAS, SUPORTE, FALLBACK = (uuid.uuid4() for _ in range(4))
NAMES = {CHANNEL_AGENT: "Canal", VENDAS: "Vendas", SUPORTE: "Suporte", FALLBACK: "Reserva"}


class Channel:
    pk = uuid.uuid4()
    organization_id = ORG


def config(agent_id: uuid.UUID) -> AgentConfig:
    return AgentConfig(
        agent_id=agent_id,
        version_id=uuid.uuid4(),
        name=NAMES[agent_id],
        prompt="",
        provider="offline",
        model="offline",
        max_steps=4,
        history_window=20,
        handoff_keywords=(),
        handoff_tool_enabled=True,
        cases_enabled=False,
        runtime_profile="",
        runtime_mode="off",
    )


ROUTER = LoadedRouter(
    id=uuid.uuid4(),
    organization_id=ORG,
    name="R",
    config=RouterConfig(min_confidence=0.6),
    fallback_agent_id=FALLBACK,
    members=(
        LoadedMember(
            uuid.uuid4(), VENDAS, "vendas", "Quer comprar ou saber preço", ("quanto custa",)
        ),
        LoadedMember(uuid.uuid4(), SUPORTE, "suporte", "Problema técnico", ()),
    ),
)


def cascade(intent: str | None, confidence: float, status: str = "ok") -> CascadeResult:
    return CascadeResult(
        intent=intent,
        confidence=confidence,
        stage="llm",
        status=status,  # type: ignore[arg-type]
        latency_ms=1.0,
        error_code="llm_timeout" if status == "failed" else "",
    )


class Fake:
    """Injected deps that record what the resolver asked for."""

    def __init__(
        self,
        router: LoadedRouter | None = ROUTER,
        verdict: CascadeResult | None = None,
        channel_agent: uuid.UUID | None = CHANNEL_AGENT,
    ) -> None:
        self.router, self.verdict, self.channel_agent = router, verdict, channel_agent
        self.classified: list[str] = []
        self.by_id: list[uuid.UUID] = []
        self.by_channel = 0

    def deps(self) -> ResolverDeps:
        def classify(router: LoadedRouter, text: str) -> CascadeResult:
            self.classified.append(text)
            assert self.verdict is not None, "classify was not expected"
            return self.verdict

        def by_id(org: uuid.UUID, agent_id: uuid.UUID) -> AgentConfig | None:
            assert org == ORG
            self.by_id.append(agent_id)
            return config(agent_id)

        def by_channel(channel: Any) -> AgentConfig | None:
            self.by_channel += 1
            return config(self.channel_agent) if self.channel_agent else None

        return ResolverDeps(
            load_active_router=lambda channel: self.router,
            classify=classify,
            load_agent_by_id=by_id,
            load_channel_agent=by_channel,
        )


def turn(signal: str | None = "quanto custa?", sticky: uuid.UUID | None = None, intent=None):
    return TurnInput(
        channel=Channel(),  # type: ignore[arg-type]
        signal=signal,
        sticky_agent_id=sticky,
        sticky_intent=intent,
    )


def test_channel_without_router_uses_the_channels_agent():
    fake = Fake(router=None)
    result = resolve_turn_agent(turn(), fake.deps())
    assert result.outcome == "no_router"
    assert result.agent_id == CHANNEL_AGENT
    assert result.router_id is None
    assert fake.by_channel == 1 and fake.classified == []


def test_confident_classification_routes_to_the_intents_agent():
    fake = Fake(verdict=cascade("vendas", 0.92))
    result = resolve_turn_agent(turn(), fake.deps())
    assert result.outcome == "classified"
    assert result.agent_id == VENDAS
    assert (result.intent_name, result.confidence, result.router_id) == ("vendas", 0.92, ROUTER.id)


def test_sticky_conversation_with_the_same_intent_keeps_its_agent():
    fake = Fake(verdict=cascade("suporte", 0.95))
    result = resolve_turn_agent(turn("ainda não abre", SUPORTE, "suporte"), fake.deps())
    assert result.outcome == "sticky"
    assert result.agent_id == SUPORTE
    assert result.confidence == 0.95  # the verdict's confidence, for telemetry


def test_clear_change_of_subject_reclassifies_to_the_new_agent():
    fake = Fake(verdict=cascade("vendas", 0.8))
    result = resolve_turn_agent(turn("e quanto custa o plano?", SUPORTE, "suporte"), fake.deps())
    assert result.outcome == "reclassified"
    assert result.agent_id == VENDAS
    assert result.intent_name == "vendas"


def test_unsure_change_of_subject_stays_with_the_sticky_agent():
    fake = Fake(verdict=cascade("vendas", 0.59))
    result = resolve_turn_agent(turn("hmm e o preço?", SUPORTE, "suporte"), fake.deps())
    assert result.outcome == "sticky"
    assert result.agent_id == SUPORTE
    assert result.intent_name == "suporte"


def test_classifier_failure_goes_to_the_fallback_agent():
    fake = Fake(verdict=cascade(None, 0.0, status="failed"))
    result = resolve_turn_agent(turn(), fake.deps())
    assert result.outcome == "classifier_failed"
    assert result.agent_id == FALLBACK
    assert result.error_code == "llm_timeout"


def test_no_match_without_fallback_answers_with_the_generic_assistant():
    fake = Fake(router=replace(ROUTER, fallback_agent_id=None), verdict=cascade(None, 0.9))
    result = resolve_turn_agent(turn("qual a capital da França?"), fake.deps())
    assert result.outcome == "no_match"
    assert result.config is None  # the turn goes on with the generic assistant
    assert fake.by_channel == 0  # not the channel's agent: the router owns this number


def test_turn_without_a_customer_message_is_never_classified():
    fake = Fake(verdict=None)
    sticky = resolve_turn_agent(turn(None, SUPORTE, "suporte"), fake.deps())
    assert sticky.outcome == "sticky" and sticky.agent_id == SUPORTE
    fallback = resolve_turn_agent(turn(None), fake.deps())
    assert fallback.outcome == "fallback" and fallback.agent_id == FALLBACK
    generic = resolve_turn_agent(
        turn(None), Fake(router=replace(ROUTER, fallback_agent_id=None)).deps()
    )
    assert generic.outcome == "no_match" and generic.config is None
    assert fake.classified == []


# --- beyond the spec's eight ----------------------------------------------------------------


def test_low_confidence_goes_to_the_fallback_agent():
    fake = Fake(verdict=cascade("vendas", 0.3))
    result = resolve_turn_agent(turn("hmm"), fake.deps())
    assert result.outcome == "fallback"
    assert result.agent_id == FALLBACK
    assert result.intent_name == "vendas"  # what the classifier thought, for telemetry


def test_classifier_failure_without_fallback_answers_generic():
    fake = Fake(router=replace(ROUTER, fallback_agent_id=None), verdict=cascade(None, 0, "failed"))
    result = resolve_turn_agent(turn(), fake.deps())
    assert result.outcome == "classifier_failed" and result.config is None


def test_sticky_agent_that_left_the_router_is_not_sticky_any_more():
    stranger = uuid.uuid4()
    NAMES[stranger] = "Antigo"
    fake = Fake(verdict=cascade("suporte", 0.9))
    result = resolve_turn_agent(turn("não abre", stranger, "antigo"), fake.deps())
    assert result.outcome == "classified"
    assert result.agent_id == SUPORTE


def test_router_without_stickiness_classifies_every_turn():
    fake = Fake(
        router=replace(ROUTER, config=RouterConfig(sticky=False)), verdict=cascade("vendas", 0.9)
    )
    result = resolve_turn_agent(turn("preço?", SUPORTE, "suporte"), fake.deps())
    assert result.outcome == "classified"
    assert result.agent_id == VENDAS


def test_sticky_turn_where_the_classifier_fails_keeps_the_agent():
    fake = Fake(verdict=cascade(None, 0.0, "failed"))
    result = resolve_turn_agent(turn("e o boleto do mês?", SUPORTE, "suporte"), fake.deps())
    assert result.outcome == "sticky" and result.agent_id == SUPORTE
    assert result.error_code == "llm_timeout"


@pytest.mark.parametrize("where", ["router", "classify", "agent"])
def test_unexpected_error_falls_back_to_the_channels_agent_and_never_raises(where):
    fake = Fake(verdict=cascade("vendas", 0.9))
    deps = fake.deps()

    def boom(*args: Any) -> Any:
        raise RuntimeError("bug")

    broken = replace(
        deps,
        **{
            {"router": "load_active_router", "classify": "classify", "agent": "load_agent_by_id"}[
                where
            ]: boom
        },
    )
    result = resolve_turn_agent(turn(), broken)
    assert result.outcome == "classifier_failed"
    assert result.error_code == "unexpected_error"
    assert result.agent_id == CHANNEL_AGENT


def test_trace_carries_ids_and_codes_never_the_text():
    fake = Fake(verdict=cascade("vendas", 0.91234))
    secret = "meu cpf é 123.456.789-00, quanto custa?"
    trace = resolve_turn_agent(turn(secret), fake.deps()).trace()
    assert trace["outcome"] == "classified"
    assert trace["agent_id"] == str(VENDAS) and trace["confidence"] == 0.912
    assert "123.456" not in str(trace)


def test_follow_up_that_names_no_subject_stays_with_the_sticky_agent_unclassified():
    # "quanto custa?" after a support question asks about the support case, however sure a
    # verdict on the message alone would be: so no verdict is asked for (no model call).
    fake = Fake(verdict=cascade("vendas", 0.99))
    result = resolve_turn_agent(turn("e quanto custa?", SUPORTE, "suporte"), fake.deps())
    assert fake.classified == []
    assert result.outcome == "sticky"
    assert result.agent_id == SUPORTE
    assert (result.intent_name, result.confidence, result.stage) == ("suporte", None, "none")
    assert result.cue == "no_subject"
    assert result.trace()["cue"] == "no_subject"


def test_a_follow_up_without_a_subject_is_classified_when_nothing_is_sticky():
    fake = Fake(verdict=cascade("vendas", 0.95))
    result = resolve_turn_agent(turn("e quanto custa?"), fake.deps())
    assert fake.classified == ["e quanto custa?"]
    assert (result.outcome, result.agent_id) == ("classified", VENDAS)


def test_change_of_subject_phrase_moves_an_unsure_verdict():
    fake = Fake(verdict=cascade("vendas", 0.45))
    text = "outra coisa, vcs tem o plano família?"
    result = resolve_turn_agent(turn(text, SUPORTE, "suporte"), fake.deps())
    assert result.outcome == "reclassified"
    assert result.agent_id == VENDAS
    assert result.cue == "opener"
    # Without the phrase the same verdict stays (below min_confidence 0.6).
    result = resolve_turn_agent(turn("vcs tem o plano família?", SUPORTE, "suporte"), fake.deps())
    assert result.outcome == "sticky"
    assert result.cue == ""
    assert "cue" not in result.trace()
    # And below the opener floor it stays too.
    fake = Fake(verdict=cascade("vendas", 0.35))
    result = resolve_turn_agent(turn(text, SUPORTE, "suporte"), fake.deps())
    assert result.outcome == "sticky"


def test_sticky_agent_without_a_recorded_intent_still_moves_on_a_clear_subject():
    fake = Fake(verdict=cascade("vendas", 0.8))
    result = resolve_turn_agent(turn("quero o plano família", SUPORTE, None), fake.deps())
    assert result.outcome == "reclassified"
    assert result.agent_id == VENDAS
    fake = Fake(verdict=cascade("vendas", 0.5))
    result = resolve_turn_agent(turn("quero o plano família", SUPORTE, None), fake.deps())
    assert (result.outcome, result.agent_id) == ("sticky", SUPORTE)
