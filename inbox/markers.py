"""Per-member read markers: up to when each member has seen each conversation.

Not in ``services``: a marker is view state, like a session — it changes what one member's
list shows in bold and nothing of the product, so it writes no audit row (one per page
view would drown the log).
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from accounts.models import Membership
from conversation.models import Conversation
from inbox.models import ReadMarker


def conversation_mark_read(
    *, conversation: Conversation, membership: Membership, now: datetime | None = None
) -> ReadMarker:
    """The member has seen the conversation as of ``now``: one upsert on the unique
    (membership, conversation) pair."""
    marker, _ = ReadMarker.objects.update_or_create(
        membership=membership,
        conversation=conversation,
        defaults={"read_at": now or timezone.now()},
        create_defaults={
            "read_at": now or timezone.now(),
            "organization_id": conversation.organization_id,
        },
    )
    return marker
