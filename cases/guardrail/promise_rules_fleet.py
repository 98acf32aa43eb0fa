"""Rules of the promise detector for a delivery on the business's own vehicle: "o sofá vai no
nosso caminhão na quinta", "nossa van passa aí amanhã". The policy (``promise``, round 15)
counts it a promise: one of the business's drivers has still to act for the customer. An
outside carrier's vehicle ("o caminhão da transportadora") and an order that "sai hoje" with
no vehicle named stay order status. Spliced into ``promise_rules.RULES`` after the pending
rules."""

from __future__ import annotations

from .lexicon import WORD_END, alt
from .promise_rule_types import Branch, Rule

# The business's vehicles, folded. "carro" only when it is not the house's "carro-chefe".
FLEET_WORDS: tuple[str, ...] = (
    *("caminhao", "caminhaozinho", "caminhonete", "carreta", "carro", "furgao", "kombi"),
    *("moto", "picape", "utilitario", "van", "vanzinha", "fiorino", "veiculo"),
)
_FLEET = rf"{alt(FLEET_WORDS)}{WORD_END}(?![\s-]+chefe)"
_OURS = r"(?:nosso|nossa|proxim[oa]|nosso\s+proximo|nossa\s+proxima)"
# A habit or a standing fact about the fleet, anywhere later in the sentence: "nossa van
# passa no seu bairro toda terça", "sempre sai às 10h".
_HABIT = (
    r"(?:toda|todas|todo|todos|sempre|geralmente|normalmente|costuma|costumam|so\s+roda"
    r"|so\s+sai)(?![a-z0-9])"
)
_NOT_HABIT = rf"(?![^.!?;\n]*(?<![a-z0-9]){_HABIT})"

FLEET_RULES: tuple[Rule, ...] = (
    Rule(
        "own_vehicle_delivery",
        (
            # "vai no nosso caminhão", "sai amanhã cedo na próxima moto", "entregamos com o
            # nosso utilitário": the thing travels on the business's vehicle.
            Branch(
                (
                    *("vai", "vao", "sai", "saem", "segue", "seguem", "desce", "descem"),
                    # Not "entrega", most often the noun ("a entrega no nosso caminhão é...").
                    *("leva", "levam", "levamos", "entregam", "entregamos"),
                    *("embarca", "embarcam", "mandamos", "enviamos", "despachamos"),
                ),
                r"(?:\s+[a-z0-9]+){0,3}?\s+(?:n[oa]|pel[oa]|com\s+[oa])\s+"
                + _OURS
                + r"\s+"
                + _FLEET
                + _NOT_HABIT,
            ),
            # "nossa van passa aí amanhã", "o nosso caminhão chega às 7h": the vehicle comes.
            Branch(
                ("nosso", "nossa"),
                r"\s+"
                + _FLEET
                + rf"(?:\s+(?!{_HABIT})[a-z]+){{0,2}}?\s+"
                + r"(?:passa|passam|chega|chegam|leva|levam|entrega|vai|sai|busca|recolhe"
                r"|retira|volta|descarrega)" + WORD_END + _NOT_HABIT,
            ),
        ),
    ),
)
