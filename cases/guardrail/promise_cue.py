"""When the model check is asked below the learned stage's band: the promise cues.

The learned stage (``promise_learned``) clears most messages with evidence; a few promises it
clears by mistake are present-as-future with a named subject ("o financeiro estorna a
diferença") or a subjectless plural ("vão te ligar"). A sentence that carries the *commitment
cue* is sent to the model check even below the band (down to the cue's own floor). The cue is
not a feature of the model: it reads one sentence, deterministically, and only decides whether
the check is asked.
"""

from __future__ import annotations

import re

from .lexicon import HUM_EXT_NOUNS, alt
from .promise_features import (
    _ENDS,
    _KEY_CLASSES,
    _PIECE,
    _SCOPE_OPENERS,
    _is_tag_question,
    english_no_at,
    token_info,
)
from .promise_rules_dispatch import FLEET_WORDS
from .promise_words import RETURN_VERBS

__all__ = [
    "ACTOR_CLASSES",
    "ACTOR_CUE_FEATURES",
    "COMMITMENT_TRIGGERS",
    "HABITUAL",
    "commitment_cue",
    "has_actor_cue",
    "has_commitment_trigger",
]


# --- the actor frame: which sentences the commitment cue reads ---------------------------------

# Someone other than the AI as an actor: a person or team (first names too), a pronoun ("ele",
# "alguem") or "a gente". Present-as-future with such a subject ("a Dra. Helena liga pra voce
# antes da consulta", "o financeiro estorna a diferenca") is a promise the learned stage can
# score low: its verbs are not in any word class. Naming an actor alone sent a third of the
# near misses (past facts, relays, habits) to the model check (round 3), so it now only
# selects the sentences ``commitment_cue`` reads (``has_commitment_trigger``).
ACTOR_CLASSES = frozenset(("HUM", "PRO", "WE"))
# An actor class stands in a sentence (outside a negation, condition or instruction scope)
# exactly when some clause-frame bigram ends in it: every new key class of a clause adds
# ``k:<previous> <class>``. So the cue is one set intersection with the sentence's features.
_FRAME_LEFT = (
    "<s>",
    *_KEY_CLASSES,
    *(scope + label for scope in _SCOPE_OPENERS.values() for label in _KEY_CLASSES),
)
ACTOR_CUE_FEATURES: frozenset[str] = frozenset(
    f"k:{left} {actor}" for left in _FRAME_LEFT for actor in ACTOR_CLASSES
)

# What the team habitually does or is — hours, staffing, policies — is a fact, not a promise
# (``promise.py``: "nossa equipe trabalha aos sabados"; the §11.1 false-positive goldens).
# A sentence with one of these markers carries no actor cue.
HABITUAL = re.compile(
    r"\b(?:atend(?:e|em)|funciona[m]?|trabalha[m]?|abre[m]?|fecha[m]?|costuma\w*|geralmente"
    r"|normalmente|sempre|todos os dias|(?:aos|nos) (?:sabados|domingos|feriados)"
    r"|de segunda a \w+|formad[ao]s?|usually|always|works|opens"
    r"|closes|available|is (?:a|an|the)|are (?:a|an|the))\b"
)


# The business's own vehicles: "sai amanhã no nosso caminhão", "vai na próxima van" put one of
# its drivers to work for the customer (an outside carrier's truck is shipping status).
_FLEET = frozenset(FLEET_WORDS)
_FLEET_LEFT = frozenset(("nosso", "nossa", "proximo", "proxima"))

# Sentences worth the clause-level reading of ``commitment_cue``: an actor class stands in the
# frame, or a plural verb opens a clause with no subject ("vão te ligar", "devem te chamar"),
# or the customer is told what to expect ("expect a call from...", "aguarde o contato...").
COMMITMENT_TRIGGERS: frozenset[str] = ACTOR_CUE_FEATURES | frozenset(
    (
        # An actor inside an instruction's scope: the cue reads whether the instruction is
        # one ("ligue para a central que eles...") or a noun ("a call from", "on-call").
        *(f"k:{left} i_{actor}" for left in _FRAME_LEFT for actor in ACTOR_CLASSES),
        # An actor the learned stage reads inside a negation's or a condition's scope: the
        # cue's own clauses end at a colon, which the learned stage's do not, and it reads the
        # "se" of "não se preocupe" as the reflexive it is ("Não se preocupe: a Carla resolve
        # isso amanhã" is a promise after a reassurance).
        *(
            f"k:{left} {scope}{actor}"
            for left in _FRAME_LEFT
            for actor in ACTOR_CLASSES
            for scope in ("n_", "c_")
        ),
        *(
            f"b:{left} {verb}"
            for left in ("<s>", "que", ",", "e")
            for verb in ("vao", "irao", "devem", "ficaram")
        ),
        *("b:<s> expect", "b:<s> aguarde"),
        # The business's own vehicle takes something to the customer: its driver acts.
        *(f"b:{left} {vehicle}" for left in _FLEET_LEFT for vehicle in _FLEET),
        *(f"b:{vehicle} de" for vehicle in _FLEET),
        # ... named by whose it is: "no carro da loja", "na van da empresa" (round 28).
        *(f"b:{vehicle} da" for vehicle in _FLEET),
        # A deferred answer: "assim que o banco confirmar, te aviso".
        *("b:assim que", "b:logo que", "b:depois que", "b:<s> quando", "b:, quando"),
        *("b:as soon", "b:<s> once", "b:, once", "b:<s> when", "b:<s> after"),
    )
)


