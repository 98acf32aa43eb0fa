"""An in-memory ``ToolBackend`` over one invoice, for the demo, the simulator and tests.

It records every action it executes (in order) and answers the invoice explanation and
knowledge search from its own data. Deterministic: execution ids are counters. It acts
once per call, so the actions' ``action_id`` (idempotency) is accepted and unused.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from .channel_adapter import format_brl, format_date_long, to_date, to_decimal
from .invoice_resolver import SECTIONS, SUMMARY_SECTION
from .textnorm import fold, join_pt, last_digits


@dataclass(frozen=True)
class ExecutedAction:
    tool: str  # backend method: cancelar_vas_single, vas_strategic, pro_rata, resume_workflow
    items: tuple[str, ...]
    msisdns: tuple[str, ...]
    value: str = ""  # the customer's answer, for resume_workflow


class DemoBackend:
    def __init__(
        self,
        invoice_detail: Mapping[str, Any],
        *,
        knowledge: Mapping[str, str] | None = None,
        strategic_retention_offer: bool = False,
        unavailable_tools: Iterable[str] = (),
    ) -> None:
        self._invoice = copy.deepcopy(dict(invoice_detail))
        self._knowledge = dict(knowledge or {})
        self._retention = strategic_retention_offer
        self.unavailable_tools = set(unavailable_tools)
        self.executed: list[ExecutedAction] = []
        self._cancelled: set[tuple[str, str]] = set()  # (folded name, msisdn)
        self._paused: dict[str, list[dict[str, Any]]] = {}

    @classmethod
    def from_json(cls, source: str | Path, **kwargs: Any) -> DemoBackend:
        """Build from a JSON file path or a JSON document string."""
        text = Path(source).read_text(encoding="utf-8") if isinstance(source, Path) else source
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("an invoice JSON document must be an object")
        return cls(data, **kwargs)

    @property
    def invoice_detail(self) -> dict[str, Any]:
        """The invoice for ``context["invoice_detail"]`` (a copy: callers cannot edit it)."""
        return copy.deepcopy(self._invoice)

    # --- actions ------------------------------------------------------------------------

    def cancelar_vas_single(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> dict[str, Any]:
        if "cancelar_vas_single" in self.unavailable_tools:
            return {"error": "sistema de cancelamento indisponível"}
        missing = [i["service"] for i in items if not self._is_active(i["service"], i["msisdn"])]
        if missing:
            return {"not_found": True, "message": f"Não encontrei {join_pt(missing)} ativo."}
        self._record("cancelar_vas_single", items, "service")
        names = [i["service"] for i in items]
        amounts = [to_decimal(i["value"]) for i in items if i.get("value") is not None]
        if len(names) == 1:
            refund = f" O valor de {format_brl(sum(amounts, Decimal(0)))}" if amounts else ""
            tail = " será retirado da sua próxima fatura." if amounts else ""
            return {"success": True, "message": f"Pronto! Cancelei o {names[0]}.{refund}{tail}"}
        return {
            "success": True,
            "message": f"Pronto! Cancelei os serviços {join_pt(names)}. "
            "Os valores serão retirados da sua próxima fatura.",
        }

    def vas_strategic(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> dict[str, Any]:
        if "vas_strategic" in self.unavailable_tools:
            return {"error": "parceiro indisponível"}
        names = join_pt([i["name"] for i in items])
        self._record("vas_strategic", items, "name")
        if self._retention:
            execution_id = f"exec-{len(self._paused) + 1}"
            self._paused[execution_id] = list(items)
            return {
                "aguardando_resposta": True,
                "execution_id": execution_id,
                "expected_input_key": "manter_com_desconto",
                "allowed_values": ["sim", "nao"],
                "normalize": "yes_no",
                "question": f"Antes de cancelar: {names} pode continuar com 50% de desconto "
                "por 3 meses. Quer manter com o desconto?",
            }
        self._cancel(items, "name")
        return {
            "success": True,
            "message": f"Registrei o pedido de cancelamento de {names} junto ao parceiro. "
            "Em até 48 horas deixa de ser cobrado.",
        }

    def pro_rata(
        self, *, items: list[dict[str, Any]], remaining: list[dict[str, Any]], action_id: str = ""
    ) -> dict[str, Any]:
        self._record("pro_rata", items, "service")
        names = join_pt([i["service"] for i in items])
        return {"success": True, "message": f"Solicitei o ajuste proporcional de {names}."}

    def resume_workflow(
        self, *, tool: str, execution_id: str, input_key: str, value: str
    ) -> dict[str, Any]:
        items = self._paused.pop(execution_id, None)
        if items is None:
            return {"error": "execução não encontrada"}
        names = join_pt([i["name"] for i in items])
        self.executed.append(
            ExecutedAction(
                tool="resume_workflow",
                items=tuple(i["name"] for i in items),
                msisdns=tuple(i["msisdn"] for i in items),
                value=value,
            )
        )
        if value == "sim":
            return {
                "success": True,
                "message": f"Combinado! {names} continua ativo com 50% de desconto por 3 meses.",
                "recomenda_finalizacao": True,
            }
        self._cancel(items, "name")
        return {
            "success": True,
            "message": f"Registrei o cancelamento de {names}. "
            "Em até 48 horas deixa de ser cobrado.",
            "recomenda_finalizacao": True,
        }

    # --- informative tools ------------------------------------------------------------

    def invoice_explanation(self, *, msisdn: str) -> dict[str, Any]:
        summary = self._invoice.get(SUMMARY_SECTION) or {}
        lines = [(m, s) for m, s in self._invoice.items() if m != SUMMARY_SECTION]
        if msisdn and any(m == msisdn for m, _ in lines):
            lines = [(m, s) for m, s in lines if m == msisdn]
        if not lines:
            return {"error": "fatura não encontrada"}
        header = "Sua fatura"
        if summary.get("vencimento"):
            header += f" com vencimento em {format_date_long(to_date(summary['vencimento']))}"
        if summary.get("total") is not None:
            header += f" soma {format_brl(to_decimal(summary['total']))}"
        paragraphs = [header + "."]
        for line, sections in lines:
            entries = [
                f"{e['desc']} ({format_brl(to_decimal(e['valor']))})"
                if e.get("valor") is not None
                else str(e["desc"])
                for entries in sections.values()
                for e in entries
                if isinstance(e, Mapping) and e.get("desc")
            ]
            paragraphs.append(f"Na linha final {last_digits(line)}: {join_pt(entries)}.")
        return {"success": True, "text": "\n".join(paragraphs)}

    def buscar_informacao(self, *, queries: Sequence[str]) -> dict[str, Any]:
        answers: list[str] = []
        for query in queries:
            q = fold(query)
            answers.extend(text for key, text in self._knowledge.items() if fold(key) in q)
        return {"answer": "\n\n".join(dict.fromkeys(answers)) or None}

    # --- internals ----------------------------------------------------------------------

    def _is_active(self, name: str, msisdn: str) -> bool:
        if (fold(name), msisdn) in self._cancelled:
            return False
        sections = self._invoice.get(msisdn) or {}
        return any(
            fold(str(e.get("desc", ""))) == fold(name)
            for section in SECTIONS
            for e in sections.get(section) or []
        )

    def _record(self, tool: str, items: list[dict[str, Any]], name_key: str) -> None:
        self.executed.append(
            ExecutedAction(
                tool=tool,
                items=tuple(i[name_key] for i in items),
                msisdns=tuple(i["msisdn"] for i in items),
            )
        )
        if tool == "cancelar_vas_single":
            self._cancel(items, name_key)

    def _cancel(self, items: list[dict[str, Any]], name_key: str) -> None:
        """The items stop being active (``_is_active`` reads the same key)."""
        self._cancelled.update((fold(item[name_key]), item["msisdn"]) for item in items)
