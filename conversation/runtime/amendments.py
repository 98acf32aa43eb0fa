"""Answers that change a pending request instead of consenting to it (DESIGN §10.1).

"sim, mas só o VOD", "menos o Tamboro", "exceto o jogo", "e também o Aya", "na verdade,
só o HBO Max": each is a *new request* — the runtime narrows or extends the pending items
and asks again, naming exactly what the new queue covers. An answer to "which line?"
("o da 5678", "das duas") picks among the question's candidates. Pure functions: the
runtime resolves new mentions against the invoice and lets the policy decide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .consent import Qualifier, qualifier
from .invoice_resolver import ItemResolution, ResolutionOutcome, distinctive_words, is_specific
from .line_choice import select_lines
from .state import ResolvedInvoiceItem
from .textnorm import fold, words

AmendmentKind = Literal["request", "reask", "nothing_left"]
# Words of a plural reference to what was just listed ("cancela todos esses").
ANAPHORA_WORDS = frozenset(
    [
        "todos",
        "todas",
        "esses",
        "essas",
        "eles",
        "elas",
        "tudo",
        "nenhum",
        "nenhuma",
        "nada",
        "deles",
        "delas",
        "desses",
        "dessas",
    ]
)


@dataclass(frozen=True)
class Amendment:
    kind: AmendmentKind
    # The items of the new request (kept or picked), before ``extra_mentions`` are added.
    items: tuple[ResolvedInvoiceItem, ...] = ()
    # What the answer adds, to resolve against the invoice (an extension, a correction).
    extra_mentions: tuple[str, ...] = ()


def names_item(text: str, mentions: Sequence[str], item: ResolvedInvoiceItem) -> bool:
    """Whether the customer's words (or the classifier's mentions) name ``item``."""
    name = fold(item.canonical_name)
    if name in fold(text):
        return True
    said = set(words(text))
    if any(w in said for w in distinctive_words(item.canonical_name)):
        return True
    return any(
        is_specific(m) and len(fold(m)) >= 2 and (fold(m) in name or name in fold(m))
        for m in mentions
    )


def amend_pending(
    text: str,
    mentions: Sequence[str],
    pending_items: Sequence[ResolvedInvoiceItem],
    *,
    affirmed: bool,
) -> Amendment | None:
    """How an answer to a pending confirmation changes it; ``None`` if it does not.

    ``affirmed``: the classifier read a yes. A yes that names some of the pending items
    without a qualifier word ("sim, o VOD") narrows to them, like "só".
    """
    kind: Qualifier | None = qualifier(text)
    if kind is None and not affirmed:
        return None  # neither a qualifier nor a yes: not an answer that amends
    named = tuple(i for i in pending_items if names_item(text, mentions, i))
    others = tuple(m for m in mentions if not any(names_item(m, (), i) for i in pending_items))
    if kind is None:
        if not (affirmed and named):
            return None
        kind = "only"
    if kind == "also":
        return Amendment("request", tuple(pending_items), others)
    if kind == "except":
        if not named:
            return Amendment("reask")
        kept = tuple(i for i in pending_items if i not in named)
        return Amendment("request", kept) if kept else Amendment("nothing_left")
    # only / correction: what the customer names now is the request.
    if not named and not others:
        return Amendment("reask")
    return Amendment("request", named, others)


def pick_choices(
    text: str,
    mentions: Sequence[str],
    choices: Sequence[ResolvedInvoiceItem],
    *,
    own_msisdn: str,
    holder_msisdn: str,
) -> tuple[ResolvedInvoiceItem, ...]:
    """The candidates an answer to "which one / which line?" picks (empty: none)."""
    by_name = tuple(c for c in choices if names_item(text, mentions, c))
    names = {c.canonical_name for c in choices}
    pool = by_name if by_name and len({c.canonical_name for c in by_name}) < len(names) else choices
    by_line = select_lines(text, pool, own_msisdn=own_msisdn, holder_msisdn=holder_msisdn)
    if by_line:
        return by_line
    # A name alone settles it when that name is on one line only.
    if by_name and len(names) > 1 and len({(c.canonical_name, c.msisdn) for c in by_name}) == 1:
        return by_name
    return ()


def narrow_by_line(
    outcome: ResolutionOutcome,
    text: str,
    *,
    own_msisdn: str,
    holder_msisdn: str,
    listed_msisdn: str,
) -> ResolutionOutcome:
    """Settle ambiguous mentions the request itself already answers.

    "cancela o Aya Ensina da linha final 5678" names the line; "cancela todos esses" right
    after the explanation of one line means that line's items (the list the customer saw).
    """
    if not outcome.ambiguous:
        return outcome
    resolved = list(outcome.resolved)
    still: list[ItemResolution] = []
    anaphora = bool(ANAPHORA_WORDS & set(words(text)))
    for resolution in outcome.ambiguous:
        matches = resolution.matches
        picked = select_lines(
            text, matches, own_msisdn=own_msisdn, holder_msisdn=holder_msisdn, every=False
        )
        if not picked and anaphora and listed_msisdn:
            picked = tuple(m for m in matches if m.msisdn == listed_msisdn)
        if picked and len({m.canonical_name for m in picked}) == 1:
            resolved.extend(m for m in picked if m not in resolved)
        else:
            still.append(resolution)
    return ResolutionOutcome(
        resolved=tuple(resolved), ambiguous=tuple(still), not_found=outcome.not_found
    )
