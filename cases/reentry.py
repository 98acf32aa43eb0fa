"""What a case reply turn needs (human-cases §4.3): the reply it relays, the agent that
relays it and the deterministic re-entry block.

The intent comes from the button the person pressed, not from the model's reading: the
block says exactly what to do. With the offline model the block also carries
``[RELAY] <text>`` lines, so the relay message is composed deterministically from the
person's text.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from cases.models import Case, CaseEvent, CaseEventKind, HumanAction
from conversation.agents import (
    AgentConfig,
    generic_agent_config,
    load_published_agent_config,
    load_published_agent_config_by_id,
)
from conversation.llm.protocol import INTERNAL_MARKER, RELAY_MARKER
from conversation.models import Conversation

RELAYED_ACTIONS = (HumanAction.RESOLVED, HumanAction.NEED_LEAD_INFO)


@dataclass(frozen=True)
class CaseReply:
    event: CaseEvent
    case: Case

    @property
    def conversation_id(self) -> uuid.UUID:
        return self.case.conversation_id


def load_reply(event_id: str) -> CaseReply | None:
    """The ``human_replied`` event a reply turn relays, or None (vanished, not a relayed
    action, or not an id at all)."""
    try:
        pk = uuid.UUID(str(event_id))
    except ValueError:
        return None
    event = (
        CaseEvent.objects.select_related("case")
        .filter(pk=pk, kind=CaseEventKind.HUMAN_REPLIED, human_action__in=RELAYED_ACTIONS)
        .first()
    )
    return CaseReply(event=event, case=event.case) if event else None


def turn_agent(reply: CaseReply, conversation: Conversation) -> AgentConfig:
    """The agent that opened the case relays its answer; else the channel's; else generic."""
    agent = None
    if reply.case.agent_id is not None:
        agent = load_published_agent_config_by_id(conversation.organization_id, reply.case.agent_id)
    agent = agent or load_published_agent_config(conversation.channel)
    return agent or generic_agent_config(
        conversation.organization.name, conversation.organization.settings
    )


def reentry_block(reply: CaseReply, *, relay: bool) -> str:
    """The internal message the model receives instead of a customer message."""
    case, text = reply.case, reply.event.body.strip()
    flat = " ".join(text.split())
    if reply.event.human_action == HumanAction.RESOLVED:
        block = (
            f"O responsável interno concluiu o caso #{case.pk} com a nota: '{flat}'. Repasse "
            "essa conclusão ao lead de forma natural e encerre o assunto."
        )
        relay_text = f"Novidades sobre “{case.title}”: {text}"
    else:
        block = (
            f"Para resolver o caso #{case.pk}, o responsável interno precisa que você obtenha "
            f"do cliente: '{flat}'. Pergunte ao lead. Quando tiver a resposta, chame "
            "provide_case_update."
        )
        relay_text = f"Para continuar com “{case.title}”, preciso de uma informação sua: {text}"
    lines = [f"{INTERNAL_MARKER} {block}"]
    if relay:
        lines += [f"{RELAY_MARKER} {line}" for line in relay_text.splitlines() if line.strip()]
    return "\n".join(lines)
