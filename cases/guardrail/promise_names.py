"""Proper names the word lists do not know, read from capitals (features f13).

Every promise that reached a customer with no case on a first reading since round 13 had a
person the learned stage did not know as its subject: a nickname ("o Betão foi buscar no
depósito, volta em 1h"), "Seu Tião passa aí quinta". No list of names can be complete, and
worse, an unknown name is not neutral: its ending gives it a verb's class ("Valdir" reads as
an infinitive, "Tadeu" as a past tense, "Almeida" as a participle).

What the folded text has lost, the original still says: a capitalised word right after an
article or an honorific ("o Betão", "a Cidinha", "Seu Tião", "Dona Neide", "Mr. Lewis") is
somebody's name. ``mark_names`` replaces such a word, in the folded text the learned stage
reads, by ``NAME_MARK`` (a word of the ``NAME`` class). The rules read the plain fold, but
for one: a person named on the way (``promise_rules_named``, round 30).

Not a mark:

* a word the classes already know (a known name, a team, a function word);
* an abbreviation ("o Dr. Paulo": "Dr" stays, its period must not end the sentence; "Paulo"
  follows the honorific);
* public bodies, places, holidays and payment rails that messages capitalise ("o Detran", "a
  Prefeitura", "o Pix", "o Carnaval"): ``NOT_NAMES``;
* after a bare article, a capitalised word followed by another (a product's name in title
  case, "o Plano Premium", is not a person; "a Ana Paula" is known by its first word);
* a vocative ("Olá, Sr. Jorge!", "Oi dona Célia, ..."): the customer, not an actor;
* after an article that does not open a subject ("adora receber o Thor", "o livro 'O Jardim
  das Marés'", "viagem a Gramado"): an object, a title, a place.

A pet as a subject ("a Luna deve usar o colar") is marked: the capitals cannot tell it from
a person, and the rest of the sentence still has to read like a promise.
"""

from __future__ import annotations

import re

NAME_MARK = "fulano"

# A capitalised word after a space. Scanning capitals first keeps the common message (one
# capital, at its start) to a single C-level search.
_CAPITAL = re.compile(r"[ \t](?P<name>[A-ZÀ-Ý][a-zà-ÿ]+)\b")
# What rules a name out when it follows, past spaces: a vocative ("Olá, Sr. Jorge!", "Oi dona
# Célia, o eletricista..."), a compound ("o Wi-Fi"), a model or a dose ("o Onix 2019", "o
# Losartana 50mg"); and after an article, a capital (a product's name in title case, "o Plano
# Premium"; after an honorific it is a surname).
_NOT_AFTER_NAME = frozenset("-,!?.;:0123456789")
# After an article there is no vocative: "... para o Téo.", "o Betão, nosso motorista, ..."
# (round 21).
_NOT_AFTER_ARTICLE_NAME = frozenset("-0123456789")
# What stands right before the name, folded: an honorific that precedes a person ("Seu Tião",
# "Dona Cida", "Sr. Valdir"), or an article ("seu" is also "your", "o seu Onix 2019", so it is
# read like one).
_BEFORE_NAME = re.compile(
    r"(?:^|[^\w.])(?:(?P<honorific>dona|sra?\.?|srta\.?|dra?\.|profa?\.|ti[oa]|mrs?\.?|ms\.?)"
    r"|(?P<article>[oa]|seu))[ \t]*$"
)
_BEFORE_WINDOW = 8
# Where a subject starts: the text's start, a sentence or clause mark, or a conjunction. An
# article elsewhere is an object's ("adora receber o Thor", "buscar a Luna") or a title's
# ("o livro 'O Jardim das Marés'"); an honorific names a person wherever it stands.
_SUBJECT_LEFT = re.compile(
    r"(?:^|[.!?:;,\n(]|\b(?:e|mas|que|entao|porque|pois|se|quando|and|but)\b"
    # Round 21: the person the AI goes to ("vou confirmar com o Téo", "encaminhei para a Cida").
    r"|\b(?:com|para)\b)[ \t]*$"
)
_LEFT_WINDOW = 12

NOT_NAMES: frozenset[str] = frozenset(
    (
        *("detran", "prefeitura", "receita", "capitania", "procon", "serasa", "anvisa"),
        *("correios", "sedex", "caixa", "justica", "policia", "defesa", "marinha", "inss"),
        *("pix", "brasil", "rua", "avenida", "praca", "rodovia", "estrada", "centro"),
        *("carnaval", "natal", "pascoa", "reveillon", "copa", "black", "cyber"),
        *("dr", "dra", "sr", "sra", "srta", "prof", "profa", "mr", "mrs", "ms"),
    )
)


def mark_names(original: str, folded: str, known: frozenset[str]) -> str:
    """``folded`` (``fold(original)``) with every unknown proper name after an article or an
    honorific replaced by ``NAME_MARK``. ``known``: words whose class is already set (they
    keep it). Only whole words change, never a sentence end, so the sentences of the result
    are those of ``folded``, in the same order and number."""
    if original.islower():  # no capital at all (C speed; most chat messages have one)
        return folded
    pieces: list[str] = []
    last = 0
    for match in _CAPITAL.finditer(original):
        start, end = match.span("name")
        before = _BEFORE_NAME.search(folded, max(0, start - _BEFORE_WINDOW), start)
        if before is None:
            continue
        article_word = before.group("article")
        article = article_word is not None
        following = original[end : end + 3].lstrip(" \t")[:1]
        # "seu" is an honorific too: "Olá, Seu Geraldo!" is a vocative.
        not_after = _NOT_AFTER_ARTICLE_NAME if article_word in ("o", "a") else _NOT_AFTER_NAME
        if following in not_after or (article and following.isupper()):
            continue
        if article:
            opening = before.start("article")
            left = folded[max(0, opening - _LEFT_WINDOW) : opening]
            if _SUBJECT_LEFT.search(left) is None:
                continue
        word = folded[start:end]
        if word in known or word in NOT_NAMES:
            continue
        pieces.append(folded[last:start])
        pieces.append(NAME_MARK)
        last = end
    if not pieces:
        return folded
    pieces.append(folded[last:])
    return "".join(pieces)


# The customer addressed by name in a folded sentence ("oi, larissa! ...", "um instantinho,
# carla, ja te retorno", "..., renato."): a greeting's or a comma's word right before a comma
# or the sentence's end, with its honorific if it has one (round 30: "Oi Dona Cida, vou checar
# aqui e já te digo", "Um instante, Seu Joaquim, vou conferir aqui"). The post-filters of
# ``promise`` read it as nobody acting.
_ADDRESSED = re.compile(
    r"(?:^\W*(?:oi|ola|bom\s+dia|boa\s+tarde|boa\s+noite)\W+|,\s*)"
    r"(?:(seu|dona|sr|sra|senhor|senhora)\.?\s+)?([a-z]+)\s*(?=[,.!?]|$)"
)


def addressed_names(folded_sentence: str) -> set[str]:
    """The words a folded sentence uses to address the customer by name (and honorific)."""
    return {word for found in _ADDRESSED.findall(folded_sentence) for word in found if word}
