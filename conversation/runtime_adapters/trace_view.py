"""The runtime's decision trace, in words a non-developer reads (pt-BR, through i18n).

``conversation.turns.runtime_step`` writes codes (``ask_confirmation``, ``uncovered_intent``,
``cancelar_vas_single``); the conversation page shows ``runtime_trace_view`` of them, and the
analytics page labels fallback reasons with ``fallback_reason_label``. A code without a label
(a future reason) still shows, as "outro motivo" with the code beside it for the developer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from conversation.models import RuntimeActionOutcome, RuntimeActionTool, RuntimeMode

from .telemetry import OutcomeCounts, fallback_reason, turn_category

Label = str | Promise

DECISION_LABELS: dict[str, Label] = {
    "ask_confirmation": _("Pedir a confirmação do cliente"),
    "ask_which_line": _("Perguntar de qual linha é o serviço"),
    "reask_confirmation": _("Lembrar o pedido pendente antes de encerrar"),
    "ask_again": _("Perguntar de novo (a resposta não valia como confirmação)"),
    "execute_action_queue": _("Executar o que o cliente confirmou"),
    "resume_workflow": _("Retomar o atendimento pausado com a resposta do cliente"),
    "withdraw": _("Deixar de lado o pedido pendente, como o cliente pediu"),
    "call_informative_tool": _("Explicar a fatura"),
    "rag": _("Responder pela base de conhecimento"),
    "item_not_found": _("Dizer que o serviço não está na fatura"),
    "finalize": _("Encerrar a conversa"),
    "fallback_to_orchestrator": _("Passar a vez ao orquestrador (IA generativa)"),
}
RULE_LABELS: dict[str, Label] = {
    "consent": _("consentimento"),
    "confirmation_manager": _("das três guardas da confirmação"),
    "resume": _("retomada"),
    "default": _("padrão"),
}
INTENT_LABELS: dict[str, Label] = {
    "start": _("início da conversa"),
    "invoice_overview": _("quer entender a fatura"),
    "broad_invoice_complaint": _("reclamação geral da fatura"),
    "conceptual_question": _("pergunta sobre um serviço ou termo"),
    "value_question": _("pergunta sobre um valor"),
    "action_request": _("pedido de ação (cancelar, contestar)"),
    "confirmation_response": _("resposta a uma pergunta"),
    "human_or_end": _("despedida ou pedido de atendente"),
    "off_context": _("fora do assunto da fatura"),
    "unknown": _("não identificada"),
}
SOURCE_LABELS: dict[str, Label] = {
    "rules": _("regra rápida"),
    "llm": _("classificador"),
    "fallback": _("classificador indisponível"),
}
REASON_LABELS: dict[str, Label] = {
    "uncovered_intent": _("pedido que o runtime não cobre"),
    "negation_without_pending": _("um “não” sem pergunta pendente"),
    "confirmation_response_negation_pending": _("o cliente recusou a confirmação pendente"),
    "ambiguous_item_match": _("serviço em mais de uma linha"),
    "goodbye_with_pending": _("despedida com um pedido pendente"),
    "rag_no_query": _("pergunta sem termo para buscar"),
    "rag_no_answer": _("a base de conhecimento não tinha a resposta"),
    "invoice_explanation_failed": _("a explicação da fatura falhou"),
    "invoice_unavailable": _("fatura indisponível"),
    "runtime_error": _("erro no runtime"),
}
INVOICE_ERROR_LABELS: dict[str, Label] = {
    "billing_timeout": _("o sistema de cobrança não respondeu a tempo"),
    "billing_unreachable": _("o sistema de cobrança está fora do ar"),
    "billing_unauthorized": _("o sistema de cobrança recusou a credencial"),
    "billing_rejected": _("o sistema de cobrança recusou o pedido"),
    "billing_rate_limited": _("o sistema de cobrança limitou as chamadas"),
    "billing_unavailable": _("o sistema de cobrança está indisponível"),
    "billing_bad_request": _("o sistema de cobrança não aceitou o pedido"),
    "billing_bad_response": _("o sistema de cobrança respondeu algo ilegível"),
    "billing_not_found": _("o cliente não tem fatura no sistema de cobrança"),
}
FINALIZATION_LABELS: dict[str, Label] = {
    "resolvido": _("resolvido"),
    "nao_resolvido": _("não resolvido"),
    "outros_assuntos": _("outros assuntos"),
}
STATE_LABELS: dict[str, Label] = {
    "new": _("novo"),
    "migrated": _("convertido de uma versão anterior"),
    "reset": _("reiniciado (versão desconhecida)"),
    "reopened": _("reaberto depois de encerrado"),
}
CLASSIFIER_LABELS: dict[str, Label] = {
    "offline": _("local (sem modelo)"),
    "llm": _("modelo de linguagem"),
}
BACKEND_LABELS: dict[str, Label] = {
    "demo": _("fatura de demonstração"),
    "http": _("sistema de cobrança"),
    "dry_run": _("simulação (nada é executado)"),
}
TOOL_LABELS: dict[str, Label] = {str(c.value): c.label for c in RuntimeActionTool}
OUTCOME_LABELS: dict[str, Label] = {
    **{str(c.value): c.label for c in RuntimeActionOutcome},
    "simulated": _("simulada"),
}
HOOK_LABELS: dict[str, Label] = {
    "on_turn_started": _("turno iniciado"),
    "on_confirmation_requested": _("confirmação pedida"),
    "on_confirmation_consumed": _("confirmação aceita"),
    "on_action_started": _("ação iniciada"),
    "on_action_completed": _("ação concluída"),
    "on_workflow_paused": _("atendimento pausado numa pergunta"),
    "on_workflow_resumed": _("atendimento retomado"),
    "on_invoice_answer": _("resposta sobre a fatura"),
    "on_informative_answered": _("explicação dada"),
    "on_off_context_detected": _("mensagem fora do assunto"),
    "on_in_context_message": _("de volta ao assunto"),
    "on_finalization_emitted": _("conversa encerrada"),
    "on_next_action_requested": _("próxima ação"),
    "on_finalize_recommended": _("encerramento recomendado"),
    "on_turn_continued": _("conversa segue aberta"),
    "on_invoice_snapshot_populated": _("itens da fatura guardados"),
    "on_invoice_snapshot_invalidated": _("itens da fatura descartados"),
    "on_msisdn_changed": _("linha ativa trocada"),
    "on_decision_traced": _("decisão registrada"),
}
OTHER = _("outro motivo")


def label(table: Mapping[str, Label], code: Any) -> str:
    """The pt-BR label of ``code``; an unknown code as "outro motivo (code)"."""
    text = table.get(str(code))
    return str(text) if text is not None else f"{OTHER} ({code})"


def fallback_reason_label(code: str) -> str:
    return label(REASON_LABELS, code)


@dataclass(frozen=True)
class TraceLine:
    label: str
    value: str


@dataclass(frozen=True)
class RuntimeTraceView:
    """One turn's runtime entry, ready for ``_turn_runtime.html``."""

    shadow: bool
    skipped: bool
    rows: tuple[TraceLine, ...]


