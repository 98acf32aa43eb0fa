"""The router learns only what an admin accepts: LLM verdicts become suggested phrases
(PII stripped), accepting one teaches the local stage, rejecting one keeps it from coming
back. Also the pieces issue 13 fixed around it: the chart counts a fallback as a fallback,
the label dropdown starts empty, the generic agent stays within the enabled models, the
sticky agent's config is cached per published version, and workers warm the encoder up."""

from __future__ import annotations

from typing import Any

import pytest
from celery.signals import worker_process_init, worker_ready
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from conversation.agents import generic_agent_config, generic_model
from conversation.models import Conversation, Message, Turn
from routers import selectors, services, signals
from routers.cascade_runner import classify_message
from routers.classification import CascadeResult
from routers.classification import encoder as encoder_module
from routers.classification.learning import strip_pii, suggested_intent
from routers.classification.semantic import SemanticHead
from routers.errors import RouterInvalid
from routers.loaders import load_router
from routers.models import (
    LabelledPhrase,
    Router,
    RouterDecision,
    RouterSuggestion,
    SuggestionStatus,
)
from tests import factories
from tests.conftest import simulator_post
from tests.fakes.anthropic_bodies import tool_use_response
from tests.routers.factories import SUPORTE, VENDAS, make_router

UNSURE = "olá, queria tirar uma dúvida com vocês"


@pytest.fixture
def routed(world):
    vendas = factories.make_agent(world.org_a, "Vendas")
    suporte = factories.make_agent(world.org_a, "Suporte técnico")
    channel = factories.make_channel(world.org_a, agent=world.agent_a)
    router = make_router(channel, [(vendas, VENDAS), (suporte, SUPORTE)])
    return {"channel": channel, "router": router, "vendas": vendas, "suporte": suporte}


def say(channel: Any, text: str, capture: Any, msg_id: str) -> Turn:
    with capture(execute=True):
        simulator_post(Client(), channel, text, msg_id=msg_id)
    return Turn.objects.get(trigger_key=Message.objects.get(provider_message_id=msg_id).pk)


def llm_verdict(intent: str | None, confidence: float) -> CascadeResult:
    return CascadeResult(
        intent=intent, confidence=confidence, stage="llm", status="ok", latency_ms=1.0
    )


# --- pure rules -------------------------------------------------------------------------


def test_strip_pii_replaces_the_personal_data_a_customer_types():
    text = (
        "meu cpf é 123.456.789-00, cel (11) 98765-4321, email ana.souza@gmail.com, "
        "cartão 4111 1111 1111 1111, pedido 98765432 e cep 01310-100 www.x.com/a"
    )
    clean = strip_pii(text)
    assert clean == (
        "meu cpf é [cpf], cel [telefone], email [email], cartão [cartao], pedido [numero] "
        "e cep [cep] [link]"
    )


@given(
    st.from_regex(r"\A\d{3}\.?\d{3}\.?\d{3}-?\d{2}\Z"),
    st.text(alphabet=st.characters(categories=("Ll", "Lu", "Zs")), max_size=30),
)
def test_strip_pii_leaves_no_cpf_digits_for_any_cpf(cpf: str, around: str):
    clean = strip_pii(f"{around} {cpf} . {around}")
    assert cpf not in clean
    assert "[cpf]" in clean or "[cnpj]" in clean or "[telefone]" in clean


def test_only_a_confident_llm_verdict_is_worth_suggesting():
    assert suggested_intent(llm_verdict("vendas", 0.9), min_confidence=0.6) == "vendas"
    assert suggested_intent(llm_verdict(None, 0.9), min_confidence=0.6) == "none"
    assert suggested_intent(llm_verdict("vendas", 0.4), min_confidence=0.6) is None
    local = CascadeResult(intent="vendas", confidence=0.9, stage="local", status="ok", latency_ms=1)
    assert suggested_intent(local, min_confidence=0.6) is None
    failed = CascadeResult(intent=None, confidence=0, stage="llm", status="failed", latency_ms=1)
    assert suggested_intent(failed, min_confidence=0.6) is None


# --- from a turn to a suggestion to a lesson ---------------------------------------------


def test_an_llm_decided_turn_leaves_a_pii_free_suggestion_and_nothing_learned(
    claude, routed, django_capture_on_commit_callbacks
):
    claude.enqueue_json(
        200, tool_use_response("classify_intent", {"intent": "vendas", "confidence": 0.93})
    )
    say(
        routed["channel"],
        f"{UNSURE}, meu cpf é 123.456.789-00",
        django_capture_on_commit_callbacks,
        "s-1",
    )
    suggestion = RouterSuggestion.objects.get()
    assert suggestion.text == f"{UNSURE}, meu cpf é [cpf]"
    assert (suggestion.intent_name, suggestion.status) == ("vendas", SuggestionStatus.PENDING)
    assert suggestion.conversation_id == Conversation.objects.get().pk
    assert LabelledPhrase.objects.count() == 0  # nothing learned without an admin
    assert RouterDecision.objects.get().stage == "llm"


