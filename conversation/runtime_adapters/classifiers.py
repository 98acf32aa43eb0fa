"""The runtime's classifiers over a model: a forced tool call whose input schema is closed.

``LlmIntentClassifier`` forces ``classificar_intencao`` with ``INTENT_CLASSIFICATION_SCHEMA``;
``LlmItemMatcher`` forces ``escolher_itens`` with the invoice's candidates as an enum. Both
go through the model seam (``model_calls.model_client`` with the turn's Ledger, so each call is an
LlmCall row with purpose ``conversation_intent_classifier`` / ``conversation_item_matcher``)
and still parse tolerantly: a tool input outside the schema, or JSON in plain text, is read
or refused here. Any failure raises the runtime's own error type, which it turns into its
fallback path (``unknown`` intent -> orchestrator; unmatched mention -> not found).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from conversation.llm.base import (
    ChatMessage,
    LlmError,
    ModelClient,
    ModelRequest,
    ModelResponse,
    ToolChoice,
    ToolSpec,
)
from conversation.runtime.intent_extractor import (
    INTENT_CLASSIFICATION_SCHEMA,
    LLM_INTENT_KINDS,
    IntentClassifierContext,
    IntentClassifierError,
)
from conversation.runtime.item_matcher import ItemMatcherError

logger = logging.getLogger(__name__)

INTENT_PURPOSE = "conversation_intent_classifier"
MATCHER_PURPOSE = "conversation_item_matcher"
INTENT_TOOL = "classificar_intencao"
MATCHER_TOOL = "escolher_itens"
# A classification is a short tool input; past this the turn stops waiting and falls back.
TIMEOUT_S = 8.0
INTENT_MAX_TOKENS = 256
MATCHER_MAX_TOKENS = 128

INTENT_SYSTEM_PROMPT = """\
Você é um classificador de intenção em atendimento sobre fatura de telecom pelo WhatsApp.
Receba o contexto do turno e a mensagem do cliente e classifique-a chamando a ferramenta \
classificar_intencao. Você não responde ao cliente: só classifica.

Categorias (kind):
- invoice_overview: o cliente quer entender a fatura em geral
- broad_invoice_complaint: reclamação genérica sobre a fatura
- conceptual_question: pergunta sobre um conceito, termo ou serviço ("o que é ...")
- value_question: pergunta específica sobre um valor ou vencimento
- action_request: pedido de ação (cancelar, tirar, contestar, devolver, estornar)
- confirmation_response: resposta a uma pergunta de confirmação ou a uma explicação
- human_or_end: o cliente quer encerrar a conversa
- off_context: mensagem fora do assunto da fatura
- unknown: não dá para classificar, um cumprimento, ou o cliente pede para falar com uma \
pessoa (o atendimento humano é decidido por outra parte do sistema)

Campos:
- mentioned_items: os nomes dos serviços ou produtos citados, como o cliente escreveu \
("quero cancelar o VOD e o HBO Max" -> ["VOD", "HBO Max"]). Quando o cliente nega ou pede \
algo sobre "nenhum deles", "nada disso", "todos esses" e há itens já listados no contexto, \
inclua todos os itens listados.
- action_verbs: os verbos de ação ("cancelar", "devolução", "ressarcimento em dobro").
- requested_action: true quando há pedido de ação.
- affirmation / negation: em confirmation_response, se a resposta é sim ou não.
- rag_query: só em conceptual_question, uma consulta por conceito no formato \
"<serviço ou conceito> o que é", sem ruído ("um tal de", "tem", "também"); \
"tamboro e tim fashion o que é" -> ["tamboro o que é", "tim fashion o que é"].

