"""When the customer's answer authorizes an action (DESIGN §10.1, the owner's amendment).

Guard 3 of the spec, as the spec means it: only a *canonical* yes consumes a confirmation.
Canonical is read after normalisation (case, accents, stretched letters, emoji and
punctuation: "Siiim!! 👍" is "sim"); a thank-you around it changes nothing ("sim,
obrigado" is a yes). A yes with a qualifier ("mas só", "menos", "exceto", "e também", a
correction) is a new request, and a reply that is both yes and no is neither.

The one rule for turns the runtime did not run
----------------------------------------------
A question is answered only by the customer's next message to the runtime, with nothing
said in the conversation in between. The runtime's turn counter therefore counts every
turn of the conversation: the adapter calls ``note_unseen_turn`` whenever something was
said that the runtime did not run (a human-owned message, a staff message, a handoff, the
kill switch, a billing outage, a runtime error, a case-reply or follow-up turn), so a
pending confirmation or workflow question is no longer "the turn right after the one that
asked it" (guard 2) — and the next yes makes the runtime ask its question again, naming
the items, instead of acting.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Literal

from .state import DECISION_TRACE_LIMIT, ConversationState
from .textnorm import canonical, words

# The spec's canonical affirmations (confirmation_manager / intent_extractor fast path).
AFFIRMATIONS = frozenset({"sim", "isso", "isso mesmo", "pode seguir", "correto", "confirmo"})
_CANONICAL_YES = frozenset(canonical(a) for a in AFFIRMATIONS)
# Courtesy around an answer, never its content.
POLITE = ("por favor", "obrigado", "obrigada", "brigado", "brigada", "obg", "valeu", "pf", "pfv")
_POLITE = tuple(canonical(p) for p in POLITE)

# A message made only of these words (and at least one of ``_YES_WORDS``) is a bare yes:
# the classifier may vouch for it ("ok, pode"). Anything else in it — an item, "mas", "acho",
# "não" — and it is not a consent.
_YES_WORDS = frozenset(
    canonical(w)
    for w in [
        "sim",
        "s",
        "ss",
        "isso",
        "pode",
        "confirmo",
        "confirmado",
        "confirma",
        "correto",
        "certo",
        "certinho",
        "ok",
        "okay",
        "okey",
        "claro",
        "beleza",
        "blz",
        "positivo",
        "perfeito",
        "exato",
        "exatamente",
        "fechado",
        "yes",
        "quero",
        "bora",
        "uhum",
        "aham",
    ]
)
_YES_FILLERS = frozenset(
    canonical(w)
    for w in [
        "mesmo",
        "seguir",
        "segue",
        "com",
        "certeza",
        "ta",
        "bom",
        "esta",
        "pode",
        "ser",
        "manda",
        "ver",
        "ai",
        "isso",
        "sim",
        "por",
        "favor",
        "obrigado",
        "obrigada",
        "valeu",
        "pf",
        "pfv",
        "pode",
        "cancelar",
        "cancela",
        "cancele",
        "tirar",
        "tira",
        "seguir",
    ]
)
_NEGATION_WORDS = frozenset({"nao", "n", "nem", "nunca", "negativo", "jamais"})

Qualifier = Literal["only", "except", "also", "correction"]
# Checked in this order: a correction may itself say "só" ("na verdade, só o HBO").
_QUALIFIERS: tuple[tuple[Qualifier, tuple[str, ...]], ...] = (
    ("except", ("menos", "exceto", "tirando", "fora o", "fora a", "sem o", "sem a", "nao o")),
    ("only", ("so o", "so a", "so os", "so as", "somente", "apenas", "so quero", "so esse")),
    ("also", ("tambem", "alem", "mais o", "mais a", "junto com")),
    ("correction", ("na verdade", "quer dizer", "ou melhor", "alias", "corrigindo", "digo")),
)


def without_courtesy(text: str) -> str:
    """``canonical(text)`` without the courtesy around the answer ("Não, obrigada!" ->
    "nao"): what an answer says is read from this form."""
    form = f" {canonical(text)} "
    for polite in _POLITE:
        form = form.replace(f" {polite} ", " ")
    return " ".join(form.split())


def is_canonical_yes(text: str) -> bool:
    """The spec's canonical affirmation, after normalisation and without courtesy."""
    return without_courtesy(text) in _CANONICAL_YES


