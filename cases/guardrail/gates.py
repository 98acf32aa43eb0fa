"""The before-send gate chain as pure functions (human-cases §6, layer 3).

The orchestrator calls ``run_gates`` inside ``send_message``, before anything is stored in the
outbox, with a ``GateContext`` loaded under the conversation lock. The chain answers:

* ``allow``: send the message;
* ``veto``: do not send; return ``error_message`` to the model as the tool's error
  (error-as-teaching), and count the veto for this turn;
* ``allow_with_autofallback``: the model insisted on a promise of human action without a case.
  Open a minimal case now (``source='guardrail_autofallback'``, event ``opened``), then send.
  If the case cannot be opened, the message must not be sent: that is what keeps the
  invariant "the customer never receives a promise of a human without an open case".

The case-promise gate, exactly as §6 states it:

=======  =================  ======================  ===================================
enabled  case open/opened   promise detected        result
=======  =================  ======================  ===================================
no       any                any                     allow (guardrail off, §5.3)
yes      yes                any                     allow
yes      no                 no                      allow
yes      no                 yes, 1st time in turn   veto ``case_promise_without_case``
yes      no                 yes, again in turn      allow_with_autofallback
=======  =================  ======================  ===================================

("enabled" is ``cases_enabled``; "case open/opened" is ``has_open_case_for_lead`` or
``case_opened_this_turn``.)

An already open case (``awaiting_human`` or ``awaiting_lead``) for the lead covers the promise,
so nothing is auto-opened then: that is the dedup rule of §3 ("só auto-abre se NÃO existir caso
aberto").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from .promise import PROMISE_DETECTOR_VERSION, PromiseMatch, detect_human_promise

__all__ = [
    "AUTOFALLBACK_SOURCE",
    "BEFORE_SEND_GATES",
    "CASE_PROMISE_TEACHING_EN",
    "CASE_PROMISE_TEACHING_PT",
    "CASE_PROMISE_WITHOUT_CASE",
    "GATE_CHAIN_VERSION",
    "Gate",
    "GateContext",
    "GateVerdict",
    "VerdictKind",
    "case_promise_gate",
    "run_gates",
]

# Recorded with every gate decision in the turn trace. It embeds the detector version, so a
# change of either the chain or the detector shows up as a new chain version (§6: "Bumpar").
GATE_CHAIN_VERSION = f"before-send-1+{PROMISE_DETECTOR_VERSION}"

CASE_PROMISE_WITHOUT_CASE = "case_promise_without_case"
# ``agent_cases.source`` of a case opened by the fail-safe (§8.1).
AUTOFALLBACK_SOURCE = "guardrail_autofallback"

# The tool error the model receives on the first veto of a turn (§6 "erro instrutivo").
# It names the tool and both ways out; it quotes nothing from the message.
CASE_PROMISE_TEACHING_PT = (
    "Mensagem NÃO enviada. Você prometeu envolver um humano mas não abriu caso — "
    "chame `open_human_case` (title, summary, blocker) e depois envie a mensagem, OU "
    "reformule sem prometer humano (sem dizer que alguém da equipe vai verificar, "
    "encaminhar, ligar ou retornar depois). Prometer humano sem abrir o caso é proibido."
)
# The same instruction in English, for agents whose system prompt is in English.
CASE_PROMISE_TEACHING_EN = (
    "Message NOT sent. You promised to involve a human but did not open a case — call "
    "`open_human_case` (title, summary, blocker) and then send the message, OR rephrase "
    "without promising a human (do not say that someone on the team will check, forward, "
    "call or get back later). Promising a human without opening a case is forbidden."
)


@dataclass(frozen=True, slots=True)
class GateContext:
    """What the gates know about one send attempt.

    ``prior_vetoes_this_turn`` counts the ``case_promise_without_case`` vetoes already
    returned to the model earlier in this turn (the per-turn counter of §6).
    """

    body: str
    has_open_case_for_lead: bool
    case_opened_this_turn: bool
    prior_vetoes_this_turn: int
    cases_enabled: bool

    def __post_init__(self) -> None:
        if self.prior_vetoes_this_turn < 0:
            raise ValueError("prior_vetoes_this_turn cannot be negative")


class VerdictKind(StrEnum):
    ALLOW = "allow"
    VETO = "veto"
    ALLOW_WITH_AUTOFALLBACK = "allow_with_autofallback"


@dataclass(frozen=True, slots=True)
class GateVerdict:
    kind: VerdictKind
    gate: str | None = None  # the gate that decided; None for a plain allow
    code: str | None = None  # machine-readable reason of a veto or an auto-fallback
    error_message: str | None = None  # the teaching error for the model (veto only)
    promise: PromiseMatch | None = None  # rule id and span of the detected promise

    @property
    def sends(self) -> bool:
        """Whether the message goes out (after the auto-opened case, for a fallback)."""
        return self.kind is not VerdictKind.VETO


ALLOW = GateVerdict(VerdictKind.ALLOW)

Gate = Callable[[GateContext], GateVerdict]


def case_promise_gate(ctx: GateContext) -> GateVerdict:
    """Veto a promise of human action while no case exists; auto-open on the second try."""
    if not ctx.cases_enabled:
        return ALLOW
    if ctx.has_open_case_for_lead or ctx.case_opened_this_turn:
        return ALLOW
    promise = detect_human_promise(ctx.body)
    if promise is None:
        return ALLOW
    if ctx.prior_vetoes_this_turn == 0:
        return GateVerdict(
            VerdictKind.VETO,
            gate="case_promise_gate",
            code=CASE_PROMISE_WITHOUT_CASE,
            error_message=CASE_PROMISE_TEACHING_PT,
            promise=promise,
        )
    return GateVerdict(
        VerdictKind.ALLOW_WITH_AUTOFALLBACK,
        gate="case_promise_gate",
        code=CASE_PROMISE_WITHOUT_CASE,
        promise=promise,
    )


# Declarative chain, in order. A new gate is a function appended here (and a version bump).
BEFORE_SEND_GATES: tuple[Gate, ...] = (case_promise_gate,)


def run_gates(ctx: GateContext, gates: Sequence[Gate] = BEFORE_SEND_GATES) -> GateVerdict:
    """Run the chain: the first veto wins; otherwise the first auto-fallback; otherwise allow.

    A veto from a later gate beats an earlier gate's auto-fallback: a message that will not be
    sent needs no case.
    """
    fallback: GateVerdict | None = None
    for gate in gates:
        verdict = gate(ctx)
        if verdict.kind is VerdictKind.VETO:
            return verdict
        if verdict.kind is VerdictKind.ALLOW_WITH_AUTOFALLBACK and fallback is None:
            fallback = verdict
    return fallback or ALLOW
