"""Channels, agents and versions, contacts, conversations, messages, turns, the LLM
ledger, handoffs, the knowledge base and the runtime adapters' tables. Every table carries
``organization``.

A package by topic; every name stays importable from ``conversation.models`` (the models
are registered by importing them here, and ``app_label`` stays the app's implicitly).
"""

from __future__ import annotations

from .agents import (
    Agent,
    AgentVersion,
    LlmUnavailableAction,
    ModelProvider,
    RuntimeMode,
    RuntimeProfile,
)
from .base import (
    SILENCED_FOREVER,
    TenantModel,
    TimestampedTenantModel,
    choice_check,
    not_blank_check,
)
from .channels import BreakerState, ChannelSession, Provider
from .conversations import (
    OUTBOX_IN_FLIGHT,
    Contact,
    Conversation,
    ConversationStatus,
    DeliveryFailure,
    Direction,
    Message,
    MessageStatus,
    SenderKind,
)
from .handoffs import Handoff, HandoffReason, HandoffStatus
from .knowledge import KnowledgeDocument
from .runtime import DemoInvoice, RuntimeAction, RuntimeActionOutcome, RuntimeActionTool
from .turns import (
    ACTIVE_TURN_STATUSES,
    LlmCall,
    TriggerKind,
    Turn,
    TurnOutcome,
    TurnStatus,
)

__all__ = [
    "ACTIVE_TURN_STATUSES",
    "OUTBOX_IN_FLIGHT",
    "SILENCED_FOREVER",
    "Agent",
    "AgentVersion",
    "BreakerState",
    "ChannelSession",
    "Contact",
    "Conversation",
    "ConversationStatus",
    "DeliveryFailure",
    "DemoInvoice",
    "Direction",
    "Handoff",
    "HandoffReason",
    "HandoffStatus",
    "KnowledgeDocument",
    "LlmCall",
    "LlmUnavailableAction",
    "Message",
    "MessageStatus",
    "ModelProvider",
    "Provider",
    "RuntimeAction",
    "RuntimeActionOutcome",
    "RuntimeActionTool",
    "RuntimeMode",
    "RuntimeProfile",
    "SenderKind",
    "TenantModel",
    "TimestampedTenantModel",
    "TriggerKind",
    "Turn",
    "TurnOutcome",
    "TurnStatus",
    "choice_check",
    "not_blank_check",
]