def runtime_trace_view(trace: Any) -> RuntimeTraceView | None:
    """The readable rows of ``trace["runtime"]``; None when the turn has none."""
    rt = trace.get("runtime") if isinstance(trace, Mapping) else None
    if not isinstance(rt, Mapping):
        return None
    shadow = rt.get("mode") == RuntimeMode.SHADOW
    rows: list[TraceLine] = []

    def add(name: Label, value: Any) -> None:
        rows.append(TraceLine(str(name), str(value)))

    add(_("Runtime"), _("sombra (decide, não responde)") if shadow else _("ligado"))
    add(_("Resultado"), _outcome(rt, shadow))
    if rt.get("invoice_error"):
        add(_("Fatura"), label(INVOICE_ERROR_LABELS, rt["invoice_error"]))
    if rt.get("unseen_turn"):
        add(
            _("Consentimento"),
            _(
                "houve mensagens fora do runtime desde a última pergunta: "
                "um “sim” agora faz a pergunta de novo"
            ),
        )
    if rt.get("decision"):
        add(_("Decisão"), f"{label(DECISION_LABELS, rt['decision'])} · {_rule(rt.get('rule'))}")
    if rt.get("intent"):
        source = f" ({label(SOURCE_LABELS, rt['source'])})" if rt.get("source") else ""
        add(_("Intenção"), f"{label(INTENT_LABELS, rt['intent'])}{source}")
    actions = [a for a in rt.get("actions") or () if isinstance(a, Mapping)]
    if actions:
        add(
            _("Ações") if not shadow else _("Ações simuladas"),
            " · ".join(
                f"{n}. {label(TOOL_LABELS, a.get('tool'))} "
                f"({label(OUTCOME_LABELS, a.get('outcome'))})"
                for n, a in enumerate(actions, start=1)
            ),
        )
    if rt.get("finalization"):
        add(_("Encerramento"), label(FINALIZATION_LABELS, rt["finalization"]))
    if rt.get("scripts"):
        add(
            _("Roteiros"),
            ", ".join(
                f"{s.get('script_id')}@{s.get('catalog_version')}"
                for s in rt["scripts"]
                if isinstance(s, Mapping)
            ),
        )
    if rt.get("directive") or rt.get("note"):
        add(
            _("Contexto ao orquestrador"),
            _("resumo do estado e instrução") if rt.get("directive") else _("resumo do estado"),
        )
    state = rt.get("state")
    if state and state != "restored":
        value = label(STATE_LABELS, state)
        if rt.get("state_discarded"):
            value = f"{value} · {_('descartado (a resposta não foi enviada)')}"
        add(_("Estado"), value)
    elif rt.get("state_discarded"):
        add(_("Estado"), _("descartado (a resposta não foi enviada)"))
    if rt.get("classifier") or rt.get("backend"):
        parts = []
        if rt.get("classifier"):
            parts.append(f"{_('classificador')}: {label(CLASSIFIER_LABELS, rt['classifier'])}")
        if rt.get("backend"):
            parts.append(f"{_('ações')}: {label(BACKEND_LABELS, rt['backend'])}")
        add(_("Componentes"), " · ".join(parts))
    hooks = [h for h in rt.get("hooks") or () if isinstance(h, Mapping)]
    if hooks:
        add(_("Etapas do estado"), " → ".join(label(HOOK_LABELS, h.get("hook")) for h in hooks))
    return RuntimeTraceView(shadow=shadow, skipped=bool(rt.get("skipped")), rows=tuple(rows))


