"""An immediate return is a stall inside the turn, not a deferred answer (the policy in
``promise``: "um instante, já te retorno"). The rules know it (``promise_scan``'s immediate
return); the learned stage can still score a sentence high that pairs the AI's own work now
with a "já te retorno" ("Um instante que estou consultando a sua conexão aqui no sistema, já
te retorno", 0.908). When its best sentence holds such a stall and nobody else — no person,
team, name or third-person pronoun — the verdict goes to the model check instead of standing
as a promise. The rules are never overruled.
"""

from __future__ import annotations

import re

from .lexicon import alt
from .promise_features import token_info
from .promise_names import addressed_names
from .promise_rule_types import TOKEN
from .promise_words import RETURN_VERBS

_STALL = re.compile(
    rf"\b(?:ja|jaja)\s+(?:ja\s+)?(?:te\s+|lhe\s+)?{alt((*RETURN_VERBS, 'volto'))}\b"
    r"|\b(?:so\s+)?um\s+(?:instante|instantinho|minutinho|minuto|momento|segundinho)\b"
    r"|\bem\s+instantes\b"
    # "Deixa eu ver aqui o histórico das suas compras" (round 19).
    r"|\bdeixa\s+eu\s+(?:ver|conferir|checar|consultar|olhar|verificar|dar\s+uma\s+olhada)\b"
)
# Somebody other than the AI in the sentence: then the verdict stands.
_SOMEBODY = frozenset(("HUM", "NAME", "PRO"))


# Names that are nobody acting: the customer addressed ("Um instantinho, Carla, já te
# retorno"; ``promise_names.addressed_names``) and a complement ("os horários livres da
# Vanessa", round 21: "da Dra. Vanessa", the honorific and the name both).
_COMPLEMENT = re.compile(
    r"\b(?:da|do|de)\s+(?:(dra|dr|doutora|doutor|sra|sr|dona|seu)\.?\s+)?([a-z]+)"
)


def immediate_stall(folded_sentence: str) -> bool:
    """Whether a folded sentence is the AI's own immediate return, with nobody else in it."""
    if _STALL.search(folded_sentence) is None:
        return False
    nobody = addressed_names(folded_sentence) | {
        word for found in _COMPLEMENT.findall(folded_sentence) for word in found if word
    }
    return all(
        word in nobody or token_info(word)[0] not in _SOMEBODY
        for word in TOKEN.findall(folded_sentence)
    )
