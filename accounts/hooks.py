"""Extension points of the accounts app.

Apps above ``accounts`` register here in their ``AppConfig.ready`` so that a change of the
team reaches their rows without ``accounts`` importing them: a member who leaves the
organization, or who no longer answers (demoted to viewer), gives back what was assigned to
them — their open cases, their conversations — to the whole team, so nothing waits on
someone who cannot answer it (the "sem responsável" queues find it again).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from accounts.models import Membership

# (the member, the person acting) -> rows given back, each through its app's audited service
Unassign = Callable[[Membership, Any], int]
_unassigners: list[Unassign] = []


def register_unassign(fn: Unassign) -> None:
    if fn not in _unassigners:
        _unassigners.append(fn)


def unassign_member(membership: Membership, actor: Any) -> int:
    """Give the member's assigned work back to the team; returns how many rows moved."""
    return sum(fn(membership, actor) for fn in _unassigners)
