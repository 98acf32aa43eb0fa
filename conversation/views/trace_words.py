"""The turn's trace in words, for the conversation page and the simulator (issue 16 item 7).

The trace stores ids and codes only (never text). Here they become what a non-developer
reads: agents and documents by name, the routing decision as a sentence ("Roteado para
Financeiro — confiança 0,91, classificador local"). Names come from at most two queries
for the whole page — agents the page does not know yet, and the documents the turns
consulted — so the query count does not grow with the number of turns.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from django.utils.formats import number_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from conversation.models import Agent, Conversation, KnowledgeDocument, Turn
from conversation.runtime_adapters.trace_view import runtime_sentence
from routers.models import DecisionOutcome, DecisionStage

GUARD_WORDS: dict[str, Any] = {
    "opt_out": gettext_lazy("O cliente pediu para não receber mais mensagens: descadastrado."),
    "opt_in": gettext_lazy("O cliente pediu para voltar a receber mensagens."),
    "opted_out": gettext_lazy("Contato descadastrado: a IA não respondeu."),
    "human_owned": gettext_lazy("Uma pessoa da equipe cuida desta conversa: a IA não respondeu."),
    "handoff_keyword": gettext_lazy(
        "O cliente pediu um atendente: conversa transferida para a equipe."
    ),
    "staff_case_answer": gettext_lazy("Resposta da equipe a um caso, enviada ao cliente."),
}


@dataclass
class Names:
    """Agent and document names by id (str), for one page."""

    agents: dict[str, str] = field(default_factory=dict)
    documents: dict[str, str] = field(default_factory=dict)

    def agent(self, agent_id: Any) -> str:
        return self.agents.get(str(agent_id), _("agente removido")) if agent_id else ""

    def document(self, document_id: Any) -> str:
        return self.documents.get(str(document_id), _("documento removido"))


def _uuids(values: Iterable[Any]) -> set[str]:
    found = set()
    for value in values:
        try:
            found.add(str(uuid.UUID(str(value))))
        except (ValueError, TypeError):
            continue
    return found


def _route(trace: dict[str, Any]) -> dict[str, Any]:
    route = trace.get("route")
    return route if isinstance(route, dict) else {}


def _agent_ids(trace: dict[str, Any]) -> list[Any]:
    route = _route(trace)
    return [trace.get("agent_id"), route.get("agent_id")]


def _document_ids(trace: dict[str, Any]) -> list[Any]:
    hits = trace.get("knowledge_hits")
    ids: list[Any] = []
    if isinstance(hits, list):
        for search in hits:
            ids.extend(search if isinstance(search, list) else [search])
    return ids


def names_for(conversation: Conversation, turns: list[Turn]) -> Names:
    """Every agent and document the turns' traces name. Agents already loaded with the
    turns (their version's agent) or the conversation cost no query."""
    names = Names()
    for turn in turns:
        version = turn.agent_version
        if version is not None and version.agent is not None:
            names.agents[str(version.agent_id)] = version.agent.name
    channel_agent = conversation.channel.agent if conversation.channel_id else None
    if channel_agent is not None:
        names.agents[str(channel_agent.pk)] = channel_agent.name
    traces = [t.trace for t in turns if isinstance(t.trace, dict)]
    wanted = _uuids(i for tr in traces for i in _agent_ids(tr)) - set(names.agents)
    if wanted:
        rows = Agent.objects.filter(organization_id=conversation.organization_id, pk__in=wanted)
        names.agents.update((str(pk), name) for pk, name in rows.values_list("pk", "name"))
    documents = _uuids(i for tr in traces for i in _document_ids(tr))
    if documents:
        rows_d = KnowledgeDocument.objects.filter(
            organization_id=conversation.organization_id, pk__in=documents
        )
        names.documents.update((str(pk), title) for pk, title in rows_d.values_list("pk", "title"))
    return names


def confidence_words(confidence: Any) -> str:
    """0.912 → "0,91" (the page's locale)."""
    try:
        return str(number_format(float(confidence), 2))
    except (TypeError, ValueError):
        return ""


def route_words(route: Any, names: Names) -> str:
    """The routing decision as one sentence."""
    if not isinstance(route, dict):
        return ""
    agent = names.agent(route.get("agent_id"))
    source = route.get("source")
    if source == "channel":
        return _("Atendido pelo agente do canal") + (f": {agent}" if agent else "")
    if source == "generic":
        return _("Sem agente configurado: resposta genérica")
    outcome = str(route.get("outcome") or "")
    leads: dict[str, str] = {
        DecisionOutcome.CLASSIFIED: _("Roteado para %(agent)s"),
        DecisionOutcome.STICKY: _("Continuou com %(agent)s (mesmo assunto)"),
        DecisionOutcome.RECLASSIFIED: _("Mudou de assunto: roteado para %(agent)s"),
        DecisionOutcome.FALLBACK: _("Sem certeza: agente de reserva %(agent)s"),
        DecisionOutcome.NO_MATCH: _("Nenhuma intenção reconhecida: atendimento padrão"),
        DecisionOutcome.CLASSIFIER_FAILED: _("O classificador falhou: atendido por %(agent)s"),
    }
    lead = leads.get(outcome, _("Roteamento: %(agent)s"))
    sentence = lead % {"agent": agent or _("agente padrão")}
    details = []
    if route.get("intent"):
        details.append(_("intenção “%(intent)s”") % {"intent": route["intent"]})
    if route.get("confidence") is not None:
        details.append(_("confiança %(c)s") % {"c": confidence_words(route["confidence"])})
    stage = route.get("stage")
    if stage in (DecisionStage.LOCAL, DecisionStage.LLM):
        details.append(_("local") if stage == DecisionStage.LOCAL else _("modelo de linguagem"))
    if route.get("error"):
        details.append(_("erro do classificador"))
    return f"{sentence} — {', '.join(str(d) for d in details)}" if details else str(sentence)


BUDGET_WORDS: dict[str, Any] = {
    "monthly_spend": gettext_lazy(
        "O limite mensal de gastos com modelos foi atingido: o modelo não foi chamado."
    ),
    "contact_rate": gettext_lazy(
        "Este contato passou do limite de mensagens por minuto: o modelo não foi chamado."
    ),
}


def turn_summary(trace: Any, names: Names) -> list[str]:
    """What happened in the turn, in a few sentences for a non-developer."""
    if not isinstance(trace, dict):
        return []
    lines: list[str] = []
    guard = trace.get("guard")
    if isinstance(guard, str) and guard in GUARD_WORDS:
        lines.append(str(GUARD_WORDS[guard]))
    routed = route_words(trace.get("route"), names)
    if routed:
        lines.append(routed)
    elif trace.get("agent_id"):
        lines.append(_("Respondido por %(agent)s") % {"agent": names.agent(trace["agent_id"])})
    documents = list(dict.fromkeys(str(d) for d in _document_ids(trace)))
    if documents:
        titles = ", ".join(f"“{names.document(d)}”" for d in documents)
        lines.append(_("Consultou a base de conhecimento: %(titles)s") % {"titles": titles})
    runtime = runtime_sentence(trace)
    if runtime:
        lines.append(runtime)
    budget = trace.get("budget")
    if isinstance(budget, dict) and budget.get("stop"):
        lines.append(str(BUDGET_WORDS.get(budget["stop"], BUDGET_WORDS["monthly_spend"])))
    if trace.get("vetoes"):
        lines.append(_("Uma resposta foi barrada pelas regras de segurança antes do envio."))
    if trace.get("cases_opened"):
        lines.append(_("Abriu um caso para a equipe."))
    if trace.get("handoff"):
        lines.append(_("Transferiu a conversa para a equipe."))
    if trace.get("followups_cancelled"):
        lines.append(_("Cancelou acompanhamentos pendentes."))
    if trace.get("gave_up"):
        lines.append(_("Desistiu depois de várias tentativas e passou para a equipe."))
    return lines


def annotate_turns(conversation: Conversation, turns: list[Turn]) -> Names:
    """Each turn gets ``summary`` (sentences) and ``answered_by`` (the agent's name)."""
    names = names_for(conversation, turns)
    for turn in turns:
        trace = turn.trace if isinstance(turn.trace, dict) else {}
        turn.summary = turn_summary(trace, names)  # type: ignore[attr-defined]
        agent_id = trace.get("agent_id") or (
            turn.agent_version.agent_id if turn.agent_version is not None else None
        )
        turn.answered_by = names.agent(agent_id) if agent_id else ""  # type: ignore[attr-defined]
        rows = getattr(turn, "trace_rows", None)
        if rows:
            # The developer trace keeps the id, next to the name.
            turn.trace_rows = [  # type: ignore[attr-defined]
                replace(row, value=f"{names.agent(row.value)} ({row.value})")
                if row.key == "agent_id" and row.value not in ("", "—")
                else row
                for row in rows
            ]
    return names


def last_answering_agent(turns: list[Turn]) -> str:
    """The name of the agent of the newest turn that had one (turns newest first)."""
    for turn in turns:
        name = getattr(turn, "answered_by", "")
        if name:
            return str(name)
    return ""


PURPOSE_WORDS: dict[str, Any] = {
    "orchestrator": gettext_lazy("resposta ao cliente"),
    "intent_router": gettext_lazy("roteamento (classificar a intenção)"),
    "conversation_intent_classifier": gettext_lazy("intenção da conversa"),
    "promise_check": gettext_lazy("checagem de promessa"),
}


def label_calls(calls: Iterable[Any]) -> None:
    """Each model call gets ``purpose_label``: what it was for, in words."""
    for call in calls:
        call.purpose_label = str(PURPOSE_WORDS.get(call.purpose, call.purpose))


def tag_replies(messages: list[Any]) -> None:
    """The simulator's replies get ``reply_agent`` and ``reply_intent``: which agent
    answered and the intent the router chose (one query for all of them, the turns with
    their version's agent)."""
    turn_ids = {m.turn_id for m in messages if m.direction == "outbound" and m.turn_id}
    if not turn_ids:
        return
    turns = {
        t.pk: t
        for t in Turn.objects.filter(pk__in=turn_ids)
        .select_related("agent_version__agent")
        .only("id", "trace", "agent_version__id", "agent_version__agent__name")
    }
    for message in messages:
        turn = turns.get(message.turn_id) if message.direction == "outbound" else None
        if turn is None:
            continue
        trace = turn.trace if isinstance(turn.trace, dict) else {}
        route = _route(trace)
        version = turn.agent_version
        message.reply_agent = version.agent.name if version is not None else ""
        message.reply_intent = str(route.get("intent") or "")
