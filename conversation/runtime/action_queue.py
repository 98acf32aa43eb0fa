"""Build the ``ActionQueue`` from resolved items, in the fixed tool order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from .state import ActionQueue, ActionStep, ResolvedInvoiceItem, ToolCategory
from .textnorm import join_pt

# Single avulso cancellations first, pro rata next, strategic partners (retention flows) last.
ACTION_ORDER: dict[ToolCategory, int] = {
    "cancelar_vas_avulso": 0,
    "pro_rata": 1,
    "vas_estrategico": 2,
}


def item_to_dict(item: ResolvedInvoiceItem) -> dict[str, Any]:
    """JSON-safe form of an item as carried by an ``ActionStep`` (Decimal -> str)."""
    return {
        "canonical_name": item.canonical_name,
        "tool_category": item.tool_category,
        "item_type": item.item_type,
        "msisdn": item.msisdn,
        "value": str(item.value) if item.value is not None else None,
        "section": item.section,
        "raw_entry": dict(item.raw_entry),
    }


class ActionQueueBuilder:
    def build(self, items: Sequence[ResolvedInvoiceItem]) -> ActionQueue:
        groups: dict[ToolCategory, list[ResolvedInvoiceItem]] = {}
        for item in items:
            groups.setdefault(item.tool_category, []).append(item)
        steps = [
            ActionStep(
                tool=tool,
                subject=self._subject_for(groups[tool]),
                items=tuple(item_to_dict(i) for i in groups[tool]),
            )
            for tool in sorted(groups, key=ACTION_ORDER.__getitem__)
        ]
        return ActionQueue(steps=steps, cursor=0)

    def _subject_for(self, items: Sequence[ResolvedInvoiceItem]) -> str:
        return join_pt([i.canonical_name for i in items])


def item_from_dict(data: Mapping[str, Any]) -> ResolvedInvoiceItem:
    """The inverse of ``item_to_dict`` (items carried by a queue or a line question)."""
    value = data.get("value")
    return ResolvedInvoiceItem(
        canonical_name=str(data["canonical_name"]),
        tool_category=data["tool_category"],
        item_type=data["item_type"],
        msisdn=str(data["msisdn"]),
        value=Decimal(str(value)) if value is not None else None,
        section=str(data.get("section", "")),
        raw_entry=dict(data.get("raw_entry") or {}),
    )


def queue_items(queue: ActionQueue) -> tuple[ResolvedInvoiceItem, ...]:
    """The items a queue still covers (from its cursor), in queue order."""
    return tuple(item_from_dict(i) for step in queue.steps[queue.cursor :] for i in step.items)