def _outcome(rt: Mapping[str, Any], shadow: bool) -> str:
    category = turn_category(rt)
    if category == "skipped":
        return str(_("não rodou: desligado pela chave geral (o orquestrador respondeu)"))
    if category is None:
        return str(_("sem decisão"))
    if rt.get("error"):
        return str(_("erro no runtime: o orquestrador respondeu"))
    answered = rt.get("handled") is True
    if shadow:
        if answered:
            return str(_("Teria respondido o cliente"))
        return f"{_('Teria passado ao orquestrador')}: {fallback_reason_label(fallback_reason(rt))}"
    if answered:
        return str(_("respondeu o cliente"))
    reason = fallback_reason_label(fallback_reason(rt))
    return f"{_('passou ao orquestrador, que respondeu')}: {reason}"


def _rule(rule: Any) -> str:
    text = str(rule or "")
    if text in RULE_LABELS:
        return f"{_('regra')} {RULE_LABELS[text]}"
    return f"{_('regra')} {text}" if text else str(_("sem regra"))


@dataclass(frozen=True)
class OutcomesView:
    """A conversation's (or a period's) figures with labelled reasons."""

    counts: OutcomeCounts
    reasons: tuple[TraceLine, ...]


def outcomes_view(counts: OutcomeCounts | None) -> OutcomesView | None:
    if counts is None:
        return None
    reasons = tuple(TraceLine(fallback_reason_label(code), str(n)) for code, n in counts.reasons)
    return OutcomesView(counts=counts, reasons=reasons)


def runtime_sentence(trace: Any) -> str | None:
    """One sentence for a turn's summary ("O runtime pediu a confirmação do cliente."), or
    None when the turn has no runtime entry. For pages that summarise turns in words."""
    rt = trace.get("runtime") if isinstance(trace, Mapping) else None
    category = turn_category(rt)
    if category is None:
        return None
    assert isinstance(rt, Mapping)
    if category == "skipped":
        return str(_("O runtime estava desligado pela chave geral: o orquestrador respondeu."))
    if rt.get("error"):
        return str(_("O runtime falhou nesta mensagem: o orquestrador respondeu."))
    decision = label(DECISION_LABELS, rt.get("decision")) if rt.get("decision") else ""
    if category == "shadow":
        return str(_("Em sombra, o runtime teria decidido: %(decision)s.")) % {
            "decision": decision or fallback_reason_label(fallback_reason(rt))
        }
    if category == "fallback":
        return str(_("O runtime passou ao orquestrador: %(reason)s.")) % {
            "reason": fallback_reason_label(fallback_reason(rt))
        }
    done = [
        label(TOOL_LABELS, a.get("tool"))
        for a in rt.get("actions") or ()
        if isinstance(a, Mapping) and a.get("outcome") in ("success", "partial")
    ]
    if done:
        return str(_("O runtime respondeu e executou: %(actions)s.")) % {"actions": ", ".join(done)}
    return str(_("O runtime respondeu: %(decision)s.")) % {"decision": decision}
