"""Cross the customer's mentioned items with the invoice and return canonical items.

``invoice_detail`` shape (one key per line, plus an ignored summary)::

    {
      "Fatura Resumo": {...},
      "11987654321": {
        "SVA Detalhe Total": [{"desc": "Vivo Play VOD", "valor": "R$ 14,90"}, ...],
        "Itens Eventuais": [...],
        "Serviços Contratados de Terceiros": [...],
        "Serviços Bundle Inclusos": [...]
      }
    }

Entries need ``desc``; the amount is read from ``valor`` (or ``value``). Other keys are
kept verbatim in ``raw_entry``. Unknown sections (the plan itself, taxes) are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from .item_matcher import ItemMatcherError, ItemMatcherLLM
from .state import ItemType, ResolvedInvoiceItem, ToolCategory
from .textnorm import fold, words

STRATEGIC_NAMES = frozenset(
    {
        "apple music",
        "deezer",
        "disney",
        "hbo",
        "netflix",
        "youtube",
        "youtube premium",
        "paramount",
        "looke",
    }
)
SUMMARY_SECTION = "Fatura Resumo"
BUNDLE_SECTION = "Serviços Bundle Inclusos"
# section -> (default_tool, default_type)
SECTIONS: dict[str, tuple[ToolCategory, ItemType]] = {
    "SVA Detalhe Total": ("cancelar_vas_avulso", "avulso"),
    "Itens Eventuais": ("cancelar_vas_avulso", "avulso"),
    "Serviços Contratados de Terceiros": ("vas_estrategico", "estrategico"),
    BUNDLE_SECTION: ("vas_estrategico", "bundle"),
}
# Mentions shorter than this match too much by substring ("a", "o").
MIN_MENTION_LENGTH = 2
# Brand and filler words shared by many item names: a mention made only of them names no
# item ("quero cancelar a vivo" is not "Vivo Play VOD"), and they never identify an item
# in free text. Words shorter than three letters count as fillers too.
GENERIC_WORDS = frozenset(
    {
        "vivo",
        "play",
        "premium",
        "plus",
        "digital",
        "padrao",
        "com",
        "anuncios",
        "servico",
        "servicos",
        "plano",
        "pacote",
        "assinatura",
        "linha",
        "fatura",
        "conta",
        "valor",
        "cobranca",
        "das",
        "dos",
        "uma",
        "que",
        "esse",
        "essa",
        "isso",
        "todos",
        "todas",
    }
)
_MONEY_CLEAN = re.compile(r"[^\d,.\-]")


@dataclass(frozen=True)
class ItemResolution:
    mention: str
    matches: tuple[ResolvedInvoiceItem, ...]

    @property
    def is_ambiguous(self) -> bool:
        """Two or more distinct items: another name, or the same name on another line."""
        return len({(m.canonical_name, m.msisdn) for m in self.matches}) > 1


@dataclass(frozen=True)
class ResolutionOutcome:
    resolved: tuple[ResolvedInvoiceItem, ...]
    ambiguous: tuple[ItemResolution, ...]
    not_found: tuple[str, ...]

    @property
    def has_ambiguity(self) -> bool:
        return bool(self.ambiguous)


@dataclass(frozen=True)
class _Candidate:
    msisdn: str
    section: str
    entry: Mapping[str, Any] = field(hash=False)
    default_tool: ToolCategory
    default_type: ItemType
    desc: str


class InvoiceResolver:
    def __init__(self, *, matcher: ItemMatcherLLM | None = None) -> None:
        self._matcher = matcher

    # --- deterministic, back-compat API -----------------------------------------------

    def resolve_items(
        self,
        mentioned_items: Sequence[str],
        invoice_detail: Mapping[str, Any],
    ) -> list[ResolvedInvoiceItem]:
        """Every entry any mention matches (substring, both ways), deduplicated."""
        mentions = _usable(mentioned_items)
        if not mentions:
            return []
        found: list[ResolvedInvoiceItem] = []
        for msisdn, sections in _lines(invoice_detail):
            for section, (default_tool, default_type) in SECTIONS.items():
                entries = sections.get(section) or []
                found.extend(
                    self._resolve_section(
                        mentions,
                        entries,
                        section=section,
                        default_tool=default_tool,
                        default_type=default_type,
                        msisdn=msisdn,
                    )
                )
        return self._dedupe_exact_matches(found)

    def _resolve_section(
        self,
        mentioned_items: Sequence[str],
        entries: Sequence[Mapping[str, Any]],
        *,
        section: str,
        default_tool: ToolCategory,
        default_type: ItemType,
        msisdn: str = "",
    ) -> list[ResolvedInvoiceItem]:
        out = []
        for entry in entries:
            desc = _desc(entry) if isinstance(entry, Mapping) else ""
            if desc and self._was_mentioned(desc, mentioned_items):
                # msisdn comes from the line holding the matching entry, never the holder's.
                cand = _Candidate(msisdn, section, entry, default_tool, default_type, desc)
                out.append(self._build_item(cand))
        return out

    def _classify(self, desc: str, section: str, default_type: ItemType) -> ItemType:
        desc_lower = fold(desc)
        if section == BUNDLE_SECTION:
            return "bundle"
        if any(name in desc_lower for name in STRATEGIC_NAMES):
            return "estrategico"
        return default_type

    @staticmethod
    def _was_mentioned(desc: str, mentioned_items: Sequence[str]) -> bool:
        d = fold(desc)
        for mention in mentioned_items:
            m = fold(mention)
            if len(m) >= MIN_MENTION_LENGTH and is_specific(m) and (d in m or m in d):
                return True
        return False

    def scan_text(self, text: str, invoice_detail: Mapping[str, Any]) -> tuple[str, ...]:
        """Item names a message names by a distinctive word ("e também o Aya" -> Aya Ensina).

        Used when the classifier named nothing but the message is a request or amends one.
        """
        said = set(words(text))
        found: list[str] = []
        for candidate in self._iter_candidates(invoice_detail):
            name = candidate.desc
            if name not in found and any(w in said for w in distinctive_words(name)):
                found.append(name)
        return tuple(found)

    @staticmethod
    def _parse_money(value: Any) -> Decimal | None:
        """``"R$ 1.234,50"``, ``"14,90"``, ``"14.90"``, ``14.9`` -> Decimal; junk -> None."""
        if value is None or isinstance(value, bool):
            return None
        if isinstance(value, Decimal):
            return value
        if isinstance(value, int | float):
            return Decimal(str(value)).quantize(Decimal("0.01"))
        if not isinstance(value, str):
            return None
        text = _MONEY_CLEAN.sub("", value)
        if "," in text:  # Brazilian format: dots group thousands, comma is decimal
            text = text.replace(".", "").replace(",", ".")
        try:
            return Decimal(text).quantize(Decimal("0.01")) if text else None
        except InvalidOperation:
            return None

    @staticmethod
    def _dedupe_exact_matches(items: Sequence[ResolvedInvoiceItem]) -> list[ResolvedInvoiceItem]:
        """One item per (name, line, tool): the same service listed in two invoice rows."""
        seen: set[tuple[str, str, str]] = set()
        out = []
        for item in items:
            key = (fold(item.canonical_name), item.msisdn, item.tool_category)
            if key not in seen:
                seen.add(key)
                out.append(item)
        return out

    # --- as-built: ambiguity-aware resolution -----------------------------------------

    def resolve(
        self,
        mentioned_items: Sequence[str],
        invoice_detail: Mapping[str, Any],
        *,
        callbacks: Sequence[Any] | None = None,
    ) -> ResolutionOutcome:
        """Resolve mention by mention; the matcher is asked only when substring misses."""
        candidates = list(self._iter_candidates(invoice_detail))
        resolved: list[ResolvedInvoiceItem] = []
        ambiguous: list[ItemResolution] = []
        not_found: list[str] = []
        for mention in _usable(mentioned_items):
            matches = [
                self._build_item(c) for c in candidates if self._was_mentioned(c.desc, [mention])
            ]
            if not matches and self._matcher is not None:
                matches = self._match_with_llm(mention, candidates, callbacks)
            resolution = ItemResolution(mention, tuple(self._dedupe_exact_matches(matches)))
            if not resolution.matches:
                not_found.append(mention)
            elif resolution.is_ambiguous:
                ambiguous.append(resolution)
            else:
                resolved.extend(resolution.matches)
        return ResolutionOutcome(
            resolved=tuple(self._dedupe_exact_matches(resolved)),
            ambiguous=tuple(ambiguous),
            not_found=tuple(not_found),
        )

    def build_snapshot(
        self, invoice_detail: Mapping[str, Any], msisdn: str = ""
    ) -> tuple[ResolvedInvoiceItem, ...]:
        """Every item of the four supported sections, all lines (family invoices).

        ``msisdn`` is the active line, recorded by the caller as the snapshot's source;
        filtering by line happens when the snapshot is rendered for the classifier.
        """
        del msisdn
        return tuple(self._build_item(c) for c in self._iter_candidates(invoice_detail))

    def _match_with_llm(
        self,
        mention: str,
        candidates: Sequence[_Candidate],
        callbacks: Sequence[Any] | None,
    ) -> list[ResolvedInvoiceItem]:
        assert self._matcher is not None
        names = list(dict.fromkeys(c.desc for c in candidates))
        try:
            picked = set(self._matcher.match(mention, names, callbacks=callbacks))
        except ItemMatcherError:
            return []  # degrade to "not found": the customer is asked to rephrase
        return [self._build_item(c) for c in candidates if c.desc in picked]

    def _iter_candidates(self, invoice_detail: Mapping[str, Any]) -> Iterator[_Candidate]:
        for msisdn, sections in _lines(invoice_detail):
            for section, (default_tool, default_type) in SECTIONS.items():
                for entry in sections.get(section) or []:
                    desc = _desc(entry) if isinstance(entry, Mapping) else ""
                    if desc:
                        yield _Candidate(msisdn, section, entry, default_tool, default_type, desc)

    def _build_item(self, candidate: _Candidate) -> ResolvedInvoiceItem:
        entry = candidate.entry
        desc = candidate.desc
        item_type = self._classify(desc, candidate.section, candidate.default_type)
        tool: ToolCategory = (
            "vas_estrategico" if item_type in {"bundle", "estrategico"} else candidate.default_tool
        )
        return ResolvedInvoiceItem(
            canonical_name=desc,
            tool_category=tool,
            item_type=item_type,
            msisdn=candidate.msisdn,
            value=self._parse_money(entry.get("valor", entry.get("value"))),
            section=candidate.section,
            raw_entry=dict(entry),
        )


def _lines(invoice_detail: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for msisdn, sections in invoice_detail.items():
        if msisdn != SUMMARY_SECTION and isinstance(sections, Mapping):
            yield str(msisdn), sections


def _desc(entry: Mapping[str, Any]) -> str:
    desc = entry.get("desc")
    return desc.strip() if isinstance(desc, str) else ""


def _usable(mentions: Sequence[str]) -> list[str]:
    return [
        m
        for m in mentions
        if isinstance(m, str) and len(fold(m)) >= MIN_MENTION_LENGTH and is_specific(m)
    ]


@lru_cache(maxsize=1024)
def distinctive_words(name: str) -> tuple[str, ...]:
    return tuple(w for w in words(name) if len(w) >= 3 and w not in GENERIC_WORDS)


@lru_cache(maxsize=1024)
def is_specific(mention: str) -> bool:
    """A mention with at least one word that can identify an item (not only a brand)."""
    folded = words(mention)
    return not folded or any(len(w) >= 3 and w not in GENERIC_WORDS for w in folded)
