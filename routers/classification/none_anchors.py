"""Messages that fit no business intent: the built-in examples of the "none" class.

Every router starts with these (its admin may add more by labelling phrases ``none``).
They are what any Brazilian business receives on WhatsApp without an ask in it:
greetings, thanks, acknowledgements, laughter, wrong numbers, chain messages, spam and
job applications. Written for this project; none is taken from an evaluation set.
"""

from __future__ import annotations

NONE_ANCHORS: tuple[str, ...] = (
    "olá",
    "oi, boa tarde",
    "bom diaa",
    "boa noite, tudo bem?",
    "oii tudo bom?",
    "e aí",
    "opa",
    "alô",
    "tem alguém aí?",
    "oi, pode falar?",
    "obrigado",
    "muito obrigada!",
    "valeu mesmo",
    "obg",
    "agradeço a atenção",
    "ok",
    "certo",
    "entendi",
    "beleza",
    "combinado",
    "perfeito",
    "tá bom",
    "sim",
    "não",
    "kkkkk",
    "hahaha",
    "rsrsrs",
    "desculpa, mandei no contato errado",
    "foi sem querer",
    "número errado",
    "quem fala?",
    "de onde é esse número?",
    "bom fim de semana a todos",
    "deus abençoe",
    "feliz ano novo!",
    "ganhe dinheiro rápido, clique no link",
    "você foi sorteado, resgate seu prêmio",
    "conheça nossa agência de marketing digital",
    "vocês estão contratando?",
    "segue meu currículo para a vaga",
    "que dia lindo hoje",
    "alguém viu o jogo ontem?",
)