def has_commitment_trigger(features: list[str]) -> bool:
    """Whether ``commitment_cue`` should read this sentence (a cheap set intersection)."""
    return not COMMITMENT_TRIGGERS.isdisjoint(features)


def has_actor_cue(features: list[str]) -> bool:
    """Whether one sentence's features name an actor other than the AI, outside a question
    (a question leaves the choice to the customer)."""
    return not ACTOR_CUE_FEATURES.isdisjoint(features) and "q" not in features


# --- the commitment cue: a clause-level reading of who acts, when and how sure -------------------

# ``has_actor_cue`` only says that someone other than the AI is named. ``commitment_cue`` reads
# the sentence clause by clause (split at conjunctions and relative "que", not at the commas of
# an apposition: "A Fernanda, do financeiro, vai...") and asks of each clause:
#
# * who acts: a person or team of the business, a first name, a pronoun, "a gente", or the
#   implicit plural subject of "vão/devem/ficaram de te..." — never the AI ("vou"), the customer
#   ("você pode..."), nor an outside party as the subject ("a transportadora entrega"); a clause
#   without a subject of its own takes the previous clause's ("a equipe, que vai te responder");
# * when: nothing in the past ("o técnico trocou", "foi feito"), no habitual marker
#   (``HABITUAL``), no bare state ("a equipe está em reunião": "estar" without a gerund);
# * how sure: not negated, not conditional, not an instruction, not a possibility or an offer
#   ("pode", "posso"), not a question (a closing tag such as "tá?" or "ok?" does not make one);
# * and something that points forward or at the customer: a future or periphrasis, a gerund, a
#   subjunctive, "deve", "fica de", "te/você" as the one served, a time ahead ("amanhã",
#   "semana que vem", "next week", "a caminho"), or an assurance ("pode deixar que...",
#   "pode ficar tranquila", "don't worry").
#
# It runs only on sentences the learned stage scored below the band (rare enough to afford
# a second pass), and only decides whether the model check is asked.

_CUE_SPLIT = frozenset(
    ("e", "mas", "porem", "porque", "entao", "que", "and", "but", "so", "then", "who", "which")
)
_CUE_PAST = frozenset(("PAST1", "PAST3", "PASTEN", "WAS"))
_CUE_PAST_WORDS = frozenset(("did", "had", "prometeu", "prometeram", "disse", "disseram"))
_CUE_IMPLICIT = frozenset(("vao", "irao", "devem", "ficaram"))
_CUE_OUTSIDE: frozenset[str] = frozenset(w for w in HUM_EXT_NOUNS if " " not in w) - {"cozinha"}
_CUE_FORWARD_LABELS = frozenset(("FUT", "BEF", "GER", "SUBJ", "MODAL", "FICA", "CL", "TIME"))
_CUE_FORWARD_WORDS = frozenset(
    (
        *("caminho", "proxima", "proximo", "proximas", "proximos", "daqui", "logo", "mais"),
        *("next", "within", "way", "tomorrow", "tonight", "shortly", "later", "soon"),
        *("expect", "aguarde", "aguardar", "esperar", "espera", "aguardando", "pendente"),
        # The customer's own things as the object ("ajusta o seu plano"): acting for them.
        *("seu", "sua", "seus", "suas", "your", "aqui"),
        # A visit already arranged ("o instalador busca o aparelho na visita").
        *("visita", "visit"),
        # Where the customer is: "o menino da entrega passa aí até as 18h" (a visit ahead).
        *("ai",),
        # A time ahead counted from now: "nosso técnico chega em meia hora", "liga 10 min
        # antes".
        *("minutos", "hora", "horas", "instantes", "min", "mins", "minutinhos", "hr", "hrs"),
    )
)
_CUE_ASSURANCE = re.compile(
    r"\b(?:pode(?:m)? (?:deixar|ficar tranquil\w*|esperar|aguardar|contar)|fi(?:ca|que) tranquil"
    r"\w*|deixa comigo|don t worry|rest assured|no worries|expect|you can expect"
    r"|aguarde (?:o|a) (?:contato|ligacao|retorno|resposta))\b"
)
# "assim que o banco confirmar, te aviso" / "once the carrier confirms, I'll share the link": the
# AI will answer after an event it does not control. Not when the event is the customer's own
# ("assim que você enviar o comprovante, eu confirmo": the customer's message runs a turn).
_CUE_DEFERRED = re.compile(
    r"\b(?:assim que|logo que|depois que|quando|as soon as|once|when|after)\b(?P<event>[^,;]*)"
)
_CUE_CUSTOMER = re.compile(r"\b(?:voce|vc|voces|you|senhor|senhora)\b")
_CUE_RETURN = re.compile(
    rf"\b(?:(?:eu )?(?:te|lhe) {alt(RETURN_VERBS)}|volto a (?:te )?(?:falar|chamar|escrever)"
    r"|i\W?(?:ll|will) (?:let you know|share|send|message|update|follow up|get back|text|email"
    r"|reach out|be in touch))\b"
)


