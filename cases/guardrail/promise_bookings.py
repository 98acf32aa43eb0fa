"""A booking with someone of the business, or an offer of their free times, is the AI's own
work now, not a promise (round 19): "marquei seu horário de escova com a Tati para quinta às
15h", "Sua consulta de retorno com a Nutri Júlia está confirmada para quarta", "A Dra. Paula
tem horário na terça às 18h e na quinta às 7h. Qual prefere?". The customer comes to the
appointment; nobody of the business has to act for them after this message. The learned
stage reads the person and the day ahead as a visit and scores such sentences high (0.63 to
0.95 on the blind sets), so its verdict goes to the model check instead of standing as a
promise. Not when the sentence has someone coming, calling or answering back ("agendei a
visita do técnico", "marquei com a Tati, ela te liga para confirmar"): that stays. The rules
are never overruled.

Round 20: an offer whose yes the message asks for is the same ("Se mesmo assim não
funcionar, posso encaminhar o caso para a nossa equipe técnica. Quer que eu faça isso?"):
nobody acts until the customer answers (``offered_if_wanted``).
"""

from __future__ import annotations

import re

# The AI booked it, or it stands booked, with someone ("com a Tati", "com o Dr. Paulo").
_BOOKED_WITH = re.compile(
    r"\b(?:marquei|agendei|reservei|remarquei|encaixei|(?:esta|ficou|foi|esta\s+tudo)\s+"
    r"(?:confirmad[oa]|agendad[oa]|marcad[oa]|reservad[oa])|confirmad[oa]|agendad[oa]"
    r"|marcad[oa])\b"
)
_WITH_SOMEONE = re.compile(r"\bcom\s+(?:[oa]s?|sr\.?|sra\.?|dr\.?|dra\.?)\s+[a-z]")
# Someone coming to the customer or getting back to them: a visit or a deferred answer.
_ACTS_FOR_THEM = re.compile(
    r"\b(?:visita|vai\s+ate|vao\s+ate|passa|passam|vem|vai\s+ai|chega|chegam|busca|buscam"
    r"|leva|levam|instala|instalam|entrega|entregam|liga|ligam|ligar|retorna|retornam|um\s+retorno"
    r"|retornar|avisa|avisam|avisar|entra\s+em\s+contato|entrar\s+em\s+contato|domicilio"
    r"|em\s+casa|na\s+sua\s+casa|ate\s+voce|ai\s+na)\b"
)
# Free times offered, the choice left to the customer: "tem horário na terça ... Qual prefere?"
_FREE_TIMES = re.compile(
    r"\b(?:tem|temos|tenho|ha)\s+(?:horario|horarios|vaga|vagas|agenda|disponibilidade)\b"
    r"|\bhorarios?\s+(?:livres?|disponive(?:l|is))\b"
)
_CHOICE_ASKED = re.compile(
    r"\b(?:qual|quais)\s+(?:prefere|voce\s+prefere|fica\s+melhor|seria\s+melhor|horario"
    r"|dia|opcao)\b[^.!?]*\?|\b(?:prefere|fica\s+bom|pode\s+ser)\b[^.!?]*\?"
)


def booked_or_offered(folded_text: str, folded_sentence: str) -> bool:
    """Whether the learned stage's best sentence is a booking with someone of the business,
    or an offer of their free times whose choice the message leaves to the customer."""
    if _ACTS_FOR_THEM.search(folded_sentence):
        return False
    if _BOOKED_WITH.search(folded_sentence) and _WITH_SOMEONE.search(folded_sentence):
        return True
    # An offer: the free times anywhere, the choice asked, and nobody acting anywhere.
    return bool(
        _FREE_TIMES.search(folded_text)
        and _CHOICE_ASKED.search(folded_text)
        and not _ACTS_FOR_THEM.search(folded_text)
    )


# The AI offers ("posso encaminhar", "podemos pedir"), it does not commit ("vou", "vamos").
_CAN_DO = re.compile(
    r"\b(?:posso|podemos|a\s+gente\s+pode)\s+(?:te\s+|lhe\s+)?[a-z]+(?:ar|er|ir)\b"
)
_COMMITS = re.compile(r"\b(?:vou|vamos|vai|vao|ja|acionei|encaminhei|pedi|abri)\b")
# ... and asks for the customer's yes.
_YES_ASKED = re.compile(
    r"\b(?:quer|deseja|gostaria|prefere)\s+que\s+(?:eu|a\s+gente)\b[^.!?]*\?"
    r"|\b(?:posso|podemos)\s+(?:fazer|seguir|encaminhar|pedir|abrir|acionar)\b[^.!?]*\?"
)


def offered_if_wanted(folded_text: str, folded_sentence: str) -> bool:
    """Whether the learned stage's best sentence offers follow-up work that the message then
    asks the customer to accept, with no commitment in that sentence."""
    return bool(
        _CAN_DO.search(folded_sentence)
        and not _COMMITS.search(folded_sentence)
        and _YES_ASKED.search(folded_text)
    )
