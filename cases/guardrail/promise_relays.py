"""What the AI relays now or tells the customer to do is no promise (the policy in
``promise``: instructions to the customer, relays and completed actions). The rules know the
common forms; the learned stage still scores some of them as promises (round 19, from the
seen blind sets): "o senhor deve ligar para 0800 ...", 0.95; "Já verifiquei com a equipe da
fábrica agora há pouco: a recarga sai por R$ 32", 0.99; "Acabei de falar com a psicóloga
Renata: ela pediu para te informar que o valor é R$ 180", 0.97. When its best sentence is an
instruction, the relay of a check the AI has already made or of what someone asked it to pass
on, a document it already sent ("Encaminhei a guia para o seu e-mail"), or the business's
hours ("estará fechado durante o Carnaval"), and holds no commitment of the AI's own ("vou",
"vamos", "já encaminhei") nor anything still to come, the verdict goes to the model check
instead of standing as a promise. The rules are never overruled.
"""

from __future__ import annotations

import re

# An instruction to the customer; the human acts only if the customer goes to them.
INSTRUCTION = re.compile(
    r"\b(?:(?:voce|vc|o\s+senhor|a\s+senhora)\s+(?:pode|deve|precisa)\s+(?:ligar|falar|entrar"
    r"|procurar|chamar|mandar|enviar|acessar|contatar|pedir"
    # Open a ticket, not the customer's own shop ("o senhor precisa abrir amanhã às 8h").
    r"|abrir\s+(?:um|uma|o|a)\s+(?:chamado|solicitacao|protocolo|reclamacao|ticket|app|site))"
    r"|ligue"
    r"|liga\s+(?:pra|para|no|na)|ligando\s+(?:pra|para|no|na)"
    r"|entre\s+em\s+contato|fale\s+com|fala\s+(?:direto\s+)?com|procure|acesse|basta"
    r"|e\s+so\s+(?:ligar|chamar|falar|mandar)|orientamos|recomendo|sugiro|pedimos\s+que"
    # "o caminho mais rápido é ligar para a central", "o ideal é ligar direto para o plantão"
    r"|e\s+ligar\s+(?:direto\s+)?(?:pra|para|no|na)"
    # "ligue para o escritório e peça para falar com a Dra. Patrícia" (round 19)
    r"|pe[cç]a\s+para\s+falar"
    # Round 22: "Pode ligar direto pra Pri ... que ela combina", at a sentence's or clause's
    # start (not "a Pri pode ligar pra você"); "o ideal é levar ela num veterinário".
    r"|(?:^|(?<=[.!?,:;]\s)|(?<=[.!?,:;]))\s*pode\s+(?:ligar|chamar|falar|mandar\s+mensagem)"
    r"|o\s+(?:ideal|melhor|certo)\s+e\s+(?:voce\s+|vc\s+)?(?:levar|ligar|procurar|ir|passar))\b"
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
    # Round 21: what the person relayed does for the customer, in the present ("falei com o
    # Beto agora há pouco: ele te pega em casa às 7h30"), not the past ("ela te mandou").
    r"|\b(?:ele|ela|eles|elas)\s+(?:ja\s+)?(?:te|lhe)\s+[a-z]+(?<!ou)(?<!eu)(?<!iu)\b"
)
_MINE = re.compile(
    r"\b(?:vou|vamos|irei|iremos|a\s+gente\s+vai|eu|estou|estamos"
    r"|ja\s+(?:encaminhei|pedi|abri|acionei|avisei|repassei|solicitei))\b"
)
# Someone asked the AI to pass something on: "a equipe de suporte me pediu para te orientar
# a desligar o modem".
_ASKED_TO_PASS_ON = re.compile(
    r"\bme\s+(?:pediu|pediram)\s+(?:para|pra)\s+(?:te|lhe)\s+"
    r"(?:orientar|informar|avisar|dizer|passar|explicar|lembrar)\b"
)
# A document the AI has already sent or made: "Encaminhei a guia do DAS para o seu e-mail",
# "Já gerei a segunda via da sua conta ... Segue o link" (the policy's "encaminhei o boleto
# para o seu e-mail").
_SENT_A_DOCUMENT = re.compile(
    r"^\W*(?:ja\s+)?(?:gerei|emiti|enviei|encaminhei|mandei|anexei|reenviei)\s+(?:[oa]s?\s+|sua\s+"
    r"|seu\s+|suas\s+|seus\s+)?(?:segunda\s+via|guia|guias|boleto|boletos|link|nota|notas"
    r"|comprovante|contrato|pdf|arquivo|documento|documentos|recibo|fatura|orcamento|laudo)\b"
)
# The business's hours: "Nosso escritório estará fechado durante o Carnaval, e retomamos o
# atendimento na quarta", "o plantão vai funcionar pelo número ...", "A coordenação estará
# disponível para conversas logo após a reunião" — for everyone, not this customer.
_HOURS = re.compile(
    r"\b(?:estara|estarao|vai\s+estar|vao\s+estar|ficara|vai\s+ficar)\s+(?:fechad|abert"
    r"|disponive)|\b(?:vai|vao|ira|irao)\s+funcionar\b|\bretoma(?:mos|remos|ra)?\s+o\s+atendimento"
    r"|\batendimento\s+(?:normal\s+)?(?:retorna|volta|sera\s+retomado)"
)
# A standing schedule, by its plural weekdays: "os outros horários a partir da semana que vem
# são com a Dra. Fernanda, às terças e quintas à tarde" (round 21) is the agenda, not a visit.
_SCHEDULE = re.compile(
    r"\b(?:as|nas|aos|nos)\s+(?:segundas|tercas|quartas|quintas|sextas|sabados|domingos)\b"
)
# The deadline a process gives someone: "depois que o pacote chega ao vendedor, ele tem até 3
# dias úteis para confirmar" (round 21), how it goes, not who this message commits.
_DEADLINE = re.compile(
    r"\b(?:tem|tera|terao)\s+(?:um\s+prazo\s+de\s+)?ate\s+[0-9]+\s+(?:dias|horas)"
)
_FOR_YOU = re.compile(r"\b(?:te|lhe|voce|vc|seu|sua|seus|suas|senhor|senhora)\b")


