"""The inbox side of ``accounts.hooks``: a member who leaves the organization or becomes a
viewer gives the conversations assigned to them back to the whole team (registered in
``InboxConfig.ready``). Counted in the caller's audit row (``membership.remove`` /
``membership.role_change`` record ``unassigned``)."""

from __future__ import annotations

from typing import Any

from accounts.models import Membership
from conversation.models import Conversation
from inbox.services import conversation_assign


def unassign_conversations(membership: Membership, actor: Any) -> int:
    conversations = list(
        Conversation.objects.filter(
            organization_id=membership.organization_id, assigned_to=membership
        ).select_related("contact")
    )
    for conversation in conversations:
        conversation_assign(conversation=conversation, assignee=None, actor=actor)
    return len(conversations)
