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
"""

from __future__ import annotations

import re

from .lexicon import HUM_EXT_NOUNS
from .promise_features import token_info
from .promise_names import addressed_names

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
_WORD = re.compile(r"[a-z0-9]+")


def carrier_only(folded_sentence: str) -> bool:
    """Whether a folded sentence names a carrier or another outside party and nobody of the
    business."""
    words = _WORD.findall(folded_sentence)
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
    words = _WORD.findall(folded_sentence)
    if _FIRST_PERSON.intersection(words):
        return False
    addressed = addressed_names(folded_sentence)
    return all(word in addressed or token_info(word)[0] not in _ACTORS for word in words)
