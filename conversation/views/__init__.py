"""Pages of the back office: conversations, handoff inbox, agents, channels, knowledge base,
simulator.

Thin views: parse, authorize (``role_required`` + ``access``), call one service, render.
Full-page POSTs redirect; htmx POSTs answer with the re-rendered fragments.
"""

from conversation.views.agents import agent_create, agent_detail, agent_version_publish, agents
from conversation.views.channels import (
    channel_assign,
    channel_connect_meta,
    channel_connect_waha,
    channel_detail,
    channel_new_secret,
    channel_set_active,
    channel_test,
    channels,
)
from conversation.views.conversations import (
    conversation_detail,
    conversation_take_over,
    conversations,
    message_resend,
)
from conversation.views.handoffs import (
    handoff_badge,
    handoff_detail,
    handoff_messages,
    handoff_reply,
    handoff_return,
    handoffs,
)
from conversation.views.knowledge import (
    knowledge,
    knowledge_create,
    knowledge_delete,
    knowledge_edit,
)
from conversation.views.media import (
    channel_templates,
    channel_templates_sync,
    conversation_send_media,
    conversation_send_template,
    message_media,
)
from conversation.views.simulator import (
    simulator,
    simulator_channel_create,
    simulator_chat,
    simulator_send,
)

__all__ = [
    "agent_create",
    "agent_detail",
    "agent_version_publish",
    "agents",
    "channel_assign",
    "channel_connect_meta",
    "channel_connect_waha",
    "channel_detail",
    "channel_new_secret",
    "channel_set_active",
    "channel_templates",
    "channel_templates_sync",
    "channel_test",
    "channels",
    "conversation_detail",
    "conversation_send_media",
    "conversation_send_template",
    "conversation_take_over",
    "conversations",
    "handoff_badge",
    "handoff_detail",
    "handoff_messages",
    "handoff_reply",
    "handoff_return",
    "handoffs",
    "knowledge",
    "knowledge_create",
    "knowledge_delete",
    "knowledge_edit",
    "message_media",
    "message_resend",
    "simulator",
    "simulator_channel_create",
    "simulator_chat",
    "simulator_send",
]