def is_bare_affirmation(text: str) -> bool:
    """Nothing but a yes, in other words than the canonical ones ("ok, pode", "pode
    cancelar sim"): no item, no qualifier, no doubt, no negation. It never consumes a
    confirmation (guard 3 reads canonical yeses only); the runtime asks again, saying how
    to confirm, rather than reading it as a new request."""
    found = [canonical(w) for w in words(text)]
    if not found or any(w in _NEGATION_WORDS for w in found):
        return False
    allowed = _YES_WORDS | _YES_FILLERS
    return any(w in _YES_WORDS for w in found) and all(w in allowed for w in found)


CallOff = Literal["withdraw", "unclear"]


def _alternatives(*phrases: str) -> str:
    return "|".join(canonical(p) for p in phrases)


# Words around a call-off that add nothing to it ("ah, esquece isso então").
_CALL_OFF_LEAD = _alternatives(
    "ah", "ok", "ta", "entao", "nao", "olha", "hum", "hmm", "pensando bem", "na verdade"
)
_CALL_OFF_OBJECT = _alternatives(
    "isso",
    "isto",
    "tudo",
    "tudo isso",
    "disso",
    "esse pedido",
    "essa solicitacao",
    "o pedido",
    "a solicitacao",
    "entao",
    "ai",
    "logo",
    "mesmo",
    "de vez",
)
_WITHDRAW = _alternatives(
    "esquece",
    "esqueca",
    "deixa pra la",
    "deixa para la",
    "deixa isso pra la",
    "deixa quieto",
    "desisto",
    "desisti",
    "mudei de ideia",
    "para tudo",
    "pode parar",
    "nao precisa mais",
)
# A cancel verb naming nothing: while a cancellation waits, it may be its yes ("cancela
# isso" = go ahead) or calling it off, so it is never read as either.
_BARE_CANCEL = _alternatives(
    "cancela", "cancelar", "cancele", "pode cancelar", "nao quero mais", "pode tirar", "tira"
)


def _call_off_pattern(core: str) -> re.Pattern[str]:
    return re.compile(rf"(?:(?:{_CALL_OFF_LEAD}) )*(?:{core})(?: (?:{_CALL_OFF_OBJECT}))*")


_WITHDRAW_RE = _call_off_pattern(_WITHDRAW)
_BARE_CANCEL_RE = _call_off_pattern(_BARE_CANCEL)


def call_off(text: str) -> CallOff | None:
    """A message that calls off what waits for the customer without naming anything
    (review r31): "esquece", "deixa pra lá", "mudei de ideia" withdraw it; a bare cancel
    ("cancela isso", "não quero mais") is ``"unclear"`` — the yes to a pending cancellation
    or calling it off. ``None`` for anything else, an item named included."""
    form = without_courtesy(text)
    if _WITHDRAW_RE.fullmatch(form):
        return "withdraw"
    if _BARE_CANCEL_RE.fullmatch(form):
        return "unclear"
    return None


def qualifier(text: str) -> Qualifier | None:
    """The qualifier that turns an answer into a new request, if any."""
    form = f" {' '.join(words(text))} "
    for kind, markers in _QUALIFIERS:
        if any(f" {m} " in form for m in markers):
            return kind
    return None


def awaits_answer(state: ConversationState) -> bool:
    """Whether the runtime's last reply asked something its next turn may consume."""
    return (
        state.pending_confirmation is not None
        or state.pending_workflow is not None
        or state.informative_answer_delivered
    )


def note_unseen_turn(state: ConversationState, reason: str) -> ConversationState:
    """The successor state after a turn the runtime did not run (the rule above).

    A pure transition, not a hook: it returns a new state (the adapter stores it) rather
    than mutating, so the hook catalogue and its single call sites stay as they are. The
    turn counter moves on (a pending question is no longer answered by the next message),
    and an informative answer's "Consegui esclarecer?" is no longer the open question.
    """
    entry = {"turn": state.turn_index + 1, "decision": "unseen_turn", "reason": reason}
    return replace(
        state,
        turn_index=state.turn_index + 1,
        informative_answer_delivered=False,
        decision_trace=[*state.decision_trace, entry][-DECISION_TRACE_LIMIT:],
    )