def test_a_locally_decided_turn_suggests_nothing(routed, django_capture_on_commit_callbacks):
    say(routed["channel"], "quanto custa o plano?", django_capture_on_commit_callbacks, "s-2")
    assert RouterSuggestion.objects.count() == 0


def test_the_same_text_is_suggested_once_and_a_rejected_one_never_again(routed, world):
    router = routed["router"]
    first = services.suggestion_record(router=router, text="tem loja física?", intent_name="vendas")
    assert first is not None
    assert services.suggestion_record(router=router, text="tem loja física?") is None
    services.suggestion_reject(suggestion=first, actor=world.admin)
    assert services.suggestion_record(router=router, text="tem loja física?") is None
    assert RouterSuggestion.objects.get().status == SuggestionStatus.REJECTED


def test_accepting_a_suggestion_teaches_the_local_stage(routed, world):
    router = routed["router"]
    text = "vocês entregam em Niterói?"
    before = load_router(router)
    suggestion = services.suggestion_record(router=router, text=text, intent_name="vendas")
    assert suggestion is not None
    stamp = Router.objects.get(pk=router.pk).updated_at

    phrase = services.suggestion_accept(suggestion=suggestion, actor=world.admin)

    assert (phrase.text, phrase.intent_name) == (text, "vendas")
    assert Router.objects.get(pk=router.pk).updated_at > stamp  # every process retrains
    after = load_router(router)
    assert [(p.text, p.intent) for p in after.phrases] == [(text, "vendas")]
    assert before.phrases == ()
    result = classify_message(after, text, recorder=_NoLedger(), org_settings={}, context={})
    assert (result.intent, result.stage) == ("vendas", "local")


def test_an_admin_may_accept_a_suggestion_as_another_intent(routed, world):
    suggestion = services.suggestion_record(
        router=routed["router"], text="o boleto não abre", intent_name="vendas"
    )
    assert suggestion is not None
    services.suggestion_accept(suggestion=suggestion, actor=world.admin, intent_name="suporte")
    assert LabelledPhrase.objects.get().intent_name == "suporte"
    assert RouterSuggestion.objects.get().status == SuggestionStatus.ACCEPTED


def test_a_suggestion_for_an_intent_the_router_lost_cannot_be_accepted(routed, world):
    suggestion = services.suggestion_record(
        router=routed["router"], text="quero um orçamento", intent_name="orcamento"
    )
    assert suggestion is not None
    with pytest.raises(RouterInvalid):
        services.suggestion_accept(suggestion=suggestion, actor=world.admin)
    assert LabelledPhrase.objects.count() == 0


class _NoLedger:
    def record(self, *args: Any, **kwargs: Any) -> None:  # offline: nothing is called
        return None


# --- the router page --------------------------------------------------------------------


