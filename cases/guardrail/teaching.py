"""Which language the promise gate's teaching error is written in (human-cases §6).

The teaching error is read by the agent's model, so it follows the agent's language. An agent
has no language setting, and a conversation no detected language: the language an agent is
told to work in is the one of its prompt (the generic assistant's is pt-BR). So the prompt's
function words decide — English when they are clearly English, pt-BR otherwise (the product
is pt-BR first, and a mixed or empty prompt stays pt-BR).
"""

from __future__ import annotations

import re
from typing import Literal

from .chain import CASE_PROMISE_TEACHING_EN, CASE_PROMISE_TEACHING_PT

Language = Literal["pt", "en"]

# Function words of one language and not the other (no "a", "no", "do", "as", "me", "to":
# both languages have them).
_EN_WORDS = frozenset(
    (
        *("the", "you", "your", "are", "is", "and", "of", "for", "with", "will", "be"),
        *("this", "that", "these", "those", "please", "our", "we", "it", "in", "on", "at"),
        *("if", "when", "what", "always", "never", "only", "answer", "customer"),
        *("customers", "not", "don't", "can't"),
    )
)
_PT_WORDS = frozenset(
    (
        *("o", "os", "você", "voce", "seu", "sua", "seus", "suas", "de", "da", "das", "dos"),
        *("para", "com", "é", "e", "que", "em", "na", "nas", "nos", "um", "uma", "não"),
        *("nao", "por", "se", "quando", "sempre", "nunca", "só", "responda", "atenda"),
        *("cliente", "clientes", "nosso", "nossa"),
    )
)
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def prompt_language(prompt: str) -> Language:
    """``en`` when the prompt's function words are more English than Portuguese."""
    en = pt = 0
    for word in _WORD.findall(prompt.casefold()):
        en += word in _EN_WORDS
        pt += word in _PT_WORDS
    return "en" if en > pt else "pt"


def case_promise_teaching(prompt: str) -> str:
    """The teaching error of a veto, in the language of the agent whose prompt is ``prompt``."""
    return CASE_PROMISE_TEACHING_EN if prompt_language(prompt) == "en" else CASE_PROMISE_TEACHING_PT
