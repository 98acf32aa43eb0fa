"""Review r30 of resolve_turn_agent's rules (spec Task 4), with injected loaders."""

from __future__ import annotations

from dataclasses import replace

from routers.loaders import RouterConfig
from routers.resolver import resolve_turn_agent
from tests.routers.test_resolver import ROUTER, SUPORTE, VENDAS, Fake, cascade, turn


def test_a_message_without_text_stays_with_the_conversations_agent_on_a_non_sticky_router():
    # Spec Task 4, rule 6: "signal === null (sem mensagem inbound) ⇒ sticky se houver,
    # senão fallback, senão genérico; nunca classifica." Unlike rule 2, rule 6 does not
    # depend on router.sticky: with nothing to classify (a photo with no caption), the
    # agent the conversation is with answers, not the fallback or the generic assistant.
    router = replace(ROUTER, config=replace(RouterConfig(), sticky=False))
    fake = Fake(router=router, verdict=None)
    result = resolve_turn_agent(turn(None, SUPORTE, "suporte"), fake.deps())
    assert fake.classified == []
    assert result.outcome == "sticky"
    assert result.agent_id == SUPORTE
    assert result.intent_name == "suporte"


def test_a_follow_up_without_a_subject_moves_when_the_conversation_has_no_subject_yet():
    # Spec Task 4, rule 2: with a sticky agent, "classifica assim mesmo ... Se a
    # classificação devolver intentName diferente do stickyIntent e confidence >=
    # minConfidence ⇒ troca (reclassified)". The no-subject cue keeps a follow-up on "the
    # subject on the table" — but after a fallback answer (stickyIntent null) there is none:
    # "quanto custa?" is then a first subject and moves the conversation like any other.
    fake = Fake(verdict=cascade("vendas", 0.95))
    result = resolve_turn_agent(turn("e quanto custa?", SUPORTE, None), fake.deps())
    assert fake.classified == ["e quanto custa?"]
    assert result.outcome == "reclassified"
    assert result.agent_id == VENDAS
    assert result.intent_name == "vendas"
