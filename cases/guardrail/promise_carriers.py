"""An outside carrier's delivery is order status, not a promise (the policy in ``promise``: "a
transportadora vai entregar" is no subject of a promise, "seu pedido foi encaminhado para a
transportadora" is shipping status); so is an insurer's or a public body's own process
(detector 28). The learned stage reads a carrier as it reads the business's people ("pelos
Correios" looks like "pela equipe"), so when its best sentence names a carrier (or another
outside party) and nobody of the business — no person or team, no name, no "we", "I" or "our", no
"you" being acted for — its verdict is not left standing as a promise: the sentence goes to the
model check, which reads it whole (or, with no model, to the customer as the status it is).
The rules are never overruled: a rule hit ("vou verificar com os Correios") stays a promise.

So is an automatic process (round 19; the policy: "seu reembolso será processado", "você
receberá um e-mail automático"): "o app te envia uma notificação", "o sistema te manda um
SMS", "será processado automaticamente" with no person, team or name in the sentence and no
"I" or "we" (``automatic_only``).

So is "eles" for an outside party named just before (round 20): "a vistoria e a análise são
feitas pela própria seguradora. Você já separou o B.O.? Eles vão pedir esses documentos."
(``pronoun_for_outside``). And a sentence whose only people are the customer's own, with no
future and no time ("o frete está aparecendo zerado na sua loja": "loja" reads as a team of
the business; ``customers_own_only``).
"""

from __future__ import annotations

import re

from .lexicon import HUM_EXT_NOUNS
from .promise_features import token_info
from .promise_names import addressed_names
from .promise_rule_types import TOKEN

# Carriers and post, folded: how an order travels.
CARRIERS: frozenset[str] = frozenset(
    ("transportadora", "transportadoras", "correios", "correio", "sedex", "jadlog", "loggi")
)
# Other outside parties the policy names as no subject of a promise: an insurer, a public
# body, a registry, a utility, an airline, a manufacturer ("a seguradora vai analisar o
# sinistro em até 30 dias" is how their process runs, not this business's commitment). Not
# "banco": as often a seat or a bench ("o Tião refaz a limpeza do banco traseiro") as a bank.
OUTSIDE_SUBJECTS: frozenset[str] = CARRIERS | frozenset(
    (
        *("seguradora", "seguradoras", "prefeitura", "detran", "cartorio", "inss", "procon"),
        *("financeira", "concessionaria", "aerea", "aereas", "fabricante", "credenciado"),
    )
)
# The business or the AI itself in the sentence: then the verdict stands.
_OURS = frozenset(("HUM", "NAME", "WE", "I", "OUR", "PRO", "CL"))
_FIRST_PERSON = frozenset(("vou", "vo", "vamos", "irei", "iremos", "estou", "estamos", "gente"))
# And the people an outside party sends: "a seguradora vai mandar um perito" (round 19).
_OUTSIDE = frozenset(HUM_EXT_NOUNS) | frozenset(
    ("perito", "peritos", "perita", "vistoriador", "vistoriadora", "regulador", "reguladora")
)
# "nos próximos 10 dias" is "em + os", not "us".
_NOS_AS_IN_THE = frozenset(("proximos", "proximas", "ultimos", "ultimas"))


def carrier_only(folded_sentence: str) -> bool:
    """Whether a folded sentence names a carrier or another outside party and nobody of the
    business."""
    words = TOKEN.findall(folded_sentence)
    if OUTSIDE_SUBJECTS.isdisjoint(words):
        return False
    for index, word in enumerate(words):
        if word in _OUTSIDE or word in OUTSIDE_SUBJECTS:
            continue
        if word == "nos" and index + 1 < len(words) and words[index + 1] in _NOS_AS_IN_THE:
            continue
        if word in _FIRST_PERSON or token_info(word)[0] in _OURS:
            return False
    return True


# The machine as the actor: "o sistema te manda", "o app envia", "automaticamente".
_AUTOMATIC = re.compile(
    r"\b(?:automaticamente|automatic[oa]s?|(?:o|pelo|no|do)\s+(?:sistema|app|aplicativo|site"
    r"|portal)|por\s+e-?mail\s+automatico)\b"
)
# Somebody acting in the sentence: a person, team or name, "I", "we" or a third person.
_ACTORS = frozenset(("HUM", "NAME", "PRO", "WE", "I"))


def automatic_only(folded_sentence: str) -> bool:
    """Whether a folded sentence names an automatic process as its actor and nobody of the
    business (the customer addressed by name is nobody acting)."""
    if _AUTOMATIC.search(folded_sentence) is None:
        return False
    words = TOKEN.findall(folded_sentence)
    if _FIRST_PERSON.intersection(words):
        return False
    addressed = addressed_names(folded_sentence)
    return all(word in addressed or token_info(word)[0] not in _ACTORS for word in words)


_PRONOUNS = frozenset(("eles", "elas", "ele", "ela"))
# Who, named before a pronoun, is the business's side (its antecedent, if nearer than any
# outside party).
_OUR_SIDE = frozenset(("HUM", "NAME", "WE", "OUR"))
# How far back the pronoun's antecedent is looked for (folded characters: about two sentences).
_ANTECEDENT_WINDOW = 320


def pronoun_for_outside(folded_text: str, start: int, end: int) -> bool:
    """Whether the sentence ``folded_text[start:end]`` has "eles"/"ela" as its only actor and
    the nearest party named before it is an outside one (a carrier, an insurer, a body)."""
    sentence = folded_text[start:end]
    words = TOKEN.findall(sentence)
    if _PRONOUNS.isdisjoint(words) or _FIRST_PERSON.intersection(words):
        return False
    addressed = addressed_names(sentence)
    if any(w not in _PRONOUNS and w not in addressed and token_info(w)[0] in _OURS for w in words):
        return False
    for word in reversed(TOKEN.findall(folded_text[max(0, start - _ANTECEDENT_WINDOW) : start])):
        if word in OUTSIDE_SUBJECTS or word in _OUTSIDE:
            return True
        if word in _FIRST_PERSON or token_info(word)[0] in _OUR_SIDE:
            return False
    return False


_YOURS = frozenset(("seu", "sua", "seus", "suas"))
_ACTING = _ACTORS | {"OUR"}


def customers_own_only(folded_sentence: str) -> bool:
    """Whether every person or team the folded sentence names is the customer's ("sua loja",
    "seu contador"), with no future and no time in it (then nobody acts for them ahead)."""
    words = TOKEN.findall(folded_sentence)
    addressed = addressed_names(folded_sentence)
    owned = False
    for index, word in enumerate(words):
        kind = token_info(word)[0]
        if kind in ("FUT", "TIME") or word in _FIRST_PERSON:
            return False
        if kind not in _ACTING or word in addressed:
            continue
        if kind != "HUM" or index == 0 or words[index - 1] not in _YOURS:
            return False
        owned = True
    return owned