# A clause that opens on one of these has no subject of its own ("... e deve chegar", "... e
# vai passar aí", "... e chegam aí em 40 minutos"): it is the previous clause's actor's, even
# when that clause told the past.
_CUE_ELLIPSIS = frozenset(("FUT", "MODAL", "P3"))

# The cue's pieces: the learned stage's, and a colon before a space, which ends a clause here
# (and with it a negation's scope: "não mexa em nada: o eletricista passa aí até as 18h").
# An emoji between two statements ends a clause the same way (WhatsApp writes no period
# there): "não vai poder dar a aula amanhã 😕 a secretaria vai remarcar" (round 15).
_EMOJI = "[\U0001f300-\U0001faff\u2600-\u27bf]+"
_CUE_PIECE = re.compile(rf":(?=\s)|{_EMOJI}|{_PIECE.pattern}")


def commitment_cue(folded: str, start: int, end: int) -> bool:
    """Whether the sentence ``folded[start:end]`` commits someone other than the AI to act
    for the customer (see above). Deterministic; reads only that sentence."""
    sentence = folded[start:end]
    pieces = _CUE_PIECE.findall(sentence)
    words = [p for p in pieces if p[0] not in _ENDS and p != ":" and (p.isascii() or p.isalnum())]
    if not any(word.isalnum() for word in words):
        return False
    if "?" in sentence:
        if not _is_tag_question(words):
            return False
        # "..., tá?": the tag ("tá" reads as "está") is not part of the statement.
        pieces = pieces[: len(pieces) - 1 - pieces[::-1].index(words[-1])]
    deferred = _CUE_DEFERRED.search(sentence)
    if (
        deferred is not None
        and _CUE_CUSTOMER.search(deferred.group("event")) is None
        and _CUE_RETURN.search(sentence, deferred.start()) is not None
    ):
        return True  # the AI answers later, after someone else's event: a deferred answer
    assured = _CUE_ASSURANCE.search(sentence) is not None
    inherited = past_actor = False
    clause: list[str] = []
    for piece in (*pieces, "."):
        if piece.isalnum() and piece not in _CUE_SPLIT:
            clause.append(piece)
            continue
        if piece == ",":
            clause.append(piece)
            continue
        if clause:
            # A clause that opens on its verb keeps the subject of the one before, even a
            # past one: "o motoboy já saiu com suas peças e deve chegar em 20 minutos".
            carried = inherited or (past_actor and token_info(clause[0])[0] in _CUE_ELLIPSIS)
            committed, actor, past, governs, negated = _clause_commits(clause, carried, assured)
            if committed:
                return True
            if governs or (negated and piece == "que"):
                # "Ligue para a central que eles vão te ajudar", "se você ligar, eles...": an
                # instruction or a condition governs the rest of the sentence; a negation still
                # open at the clause's end governs what "que" introduces ("não posso garantir
                # que a equipe vai..."), not what follows "e", "mas" or a colon ("não tem
                # problema e o técnico passa aí amanhã", "não mexa em nada: o eletricista...").
                return False
            inherited, past_actor = actor and not past, actor and past
            clause = []
    return False


# "foi buscar", "foram pegar": gone to do something (an errand under way), not a past fact.
_ERRAND_WAS = frozenset(("foi", "foram"))
# A clock time or a duration written as one token: "1h", "18h30", "40min".
_CLOCK = re.compile(r"[0-9]{1,2}(?:h[0-9]{0,2}|hs|min|mins)")