Uso do contexto:
- Se há confirmação pendente e a mensagem é uma afirmação breve ("ok", "tá bom", "pode"), \
é confirmation_response com affirmation=true.
- Se a última ação foi invoice_explanation e a mensagem é uma afirmação breve ("certo", \
"entendi"), é confirmation_response com affirmation=true.
- Uma negação breve ("não", "negativo") é confirmation_response com negation=true.
"""

INTENT_TOOL_SPEC = ToolSpec(
    name=INTENT_TOOL,
    description="Registra a classificação da mensagem do cliente.",
    input_schema=INTENT_CLASSIFICATION_SCHEMA,
)

MATCHER_SYSTEM_PROMPT = """\
Você liga a menção de um cliente a itens da fatura de telecom dele. Receba a menção \
(possivelmente com erro de digitação ou apelido) e a lista de itens da fatura, e chame a \
ferramenta escolher_itens com os itens, copiados exatamente da lista, a que a menção se \
refere. Se nenhum item corresponder, devolva a lista vazia. Na dúvida, devolva todos os \
candidatos plausíveis: o sistema pergunta ao cliente qual deles.
"""


def _schema_keys() -> frozenset[str]:
    return frozenset(INTENT_CLASSIFICATION_SCHEMA["properties"])


class _ModelPort:
    """A runtime port answered by a model: the client, the model, the ids every call is
    recorded with (the LLM ledger) and the per-call timeout."""

    def __init__(
        self,
        client: ModelClient,
        *,
        model: str,
        context: Mapping[str, Any] | None = None,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        self._client = client
        self._model = model
        self._ids = dict(context or {})
        self._timeout_s = timeout_s

    def _request(
        self, *, purpose: str, system: str, prompt: str, tool: ToolSpec, max_tokens: int
    ) -> ModelRequest:
        """One user message and a forced ``tool``, deterministic (temperature 0)."""
        return ModelRequest(
            purpose=purpose,
            model=self._model,
            system=(system,),
            messages=(ChatMessage(role="user", content=prompt),),
            tools=(tool,),
            tool_choice=ToolChoice("tool", name=tool.name),
            max_tokens=max_tokens,
            temperature=0.0,
            timeout_s=self._timeout_s,
            context=self._ids,
        )


class LlmIntentClassifier(_ModelPort):
    """``IntentClassifierLLM`` over any ``ModelClient`` (Anthropic in production)."""

    uses_history = True

    def classify(
        self,
        user_text: str,
        *,
        context: IntentClassifierContext,
        callbacks: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        request = self._request(
            purpose=INTENT_PURPOSE,
            system=INTENT_SYSTEM_PROMPT,
            prompt=intent_user_prompt(user_text, context),
            tool=INTENT_TOOL_SPEC,
            max_tokens=INTENT_MAX_TOKENS,
        )
        response = _complete(self._client, request, IntentClassifierError)
        payload = response.tool_input(INTENT_TOOL)
        if payload is None:
            _warn("no_verdict", request)
            raise IntentClassifierError("the classifier answered without a classification")
        return sanitize_intent(payload)


def sanitize_intent(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Keep the schema's keys; refuse a kind outside the closed taxonomy."""
    kind = payload.get("kind")
    if isinstance(kind, str):
        kind = kind.strip()
    if kind not in LLM_INTENT_KINDS:
        raise IntentClassifierError(f"kind outside the closed schema: {str(kind)[:40]!r}")
    out = {k: v for k, v in payload.items() if k in _schema_keys()}
    out["kind"] = kind
    return out


def intent_user_prompt(user_text: str, context: IntentClassifierContext) -> str:
    history = "\n".join(
        f"{'Cliente' if turn.role == 'customer' else 'Agente'}: {turn.text}"
        for turn in context.conversation_history
    )
    return "\n".join(
        [
            "[CONTEXTO DO TURNO]",
            f"Turno: {context.turn_index}",
            f"Há confirmação pendente: {'sim' if context.has_pending_confirmation else 'não'}",
            f"Pergunta de confirmação anterior: {context.pending_confirmation_prompt or 'nenhuma'}",
            f"Última ação executada: {context.last_tool_name or 'nenhuma'}"
            f" ({context.last_tool_kind.value if context.last_tool_kind else 'n/a'})",
            f"Última resposta de fatura: {context.last_invoice_answer or 'nenhuma'}",
            "Itens já listados ao cliente:",
            context.invoice_snapshot_items or "nenhum",
            "",
            "[HISTÓRICO RECENTE]",
            history or "(vazio)",
            "",
            "[MENSAGEM DO CLIENTE]",
            json.dumps(user_text, ensure_ascii=False),
        ]
    )


class LlmItemMatcher(_ModelPort):
    """``ItemMatcherLLM``: the candidates are the tool's enum, so the answer is a subset."""

    def match(
        self,
        mention: str,
        candidates: Sequence[str],
        *,
        callbacks: Sequence[Any] | None = None,
    ) -> list[str]:
        unique = list(dict.fromkeys(candidates))
        if not unique:
            return []
        prompt = "\n".join(
            [
                f"Menção do cliente: {json.dumps(mention, ensure_ascii=False)}",
                "Itens da fatura:",
                *(f"- {c}" for c in unique),
            ]
        )
        request = self._request(
            purpose=MATCHER_PURPOSE,
            system=MATCHER_SYSTEM_PROMPT,
            prompt=prompt,
            tool=matcher_tool(unique),
            max_tokens=MATCHER_MAX_TOKENS,
        )
        response = _complete(self._client, request, ItemMatcherError)
        payload = response.tool_input(MATCHER_TOOL)
        raw = payload.get("matches") if payload is not None else None
        if not isinstance(raw, list):
            _warn("no_verdict", request)
            raise ItemMatcherError("the matcher answered without a list of items")
        # A name outside the candidates is a hallucination: dropped, never resolved.
        picked = {m for m in raw if isinstance(m, str)}
        return [c for c in unique if c in picked]


def matcher_tool(candidates: Sequence[str]) -> ToolSpec:
    return ToolSpec(
        name=MATCHER_TOOL,
        description="Registra os itens da fatura a que a menção do cliente se refere.",
        input_schema={
            "type": "object",
            "properties": {
                "matches": {
                    "type": "array",
                    "items": {"type": "string", "enum": list(candidates)},
                }
            },
            "required": ["matches"],
            "additionalProperties": False,
        },
    )


def _complete(client: ModelClient, request: ModelRequest, error: type[Exception]) -> ModelResponse:
    try:
        return client.complete(request)
    except LlmError as exc:
        _warn(exc.code, request)
        raise error(exc.code) from exc
    except Exception as exc:
        # The seam promises LlmError only; a client bug must still not end the turn.
        logger.exception("runtime classifier crashed", extra={"purpose": request.purpose})
        raise error("unexpected_error") from exc


def _warn(code: str, request: ModelRequest) -> None:
    logger.warning(
        "runtime classifier failed",
        extra={"error_code": code, "purpose": request.purpose, **dict(request.context)},
    )
