"""Extension points of the accounts app, and the ``Hook`` every app's extension points are.

Apps above ``accounts`` register here in their ``AppConfig.ready`` so that a change of the
team reaches their rows without ``accounts`` importing them: a member who leaves the
organization, or who no longer answers (demoted to viewer), gives back what was assigned to
them — their open cases, their conversations — to the whole team, so nothing waits on
someone who cannot answer it (the "sem responsável" queues find it again).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, ParamSpec

from accounts.models import Membership

P = ParamSpec("P")


class Hook(Generic[P]):
    """One extension point: the functions apps above registered (each once, however often
    its ``ready`` runs), called in order with the same arguments. Each returns how many of
    its rows it touched; the hook returns the sum."""

    def __init__(self) -> None:
        self._fns: list[Callable[P, int]] = []

    def register(self, fn: Callable[P, int]) -> None:
        if fn not in self._fns:
            self._fns.append(fn)

    def run(self, *args: P.args, **kwargs: P.kwargs) -> int:
        return sum(fn(*args, **kwargs) for fn in self._fns)


# (the member, the person acting) -> rows given back, each through its app's audited service
_unassigners: Hook[[Membership, Any]] = Hook()
register_unassign = _unassigners.register


def unassign_member(membership: Membership, actor: Any) -> int:
    """Give the member's assigned work back to the team; returns how many rows moved."""
    return _unassigners.run(membership, actor)
