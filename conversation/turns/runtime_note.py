"""The runtime's note for the orchestrator, when the orchestrator answers a runtime turn.

The note is appended to the customer's message for the orchestrator's call only (never
stored: ``with_orchestrator_note``). Two cases (``runtime_step``):

- the runtime fell back (it did not cover the turn): the state summary and, for some
  reasons, a directive (``orchestrator_note``);
- the runtime answered, but a before-send gate vetoed its reply after actions had really
  run against the backend (a billing system's success message that promised a person's
  call): the orchestrator, which then writes the reply, is told what was done and with
  what result, so the customer hears the truth and the action is never asked for or run
  again (``actions_note``).
"""

from __future__ import annotations

from collections.abc import Sequence

from conversation.llm.base import ChatMessage, TextBlock
from conversation.runtime import RuntimeResult
from conversation.runtime.state import ResolvedAction, ToolOutcome

NOTE_HEADER = "[Contexto do atendimento — gerado pelo sistema, não é fala do cliente]"
DIRECTIVE_HEADER = "[Instrução para esta resposta]"
ACTIONS_HEADER = "[Ações já executadas neste turno — gerado pelo sistema, não é fala do cliente]"

# What each queue tool did, as the orchestrator reads it.
ACTION_NAMES = {
    "cancelar_vas_avulso": "cancelamento avulso",
    "vas_estrategico": "cancelamento junto ao parceiro",
    "pro_rata": "ajuste proporcional da cobrança",
}
OUTCOMES = {
    ToolOutcome.SUCCESS: "concluído",
    ToolOutcome.PARTIAL: "concluído só em parte",
    ToolOutcome.NO_MATCH: "o serviço não estava ativo; nada foi feito",
    ToolOutcome.FAILURE: "falhou; não foi concluído",
}
WAITING = "iniciado; aguarda a resposta do cliente à pergunta pendente"
ACTIONS_DIRECTIVE = (
    "A mensagem do sistema sobre essas ações não foi enviada ao cliente. Conte a ele, com "
    "suas palavras, o que foi feito e o resultado de cada ação acima. Elas já foram "
    "executadas: não peça confirmação nem diga que vai fazê-las de novo, e não prometa "
    "contato ou ação de pessoas da equipe."
)


def orchestrator_note(result: RuntimeResult) -> str:
    """The state summary and the directive, as one block for the orchestrator."""
    parts = []
    if result.conversation_state_summary:
        parts.append(f"{NOTE_HEADER}\n{result.conversation_state_summary}")
    if result.orchestrator_directive:
        parts.append(f"{DIRECTIVE_HEADER}\n{result.orchestrator_directive}")
    return "\n\n".join(parts)


def actions_note(actions: Sequence[ResolvedAction], state_summary: str) -> str:
    """What the turn executed (each action and its result), the state after it and what
    to do with them: for the orchestrator that answers when the runtime's reply about
    those actions was vetoed before it reached the customer. Empty without actions."""
    if not actions:
        return ""
    lines = [f"- {_describe(action)}" for action in actions]
    parts = [ACTIONS_HEADER + "\n" + "\n".join(lines)]
    if state_summary:
        parts.append(f"{NOTE_HEADER}\n{state_summary}")
    parts.append(f"{DIRECTIVE_HEADER}\n{ACTIONS_DIRECTIVE}")
    return "\n\n".join(parts)


def _describe(action: ResolvedAction) -> str:
    name = ACTION_NAMES.get(action.tool, action.tool)
    resumed = ""
    if action.result_summary.get("resumed"):
        resumed = " (retomado com a resposta do cliente)"
    waiting = action.result_summary.get("aguardando_resposta") is True
    outcome = WAITING if waiting else OUTCOMES.get(action.outcome, action.outcome.value)
    return f"{name} de {action.subject}{resumed}: {outcome}"


def with_orchestrator_note(history: Sequence[ChatMessage], note: str) -> list[ChatMessage]:
    """``history`` with ``note`` as an extra text block on its last (customer) message.

    Only the orchestrator's request carries it: the stored messages never do.
    """
    messages = list(history)
    if not note or not messages or messages[-1].role != "user":
        return messages
    last = messages[-1]
    blocks = (TextBlock(last.content),) if isinstance(last.content, str) else tuple(last.content)
    messages[-1] = ChatMessage(role="user", content=(*blocks, TextBlock(note)))
    return messages
