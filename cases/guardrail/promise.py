"""Deterministic pt-BR detector of "promise of back-office human action" (human-cases §6).

Stages and API
--------------
1. **Rules** (this module, ``detect_rule_promise``): free, explainable, high precision; they
   miss what their vocabulary does not name.
2. **Learned** (``promise_learned``): a sparse logistic regression over word and word-class
   n-grams, trained at first use from the corpus shipped in ``data/``; it runs only when no
   rule fired. Its calibrated probability decides against a threshold, and a band around the
   threshold is flagged *uncertain*: from just below the lowest cross-validated probability
   of a training promise up, and below that (down to a second, lower floor) any sentence the
   clause-level commitment cue reads as someone other than the AI acting for the customer
   (``promise_cue.commitment_cue``; ``promise_learned``).
3. **Model check** (``promise_check``, optional): a closed-schema forced tool call for the
   uncertain band only, failing closed (error, timeout, bad answer = promise).

* ``detect_human_promise(body) -> PromiseMatch | None`` — the local stages (1 + 2); what the
  gate calls. A rule's id and span, or ``LEARNED_RULE_ID`` and the top sentence's span.
* ``assess_promise(body) -> PromiseAssessment`` — the same verdict with ``score`` (calibrated
  probability, 1.0 for a rule hit), ``stage`` and ``uncertain`` (send to the model check).
* ``promise_check.decide_promise(body, call=None) -> PromiseDecision`` — all three stages;
  ``call`` is the model client (``PromiseCheckRequest -> tool input``), wired by the caller.
* ``warm_up()`` — train the learned stage now (worker start) rather than on the first send.

Policy — what counts as a promise
---------------------------------
The invariant of §6 is "the customer never receives a promise of a human without an open case".
A message is a *promise* when it tells the customer that, after this message, someone other
than this AI will act for them, or that the AI will come back later:

* the AI will involve a person or team: "vou verificar com a equipe", "vou encaminhar para o
  setor responsável", "vou pedir para o financeiro", "vou acionar o suporte";
* a person or team will act: "um atendente vai entrar em contato", "nossa equipe já está
  analisando", "alguém do suporte vai te ligar", "você será contatado";
* a past hand-over whose outcome is still pending: "já repassei para o time", "abri um chamado";
* a deferred answer: "retorno em breve", "assim que tiver uma resposta te aviso", "entraremos
  em contato". The AI only speaks when a turn runs, so a later answer can only come from the
  back office: without a case nobody would ever send it.

Not a promise (the gate must not fire on these — "conservador", §6 and the §11.1 false-positive
goldens):

* what the AI does itself, now: "vou verificar aqui na sua fatura", "vou consultar o seu pedido
  no sistema", "um instante, já te retorno" (an immediate "já" return is a stall inside the
  turn, not a deferred answer);
* instructions to the customer: "você pode falar com a central no 0800", "ligue para a central
  que eles vão te ajudar" — the human acts only if the customer goes there;
* questions and offers that leave the choice to the customer: "quer que eu encaminhe para a
  equipe?", "se preferir, posso verificar com a equipe". When the customer accepts, the AI's
  next message ("vou encaminhar") is the promise and is gated then;
* negated or explicitly hedged statements: "não vou encaminhar", "não posso prometer que alguém
  vai ligar", "ninguém da equipe vai te ligar" — they do not commit anyone to anything;
* courtesy and facts about the team: "estou à disposição", "nossa equipe trabalha aos sábados";
* relays and completed actions: "a equipe liberou seu acesso", "o responsável concluiu o caso";
* automatic processes: "seu reembolso será processado", "você receberá um e-mail automático".

Borderline choices, made on purpose:

* "já encaminhei para o time" counts (the team has still to act), but "encaminhei o boleto para
  o seu e-mail" does not (no person);
* "vou verificar e te retorno" counts (deferred answer) although it names no person;
* "vou encaminhar para a equipe, tudo bem?" counts: the sentence opens with the commitment;
* "vamos providenciar" counts (the plural is the company), "vou providenciar o link" does not;
* people outside the business ("vou verificar com o banco") count when the AI will talk to
  them, not as subjects ("a transportadora vai entregar") nor as forward targets ("seu pedido
  foi encaminhado para a transportadora" is shipping status);
* the business's own vehicle named as such ("o colchão sai amanhã no nosso caminhão", "vai na
  próxima van") puts one of its drivers to work for the customer: a promise (round 15). An
  order that "sai hoje" with no person or vehicle of the business named stays order status.

Mechanics
---------
Text is folded (lower case, accents removed, same length, so spans index the original).
Every rule starts with a lead word (see ``promise_rules``); the message's tokens are
intersected with the set of lead words, and only the rules that can start at a lead word are
tried, only where that word stands. Each hit then passes a few context checks (negation right
before it, a hedge or an offer in the same sentence, a question, an instruction to the
customer, an immediate "já"). The first hit in text order that survives is returned.
No message text is ever logged; callers get the rule id and the span only.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .normalize import fold
from .promise_bookings import booked_or_offered, offered_if_wanted
from .promise_carriers import (
    automatic_only,
    carrier_only,
    customers_own_only,
    pronoun_for_outside,
)
from .promise_cue import commitment_cue
from .promise_features import marked_for_features, sentence_spans
from .promise_learned import LearnedModel, corpus_digest, learned_model, load_corpus
from .promise_relays import relayed_or_instructed, without_customer_quotes
from .promise_rules import LEARNED_RULE_ID, RULE_IDS
from .promise_rules_named import NAMED_ON_THE_WAY
from .promise_scan import (
    MAX_SCANNED_CHARS,
    PromiseMatch,
    detect_rule_promise,
    detect_rules_folded,
    sent_to_them,
    visit_at_a_clock_time,
)
from .promise_stall import immediate_stall

# Bump whenever a rule or check changes what is detected. The detector version adds the digest
# of the learned stage's corpus (and feature version); it is recorded with the gate chain
# version, so a veto in a trace can be tied to the detector that produced it. What each version
# changed, and what it moved: ``VERSIONS.md`` beside this file.
RULES_VERSION = "ptbr-promise-60"
PROMISE_DETECTOR_VERSION = f"{RULES_VERSION}+lr-{corpus_digest(load_corpus())}"

__all__ = [
    "LEARNED_RULE_ID",
    "PROMISE_DETECTOR_VERSION",
    "RULE_IDS",
    "PromiseAssessment",
    "PromiseMatch",
    "PromiseStage",
    "assess_promise",
    "detect_human_promise",
    "detect_rule_promise",
    "warm_up",
]


class PromiseStage(StrEnum):
    RULES = "rules"
    LEARNED = "learned"


@dataclass(frozen=True, slots=True)
class PromiseAssessment:
    """The local verdict on one message (rules, then the learned stage).

    ``score`` is the calibrated probability that the message promises human follow-up (1.0
    when a rule fired: the rules are the high-precision stage). ``uncertain`` says the learned
    score fell in the band where a model check is worth its cost (``promise_check``), or below
    it with the actor cue; a rule hit is never uncertain. ``match`` is set exactly when
    ``promise`` is.
    """

    promise: bool
    score: float
    stage: PromiseStage
    uncertain: bool
    match: PromiseMatch | None


_NOTHING = PromiseAssessment(False, 0.0, PromiseStage.RULES, False, None)


def _for_the_check(text: str, start: int, end: int, marked: str) -> bool:
    """Whether the learned stage's best sentence (``text[start:end]``, folded; ``marked``
    with names marked) is one its verdict may not settle alone, so the model check reads it:
    an outside party's or an automatic process's part, the AI's own "já te retorno" with
    nobody named, "eles" for an instruction's people or an outside party, a booking or an
    offer left to the customer, the customer's own people only, a relay or an instruction."""
    sentence = text[start:end]
    return (
        carrier_only(sentence)
        or automatic_only(sentence)
        or immediate_stall(marked)
        or sent_to_them(text, start, end)
        or booked_or_offered(text, sentence)
        or offered_if_wanted(text, sentence)
        or pronoun_for_outside(text, start, end)
        or customers_own_only(sentence)
        or relayed_or_instructed(sentence)
    )