def _own_vehicle(clause: list[str], index: int) -> bool:
    """Whether the vehicle at ``index`` is the business's: "nosso caminhão", "a próxima van",
    "o carro de entrega(s)", "o carro da loja" (not "o caminhão da transportadora", not "a
    van da loja parceira": the rule ``own_vehicle_delivery`` reads the same names)."""
    if index > 0 and clause[index - 1] in _FLEET_LEFT:
        return True
    after = clause[index + 1 : index + 3]
    if after in (["da", "loja"], ["da", "empresa"]):
        # Not "da loja parceira": someone else's.
        return not "".join(clause[index + 3 : index + 4]).startswith("parceir")
    return after in (["de", "entrega"], ["de", "entregas"])


def _errand(clause: list[str], index: int) -> bool:
    """Whether the "foi"/"foram" at ``index`` is the motion of an errand: an infinitive next."""
    if clause[index] not in _ERRAND_WAS or index + 1 >= len(clause):
        return False
    return token_info(clause[index + 1])[0] == "INF"


# What may stand before an imperative that instructs the customer ("por favor, ligue...").
_CUE_IMPERATIVE_LEFT = frozenset(("", "por", "favor", "please", "entao", "so", "basta"))

# English participles used as adjectives ("the revised figures") are not a past action.
_CUE_BEFORE_ADJECTIVE = frozenset(("the", "a", "an", "your", "our", "new", "updated"))


def _clause_commits(
    clause: list[str], inherited: bool, assured: bool
) -> tuple[bool, bool, bool, bool, bool]:
    """(whether this clause commits an actor to act, whether it has an actor, whether it
    tells of the past, whether an instruction or condition in it governs the rest of the
    sentence, whether a negation's scope is still open at its end)."""
    actor = governs = False
    scope = ""
    past = state = doubt = False
    forward = assured
    be = gerund = future = False
    previous = ""
    after_comma = False
    for index, word in enumerate(clause):
        if word == ",":
            scope = previous = ""
            after_comma = True
            continue
        label, _key, opener = token_info(word)
        if word == "no" and english_no_at(clause, index):
            label, opener = "NEG", "n_"  # "no one will call" (Portuguese "no" is "em" + "o")
        elif label == "WAS" and _errand(clause, index):
            # "o Betão foi buscar no depósito": gone to do it, under way (like a gerund).
            label = "GER"
        elif _CLOCK.fullmatch(word):
            label = "TIME"  # "volta em 1h", "chega em 40min", "até as 18h"
        if (
            not scope
            and not governs
            and ((label in ACTOR_CLASSES and word not in _CUE_OUTSIDE) or word in _CUE_IMPLICIT)
        ):
            if after_comma:
                # A new subject after a comma opens a clause of its own: "a peça não veio, o
                # técnico foi pegar..." — the past before the comma is not this actor's.
                past = be = False
            actor = True
        after_comma = after_comma and label in ("DET", "OUR")  # "..., o nosso técnico"
        if word in _FLEET and not scope and not governs and _own_vehicle(clause, index):
            actor = True  # "no nosso caminhão", "no carro de entrega": a driver of the business
        if word in _CUE_PAST_WORDS or (
            label in _CUE_PAST and not (label == "PASTEN" and previous in _CUE_BEFORE_ADJECTIVE)
        ):
            past = True
        elif label == "CAN" or label == "WISH":
            doubt = True
        if label == "BE":
            be = True
        elif label in ("GER", "BEF"):
            gerund = True
        if label in ("FUT", "SUBJ"):
            future = True
        if (label in _CUE_FORWARD_LABELS or word in _CUE_FORWARD_WORDS) and scope != "n_":
            forward = True  # not "o técnico não vai conseguir vir hoje"
        if opener == "c_" and previous in ("nao", "nem"):
            # "Não se preocupe", "não se esqueça": a reflexive "se", not a condition.
            opener = None
        if opener == "i_" and (assured or previous not in _CUE_IMPERATIVE_LEFT):
            # "Expect a call from our team", "the on-call engineer": an imperative only
            # instructs at the start of its clause.
            opener = None
        if opener is not None:
            scope = opener
            governs = governs or opener != "n_"
        previous = word
    if be and not gerund and not future and "caminho" not in clause and "way" not in clause:
        state = True  # "a equipe está em reunião"; not "a equipe, que vai..., já está com..."
    if assured:
        doubt = False  # "pode deixar que...", "pode ficar tranquila": not a possibility
    has_actor = actor or inherited
    negated = scope == "n_"
    if not has_actor or past or state or doubt or not forward:
        return False, has_actor, past, governs, negated
    if HABITUAL.search(" ".join(w for w in clause if w != ",")):
        return False, True, past, governs, negated
    return True, True, past, governs, negated
