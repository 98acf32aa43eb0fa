"""Router test helpers: a router with intents over distinct agents, and a model client
that scripts the router's classifier while the orchestrator stays offline."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from conversation.llm.base import (
    CallRecorder,
    LlmError,
    ModelRequest,
    ModelResponse,
    TextBlock,
    ToolUseBlock,
    Usage,
)
from conversation.llm.offline import OfflineModel
from conversation.llm.scripted import ScriptedModel
from routers.models import Router, RouterMember
from tests import factories

VENDAS = (
    "vendas",
    "O cliente quer comprar, saber preço, desconto ou condições de pagamento de uma compra.",
    ["quanto custa?", "qual o preço do plano", "quero comprar", "tem desconto à vista?"],
)
SUPORTE = (
    "suporte",
    "O cliente tem um problema técnico: o sistema não abre, dá erro ou não consegue entrar.",
    ["meu sistema não abre", "está dando erro", "não consigo entrar", "o app travou"],
)
FINANCEIRO = (
    "financeiro",
    "O cliente fala de boleto, segunda via, fatura, pagamento ou cobrança.",
    ["preciso da segunda via do boleto", "meu boleto venceu", "fui cobrado duas vezes"],
)


def make_router(
    channel: Any,
    intents: Iterable[tuple[Any, tuple[str, str, list[str]]]],
    *,
    fallback: Any = None,
    name: str = "Atendimento",
    **config: Any,
) -> Router:
    base = {
        "classifier_model": "claude-haiku-4-5",
        "sticky": True,
        "min_confidence": 0.6,
        "local_accept_threshold": 0.85,
    }
    base.update(config)
    router = Router.objects.create(
        organization=channel.organization,
        name=name,
        channel=channel,
        fallback_agent=fallback,
        config=base,
    )
    for position, (agent, (intent, description, examples)) in enumerate(intents):
        RouterMember.objects.create(
            organization=channel.organization,
            router=router,
            agent=agent,
            intent_name=intent,
            intent_description=description,
            examples=examples,
            position=position,
        )
    return router


def routed_world(world: Any, **config: Any) -> dict[str, Any]:
    """Org A's channel (agent "Suporte") routed over Vendas and Suporte agents."""
    vendas = factories.make_agent(world.org_a, "Vendas")
    suporte = world.agent_a
    router = make_router(world.channel_a, [(vendas, VENDAS), (suporte, SUPORTE)], **config)
    return {"router": router, "vendas": vendas, "suporte": suporte}


def verdict(intent: str, confidence: float) -> ModelResponse:
    """A classifier answer as a forced tool call."""
    return ModelResponse(
        content=(
            ToolUseBlock(
                id="toolu_test",
                name="classify_intent",
                input={"intent": intent, "confidence": confidence},
            ),
        ),
        stop_reason="tool_use",
        model="claude-haiku-4-5",
        usage=Usage(input_tokens=300, output_tokens=20),
    )


def text_answer(text: str) -> ModelResponse:
    return ModelResponse(
        content=(TextBlock(text),), stop_reason="end_turn", model="claude-haiku-4-5"
    )


class ClassifierScript:
    """``model_calls.use_model_client`` factory: ``intent_router`` calls answer from one shared
    script; every other purpose (the orchestrator) gets the offline model."""

    def __init__(self, items: Iterable[ModelResponse | LlmError]) -> None:
        self.scripted = ScriptedModel(items)
        self.requests: list[ModelRequest] = self.scripted.requests

    def __call__(self, recorder: CallRecorder) -> Any:
        script = self

        class _Client:
            name = "scripted"

            def complete(self, request: ModelRequest) -> ModelResponse:
                if request.purpose == "intent_router":
                    script.scripted._recorder = recorder
                    return script.scripted.complete(request)
                return OfflineModel(recorder=recorder).complete(request)

        return _Client()


# --- the router pages' POST bodies and query counts ------------------------------------


def formset_data(rows: list[dict[str, Any]], *, initial: int = 0) -> dict[str, str]:
    """The intents formset of the router page (prefix ``members``) as POST data."""
    data = {
        "members-TOTAL_FORMS": str(len(rows)),
        "members-INITIAL_FORMS": str(initial),
        "members-MIN_NUM_FORMS": "0",
        "members-MAX_NUM_FORMS": "1000",
    }
    for i, row in enumerate(rows):
        for key, value in row.items():
            data[f"members-{i}-{key}"] = value
    return data


def router_data(world: Any, **overrides: Any) -> dict[str, str]:
    """The router page's own fields as POST data (org A's channel, no fallback)."""
    data = {
        "name": "Atendimento",
        "channel": str(world.channel_a.pk),
        "fallback_agent": "",
        "is_active": "on",
        "sticky": "on",
        "min_confidence": "0.6",
        "local_accept_threshold": "0.85",
        "classifier_model": "claude-haiku-4-5",
    }
    data.update(overrides)
    return data


def data_queries(ctx: Any) -> list[str]:
    """The SQL that reads or writes data: savepoints and PostgreSQL's row-level-security
    context (set_config/current_setting) aside, so the count is the same on both engines."""
    return [
        q["sql"]
        for q in ctx.captured_queries
        if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))
        and "set_config(" not in q["sql"]
        and "current_setting(" not in q["sql"]
    ]
