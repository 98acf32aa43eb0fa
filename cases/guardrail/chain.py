"""The promise guardrail's chain of stages as pure functions (human-cases §6, layer 3).

The turn's before-send gate (``cases.promise_gate.case_promise_send_gate``) calls
``run_guard_chain`` inside ``send_message``, before anything is stored in the outbox, with a
``GuardContext`` loaded under the conversation lock. Each stage of ``GUARD_CHAIN`` judges the
send attempt; the chain answers:

* ``allow``: send the message;
* ``veto``: do not send; return ``error_message`` to the model as the tool's error
  (error-as-teaching), and count the veto for this turn;
* ``allow_with_autofallback``: the model insisted on a promise of human action without a case.
  Open a minimal case now (``source='guardrail_autofallback'``, event ``opened``), then send.
  If the case cannot be opened, the message must not be sent: that is what keeps the
  invariant "the customer never receives a promise of a human without an open case".

The case-promise stage, exactly as §6 states it:

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

An already open case (``awaiting_human`` or ``awaiting_lead``) of the same conversation covers
the promise (DESIGN §10.3: an unrelated case of the same customer elsewhere does not),
so nothing is auto-opened then: that is the dedup rule of §3 ("só auto-abre se NÃO existir caso
aberto").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from .promise import PROMISE_DETECTOR_VERSION, PromiseMatch, detect_human_promise

# The public names are listed once, in the package's ``__all__`` (``cases.guardrail``).

# Recorded with every guardrail decision in the turn trace (under ``gate_chain``). It embeds
# the detector version, so a change of either the chain or the detector shows up as a new
# chain version (§6: "Bumpar").
GUARD_CHAIN_VERSION = f"before-send-1+{PROMISE_DETECTOR_VERSION}"

CASE_PROMISE_WITHOUT_CASE = "case_promise_without_case"
# ``agent_cases.source`` of a case opened by the fail-safe (§8.1).
AUTOFALLBACK_SOURCE = "guardrail_autofallback"

# The tool error the model receives on the first veto of a turn (§6 "erro instrutivo").
# It names the tool and both ways out; it quotes nothing from the message.
CASE_PROMISE_TEACHING_PT = (
    "Mensagem NÃO enviada. Você prometeu envolver um humano mas não abriu caso. Se alguém "
    "da equipe precisa agir, chame `open_human_case` (title, summary, blocker) agora e depois "
    "envie a mensagem. Só reformule sem prometer humano se você mesmo resolve o pedido nesta "
    "conversa: então diga apenas o que você fez ou pode fazer agora. Trocar as palavras da "
    "mesma promessa não adianta: a trava lê o sentido, e a promessa continua exigindo um caso."
)
# The same instruction in English, for agents whose system prompt is in English.
CASE_PROMISE_TEACHING_EN = (
    "Message NOT sent. You promised to involve a human but did not open a case. If someone "
    "on the team has to act, call `open_human_case` (title, summary, blocker) now and then "
    "send the message. Only rephrase without promising a human if you resolve the request "
    "yourself in this conversation: then say only what you did or can do now. Rewording the "
    "same promise does not help: the check reads the meaning, and the promise still needs a case."
)


@dataclass(frozen=True, slots=True)
class GuardContext:
    """What the stages know about one send attempt.

    ``prior_vetoes_this_turn`` counts the ``case_promise_without_case`` vetoes already
    returned to the model earlier in this turn (the per-turn counter of §6).
    """

    body: str
    has_open_case_for_lead: bool
    case_opened_this_turn: bool
    prior_vetoes_this_turn: int
    cases_enabled: bool
    # The promise detector the stage asks; the send gate passes its own verdict (local
    # stages plus the model check on the uncertain band) so the message is judged once.
    detect: Callable[[str], PromiseMatch | None] = detect_human_promise
    # The teaching error of a veto, in the agent's language (``teaching``).
    teaching: str = CASE_PROMISE_TEACHING_PT

    def __post_init__(self) -> None:
        if self.prior_vetoes_this_turn < 0:
            raise ValueError("prior_vetoes_this_turn cannot be negative")


class VerdictKind(StrEnum):
    ALLOW = "allow"
    VETO = "veto"
    ALLOW_WITH_AUTOFALLBACK = "allow_with_autofallback"


@dataclass(frozen=True, slots=True)
class GuardVerdict:
    kind: VerdictKind
    stage: str | None = None  # the stage that decided; None for a plain allow
    code: str | None = None  # machine-readable reason of a veto or an auto-fallback
    error_message: str | None = None  # the teaching error for the model (veto only)
    promise: PromiseMatch | None = None  # rule id and span of the detected promise

    @property
    def sends(self) -> bool:
        """Whether the message goes out (after the auto-opened case, for a fallback)."""
        return self.kind is not VerdictKind.VETO


ALLOW = GuardVerdict(VerdictKind.ALLOW)

GuardStage = Callable[[GuardContext], GuardVerdict]


def case_promise_stage(ctx: GuardContext) -> GuardVerdict:
    """Veto a promise of human action while no case exists; auto-open on the second try."""
    if not ctx.cases_enabled:
        return ALLOW
    if ctx.has_open_case_for_lead or ctx.case_opened_this_turn:
        return ALLOW
    promise = ctx.detect(ctx.body)
    if promise is None:
        return ALLOW
    if ctx.prior_vetoes_this_turn == 0:
        return GuardVerdict(
            VerdictKind.VETO,
            stage="case_promise_stage",
            code=CASE_PROMISE_WITHOUT_CASE,
            error_message=ctx.teaching,
            promise=promise,
        )
    return GuardVerdict(
        VerdictKind.ALLOW_WITH_AUTOFALLBACK,
        stage="case_promise_stage",
        code=CASE_PROMISE_WITHOUT_CASE,
        promise=promise,
    )


# Declarative chain, in order. A new stage is a function appended here (and a version bump).
GUARD_CHAIN: tuple[GuardStage, ...] = (case_promise_stage,)


def run_guard_chain(ctx: GuardContext, stages: Sequence[GuardStage] = GUARD_CHAIN) -> GuardVerdict:
    """Run the chain: the first veto wins; otherwise the first auto-fallback; otherwise allow.

    A veto from a later stage beats an earlier stage's auto-fallback: a message that will not be
    sent needs no case.
    """
    fallback: GuardVerdict | None = None
    for stage in stages:
        verdict = stage(ctx)
        if verdict.kind is VerdictKind.VETO:
            return verdict
        if verdict.kind is VerdictKind.ALLOW_WITH_AUTOFALLBACK and fallback is None:
            fallback = verdict
    return fallback or ALLOW