# "a Joana te liga pra acertar": someone calling the customer, not "liga pra central".
_CALLS_YOU = re.compile(r"\b(?:te|lhe|nos|ja)\s+$")


def relayed_or_instructed(folded_sentence: str) -> bool:
    """Whether a folded sentence relays a check the AI already made (or what someone asked it
    to pass on), reports a document it already sent, states the business's hours, or tells
    the customer what to do, with no commitment of the AI's own, or reads out a standing
    schedule ("às terças e quintas") or a process's deadline ("tem até 3 dias úteis para")."""
    if _CHECKED.search(folded_sentence) or _ASKED_TO_PASS_ON.search(folded_sentence):
        return _STILL_TO_COME.search(folded_sentence) is None
    sent = _SENT_A_DOCUMENT.search(folded_sentence)
    if sent is not None:
        # What follows the document: "encaminhei" itself is the sending.
        return _STILL_TO_COME.search(folded_sentence, sent.end()) is None
    if _HOURS.search(folded_sentence):
        return _FOR_YOU.search(folded_sentence) is None
    if _SCHEDULE.search(folded_sentence) or _DEADLINE.search(folded_sentence):
        return _MINE.search(folded_sentence) is None
    instructed = any(
        not _CALLS_YOU.search(folded_sentence, 0, found.start())
        for found in INSTRUCTION.finditer(folded_sentence)
    )
    return instructed and _MINE.search(folded_sentence) is None


# The customer's own words quoted back ("Você me escreveu 'a Dona Fátima vai me mandar outra
# marmita amanhã', mas não encontrei nenhum combinado assim"): what is inside the quotes is the
# customer's, not the AI's word (round 22, from r46). Straight or typographic quotes after a
# verb of saying whose subject is the customer; at most 300 characters.
_CUSTOMER_QUOTE = re.compile(
    r"\b(?:voce|vc|o\s+senhor|a\s+senhora)\s+(?:me\s+|nos\s+)?"
    r"(?:escreveu|disse|falou|mencionou|comentou|contou|perguntou|mandou|pediu|informou)"
    r"(?:\s+que)?\s*:?\s*[\"'\u201c](?P<quoted>[^\"'\u201c\u201d\n]{1,300})[\"'\u201d]"
)


_QUOTE_MARKS = frozenset("\"'\u201c")


def without_customer_quotes(original: str, folded: str) -> tuple[str, str]:
    """``original`` and ``folded`` (``fold(original)``, the same length) with the customer's
    quoted words blanked out, so no stage reads them as the AI's; both unchanged without any."""
    if _QUOTE_MARKS.isdisjoint(folded):
        return original, folded  # most messages quote nothing: no regex pass
    for found in _CUSTOMER_QUOTE.finditer(folded):
        start, end = found.span("quoted")
        blank = " " * (end - start)
        original = original[:start] + blank + original[end:]
        folded = folded[:start] + blank + folded[end:]
    return original, folded
