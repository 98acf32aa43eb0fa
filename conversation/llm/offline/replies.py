"""What the offline model says: its reply texts (pt-BR) and the facts it reports."""

from __future__ import annotations

OFFLINE_MODEL = "offline"

# specs/human-cases.md §7: the reason code of a customer asking for an attendant.
HANDOFF_REASON_CODE = "requested_human"
HANDOFF_REASON_TEXT = "O cliente pediu para falar com um atendente humano."

# Phrases (accent-free, lower case) that mean a knowledge search found nothing.
NO_RESULT_MARKERS: tuple[str, ...] = (
    "nenhum resultado",
    "nenhuma informacao",
    "nenhum documento",
    "nada encontrado",
    "nao encontrei",
    "nao foi encontrad",
    "sem resultados",
    "no results",
    "not found",
)

MAX_ANSWER_CHARS = 400
# A search hit is said to the customer only when it mentions at least this share of the
# question's content words (``reading.relevance``); below it: NOT_FOUND_REPLY.
RELEVANCE_THRESHOLD = 0.5

GREETING_TEMPLATE = "Olá! Sou {name}. Como posso ajudar?"
GREETING_NO_NAME = "Olá! Como posso ajudar?"
FOUND_TEMPLATE = "Encontrei isto: {passage}"
NOT_FOUND_REPLY = (
    "Desculpe, não encontrei essa informação. Pode me contar com outras palavras "
    "o que você precisa?"
)
CASE_OPENED_REPLY = (
    "Entendi! Registrei o seu pedido de {what} para a nossa equipe. Assim que eles me "
    "responderem, eu te aviso por aqui."
)
CASE_ALREADY_OPEN_REPLY = (
    "Seu pedido já está com a nossa equipe. Assim que eles me responderem, eu te aviso por aqui."
)
CASE_UPDATE_REPLY = (
    "Obrigado! Já passei essa informação para a nossa equipe. Assim que eles me responderem, "
    "eu te aviso por aqui."
)
CASE_BLOCKER = "Exige uma ação da equipe num sistema interno; o assistente não faz isso sozinho."
GENERIC_REPLY = (
    "Obrigado pela mensagem! Pode me contar um pouco mais sobre o que você precisa "
    "para eu poder ajudar?"
)