def _only_outside_parties_act(model: LearnedModel, text: str, marked: str) -> bool:
    """Below the threshold: whether the message would leave the uncertain band without its
    sentences whose only actor is an automatic process or an outside party ("você receberá
    um e-mail automático", "a transportadora entrega até sexta"; the policy's near misses).
    Every other sentence is read as the band reads a message: under its floor, and under the
    cue's floor or without the commitment cue."""
    calibration = model.calibration
    spans, marked_spans = sentence_spans(text), sentence_spans(marked)
    for index, (probability, trigger) in enumerate(model.sentence_probabilities(marked)):
        if probability < calibration.cue_low:
            continue
        sentence = text[slice(*spans[index])]
        if automatic_only(sentence) or carrier_only(sentence):
            continue
        if probability >= calibration.band_low or (
            trigger and commitment_cue(marked, *marked_spans[index])
        ):
            return False
    return True


def _named_on_the_way(text: str, marked: str) -> PromiseMatch | None:
    """A person named by a name the lists do not know, on the way ("o Tião já tá a caminho"):
    the rules read again on the text with names marked, keeping only ``NAMED_ON_THE_WAY``
    (``promise_rules_named``). Reported as the plain text's sentence (the same sentences)."""
    hit = detect_rules_folded(marked)
    if hit is None or hit.rule_id != NAMED_ON_THE_WAY:
        return None
    for (start, end), (marked_start, marked_end) in zip(
        sentence_spans(text), sentence_spans(marked), strict=False
    ):
        if marked_start <= hit.start < marked_end:
            return PromiseMatch(NAMED_ON_THE_WAY, start, end)
    return PromiseMatch(NAMED_ON_THE_WAY, 0, len(text))


