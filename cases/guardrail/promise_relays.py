"""What the AI relays now or tells the customer to do is no promise (the policy in
``promise``: instructions to the customer, relays and completed actions). The rules know the
common forms; the learned stage still scores some of them as promises (round 19, from the
seen blind sets): "o senhor deve ligar para 0800 ...", 0.95; "Já verifiquei com a equipe da
fábrica agora há pouco: a recarga sai por R$ 32", 0.99; "Acabei de falar com a psicóloga
Renata: ela pediu para te informar que o valor é R$ 180", 0.97. When its best sentence is an
instruction, or the relay of a check the AI has already made, and holds no commitment of the
AI's own ("vou", "vamos", "já encaminhei") nor anything still to come, the verdict goes to
the model check instead of standing as a promise. The rules are never overruled.
"""

from __future__ import annotations

import re

# An instruction to the customer; the human acts only if the customer goes to them.
INSTRUCTION = re.compile(
    r"\b(?:(?:voce|vc|o\s+senhor|a\s+senhora)\s+(?:pode|deve|precisa)\s+(?:ligar|falar|entrar"
    r"|procurar|chamar|mandar|enviar|acessar|contatar|abrir|pedir)|ligue"
    r"|liga\s+(?:pra|para|no|na)"
    r"|entre\s+em\s+contato|fale\s+com|fala\s+(?:direto\s+)?com|procure|acesse|basta"
    r"|e\s+so\s+(?:ligar|chamar|falar|mandar)|orientamos|recomendo|sugiro|pedimos\s+que"
    # "o caminho mais rápido é ligar para a central", "o ideal é ligar direto para o plantão"
    r"|e\s+ligar\s+(?:direto\s+)?(?:pra|para|no|na)"
    # "ligue para o escritório e peça para falar com a Dra. Patrícia" (round 19)
    r"|pe[cç]a\s+para\s+falar)\b"
)

# A check the AI has already made, then what it found: "já verifiquei com a equipe: ...",
# "acabei de falar com a Renata: ela pediu para te informar que ...".
_CHECKED = re.compile(
    r"^\W*(?:ja\s+)?(?:verifiquei|conferi|confirmei|chequei|consultei|conversei|falei"
    r"|acabei\s+de\s+(?:falar|verificar|confirmar|checar|conferir|consultar|conversar))"
    r"\s+com\b[^:]{0,80}:"
)
# The AI's own commitment, or anything still to come: then the verdict stands.
_STILL_TO_COME = re.compile(
    r"\b(?:vou|vamos|irei|iremos|vai|vao|ira|irao|estou|estamos|retorno|retornam|aviso|avisam"
    r"|assim\s+que|quando|depois|ainda|amanha|logo|em\s+breve|encaminhei|repassei|abri"
    r"|acionei|pedi|solicitei|chamado|protocolo)\b"
)
_MINE = re.compile(
    r"\b(?:vou|vamos|irei|iremos|a\s+gente\s+vai|eu|estou|estamos|ja\s+(?:encaminhei|pedi|abri|acionei|avisei|repassei|solicitei))\b"
)


# "a Joana te liga pra acertar": someone calling the customer, not "liga pra central".
_CALLS_YOU = re.compile(r"\b(?:te|lhe|nos|ja)\s+$")


def relayed_or_instructed(folded_sentence: str) -> bool:
    """Whether a folded sentence relays a check the AI already made, or tells the customer
    what to do, with no commitment of the AI's own."""
    if _CHECKED.search(folded_sentence):
        return _STILL_TO_COME.search(folded_sentence) is None
    instructed = any(
        not _CALLS_YOU.search(folded_sentence, 0, found.start())
        for found in INSTRUCTION.finditer(folded_sentence)
    )
    return instructed and _MINE.search(folded_sentence) is None
