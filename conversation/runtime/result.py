"""What ``try_handle`` returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .script_catalog import RenderedMessage, ScriptRef
from .state import ResolvedAction

Part = str | RenderedMessage


@dataclass(frozen=True)
class RuntimeResult:
    handled: bool
    content: str | None = None
    fallback_reason: str | None = None
    # Short instruction for the orchestrator, appended to the customer's message.
    orchestrator_directive: str | None = None
    conversation_state_summary: str | None = None
    # Catalog scripts said in ``content`` (id + catalog version), for auditing.
    scripts: tuple[ScriptRef, ...] = ()
    finalization: Mapping[str, Any] | None = field(default=None, hash=False)
    decision: str | None = None
    rule: str | None = None
    # The actions this turn ran against the backend, in order (with their outcomes): what
    # the orchestrator must be told if ``content`` never reaches the customer.
    actions: tuple[ResolvedAction, ...] = field(default=(), hash=False)

    @property
    def payload(self) -> dict[str, Any] | None:
        if not self.handled:
            return None
        out: dict[str, Any] = {"content": self.content}
        if self.scripts:
            out["scripts"] = [
                {"script_id": s.script_id, "catalog_version": s.catalog_version}
                for s in self.scripts
            ]
        if self.finalization is not None:
            out["finalization"] = dict(self.finalization)
        return out

    @classmethod
    def handled_text(cls, text: str, **kwargs: Any) -> RuntimeResult:
        return cls(handled=True, content=text, **kwargs)

    @classmethod
    def fallback(cls, reason: str, **kwargs: Any) -> RuntimeResult:
        return cls(handled=False, fallback_reason=reason, **kwargs)


def reply(parts: Sequence[Part], **kwargs: Any) -> RuntimeResult:
    text = "\n\n".join(str(p) for p in parts if str(p))
    refs = tuple(p.ref for p in parts if isinstance(p, RenderedMessage) and p.ref is not None)
    return RuntimeResult.handled_text(text, scripts=refs, **kwargs)
