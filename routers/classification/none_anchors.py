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
    # Round 19: what else reaches a business with no ask of its own (suppliers selling to it,
    # its social media, warnings, surveys, donations, chain and election messages). Anchors
    # that name a trade or a product ("sou motoboy e queria trabalhar", "nota fiscal do
    # serviço") were tried and dropped: they pulled in-scope messages to none (top-1 -1 to -2
    # points on the seen sets).
    "somos fornecedores e queremos apresentar nossa tabela de preços para revenda",
    "qual o instagram de vocês?",
    "vocês têm site ou facebook?",
    "cuidado, tem um perfil falso usando o nome de vocês",
    "poderiam responder uma pesquisa rápida para o meu tcc?",
    "estamos arrecadando doações para o abrigo do bairro, podem ajudar?",
    "vocês patrocinam eventos ou times da região?",
    "repassem essa mensagem para 10 contatos",
    "vota no meu candidato nessa eleição",
)