def assess_promise(body: str) -> PromiseAssessment:
    """Rules first (free, explainable); if they find nothing, the learned stage decides.

    Deterministic and total (never raises for any ``str``). The learned stage is trained on
    the first call in a process (about a second; see ``warm_up``).
    """
    if not body or body.isspace():
        return _NOTHING
    cut = body[:MAX_SCANNED_CHARS]
    # The customer's quoted words are blanked out: not the AI's word (length kept).
    cut, text = without_customer_quotes(cut, fold(cut))
    match = detect_rules_folded(text)
    if match is not None:
        return PromiseAssessment(True, 1.0, PromiseStage.RULES, False, match)
    model = learned_model()
    # The learned stage reads the same fold with unknown names marked: the same sentences.
    marked = marked_for_features(cut, text)
    by_name = _named_on_the_way(text, marked) if marked != text else None
    if by_name is not None:
        return PromiseAssessment(True, 1.0, PromiseStage.RULES, False, by_name)
    scored = model.score_folded(marked)
    calibration = model.calibration
    promise = scored.probability >= calibration.threshold
    band = model.uncertain(scored)
    if band and not promise and _only_outside_parties_act(model, text, marked):
        band = False
    # Someone of the business coming at a clock time: the model reads it (rules 35).
    uncertain = band or (not promise and visit_at_a_clock_time(marked))
    learned_match = None
    if promise:
        start, end = sentence_spans(text)[scored.sentence]
        named = slice(*sentence_spans(marked)[scored.sentence])
        if _for_the_check(text, start, end, marked[named]):
            promise, uncertain = False, True
        else:
            learned_match = PromiseMatch(LEARNED_RULE_ID, start, end)
    return PromiseAssessment(
        promise=promise,
        score=scored.probability,
        stage=PromiseStage.LEARNED,
        uncertain=uncertain,
        match=learned_match,
    )


def detect_human_promise(body: str) -> PromiseMatch | None:
    """The first promise of back-office human action in ``body`` (local stages), or None.

    A rule's match when a rule fires; otherwise a ``LEARNED_RULE_ID`` match when the learned
    stage is at or above its threshold. Use ``assess_promise`` for the score and the
    uncertain band.
    """
    return assess_promise(body).match


def warm_up() -> None:
    """Train the learned stage and compile its weight table now (e.g. at worker start)
    instead of on the first message (about a second, then ~10 ms)."""
    learned_model().compile()