def test_an_admin_accepts_a_suggestion_in_one_click_on_the_router_page(routed, world):
    router = routed["router"]
    suggestion = services.suggestion_record(router=router, text="aceita pix?", intent_name="vendas")
    assert suggestion is not None
    client = Client()
    client.force_login(world.admin)
    page = client.get(f"/roteadores/{router.pk}/")
    assert "aceita pix?" in page.content.decode()
    response = client.post(
        f"/roteadores/{router.pk}/sugestoes/{suggestion.pk}/aceitar/", HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert "aceita pix?" not in response.content.decode()  # the list re-rendered without it
    assert LabelledPhrase.objects.get().text == "aceita pix?"


def test_an_accept_by_htmx_says_how_it_went_in_the_list_and_not_again_later(routed, world):
    router = routed["router"]
    kept = services.suggestion_record(router=router, text="tem pix?", intent_name="vendas")
    lost = services.suggestion_record(router=router, text="orçamento?", intent_name="orcamento")
    assert kept is not None and lost is not None
    client = Client()
    client.force_login(world.admin)
    base = f"/roteadores/{router.pk}/sugestoes"

    done = client.post(f"{base}/{kept.pk}/aceitar/", HTTP_HX_REQUEST="true").content.decode()
    # "orcamento" is no intent of the router any more: the refusal shows at the click.
    refused = client.post(f"{base}/{lost.pk}/aceitar/", HTTP_HX_REQUEST="true").content.decode()
    page = client.get(f"/roteadores/{router.pk}/").content.decode()

    assert "Frase aceita" in done
    assert 'class="flash flash-error"' in refused
    assert "Frase aceita" not in page  # consumed where it was shown


def test_a_manager_cannot_accept_or_reject_suggestions(routed, world):
    suggestion = services.suggestion_record(router=routed["router"], text="oi", intent_name="none")
    assert suggestion is not None
    client = Client()
    client.force_login(world.manager)
    for action in ("aceitar", "recusar"):
        response = client.post(
            f"/roteadores/{routed['router'].pk}/sugestoes/{suggestion.pk}/{action}/"
        )
        assert response.status_code == 403
    assert RouterSuggestion.objects.get().status == SuggestionStatus.PENDING


def test_after_a_test_no_label_is_preselected(routed, world):
    client = Client()
    client.force_login(world.admin)
    response = client.post(
        f"/roteadores/{routed['router'].pk}/testar/",
        {"message": "bom dia"},
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    select = html[
        html.index('id="label-intent"') : html.index("</select>", html.index('id="label-intent"'))
    ]
    assert select.count(" selected") == 1 and 'value="" selected disabled' in select


def test_the_chart_counts_a_fallback_as_no_intent_and_shows_who_decided(routed):
    router = routed["router"]
    for outcome, intent, stage in [
        ("fallback", "vendas", "local"),
        ("fallback", "vendas", "local"),
        ("no_match", "vendas", "llm"),
        ("classified", "suporte", "local"),
    ]:
        RouterDecision.objects.create(
            organization=router.organization,
            router=router,
            intent_name=intent,
            outcome=outcome,
            stage=stage,
            confidence=0.3,
        )
    stats = selectors.decision_stats(router)
    assert {k: sum(v) for k, v in stats.intent_mix.items()} == {"suporte": 1, "": 3}
    assert (sum(stats.stage_mix["local"]), sum(stats.stage_mix["llm"])) == (3, 1)
    assert stats.local_percent == 75


# --- the generic agent and the sticky agent's config ---------------------------------------


def test_the_generic_agent_runs_on_a_model_the_organization_enabled(settings):
    settings.ANTHROPIC_DEFAULT_MODEL = "claude-sonnet-4-5"
    assert generic_model(None) == "claude-sonnet-4-5"
    assert generic_model({"llm": {"enabled_models": ["claude-haiku-4-5"]}}) == "claude-haiku-4-5"
    chosen = {
        "llm": {
            "enabled_models": ["claude-haiku-4-5", "claude-opus-4-1"],
            "default_model": "claude-opus-4-1",
        }
    }
    assert generic_agent_config("Loja", chosen).model == "claude-opus-4-1"


def test_a_sticky_turn_uses_the_agents_newly_published_version(
    routed, world, django_capture_on_commit_callbacks
):
    first = say(
        routed["channel"], "quanto custa o plano?", django_capture_on_commit_callbacks, "v-1"
    )
    old_version = routed["vendas"].published_version_id
    assert first.agent_version_id == old_version
    new_version = _publish_again(routed["vendas"], world)
    second = say(
        routed["channel"], "e tem desconto à vista?", django_capture_on_commit_callbacks, "v-2"
    )
    assert second.trace["route"]["outcome"] == "sticky"
    assert second.agent_version_id == new_version != old_version


def _publish_again(agent: Any, world: Any) -> Any:
    from conversation import services as conversation_services

    version = conversation_services.agent_version_create(
        agent=agent, actor=world.admin, prompt="Você vende planos. (v2)"
    )
    conversation_services.agent_publish(agent=agent, version=version, actor=world.admin)
    return version.pk


# --- the encoder: wired, warmed up, and replaced by the lexical stage when it can't load ---


def test_the_cascade_uses_the_semantic_head_when_the_encoder_loads(routed):
    loaded = load_router(routed["router"])
    from routers.classification.local import local_classifier_for

    assert isinstance(local_classifier_for(loaded.intent_options(), loaded.phrases), SemanticHead)


def test_without_the_encoder_the_lexical_classifier_routes(routed, monkeypatch, caplog):
    monkeypatch.setenv(encoder_module.ENCODER_ENV, "nonexistent")
    encoder_module.reset_encoder()
    try:
        loaded = load_router(routed["router"])
        result = classify_message(
            loaded, "quanto custa o plano?", recorder=_NoLedger(), org_settings={}, context={}
        )
        assert (result.intent, result.stage) == ("vendas", "local")
        assert "routing with the lexical classifier" in caplog.text
    finally:
        monkeypatch.delenv(encoder_module.ENCODER_ENV)
        encoder_module.reset_encoder()


@pytest.mark.parametrize("signal", [worker_process_init, worker_ready], ids=lambda s: s.name)
def test_worker_start_signals_load_the_router_encoder(signal: Any, monkeypatch: Any) -> None:
    calls: list[int] = []
    monkeypatch.setattr(signals, "warm_up", lambda: calls.append(1))
    signal.send(sender=None)
    assert calls == [1]


def test_a_failing_encoder_warm_up_never_stops_the_worker(monkeypatch: Any) -> None:
    def broken() -> None:
        raise RuntimeError("wheel missing")

    monkeypatch.setattr(signals, "warm_up", broken)
    worker_process_init.send(sender=None)  # logged, not raised
