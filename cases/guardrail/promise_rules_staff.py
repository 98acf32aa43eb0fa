"""Rules of the promise detector for a person of the business acting in the forms the dispatch
rules (``promise_rules_dispatch``) do not read: a trade with a future, periphrastic ("o
vidraceiro vai instalar o box na sexta") or synthetic ("o mestre alfaiate fará a avaliação
amanhã"); the business's people coming after the day that opens the sentence ("Amanhã às 9h
dois carregadores nossos te esperam na doca"); and a future passive whose agent is one of them
("os convites serão entregues em mãos pela nossa equipe"). A passive in the past is a relay
("foi feito pela nossa equipe"), one without an agent an automatic process ("seu reembolso
será processado"): neither is read here. Spliced into ``promise_rules.RULES`` with the
dispatch rules, and counted as dispatch rules by ``promise_scan`` (a habit takes them back).
"""

from __future__ import annotations

from .lexicon import ACTION_INF, ACTION_SYNTH, FUT_AUX, NOT_A_CARRIERS, SUBJ_GAP, WORD_END, alt
from .promise_rule_types import Branch, Rule
from .promise_rules_dispatch import (
    COMES,
    DISPATCH_RULES,
    NOT_A_CONDITION,
    NOT_FROM,
    PEOPLE,
    TRADE_ACTS,
    TRADES,
)

# The synthetic futures of what a trade does at the customer's ("o montador virá amanhã").
_TRADE_SYNTH = alt(
    tuple(
        stem + ending
        for stem in (
            *("chegar", "passar", "vir", "levar", "trar", "buscar", "entregar", "montar"),
            *("desmontar", "medir", "pintar", "refar", "terminar", "finalizar", "instalar"),
        )
        for ending in ("a", "ao")
    )
)
_OURS_AFTER = r"(?:\s+(?:nosso|nossa|nossos|nossas))?"
# A future passive's participle: "serão entregues", "vai ser feita", "será instalado".
_PARTICIPLE = (
    r"(?:[a-z]+(?:ad|id)[oa]s?|feit[oa]s?|refeit[oa]s?|entregues?|post[oa]s?|abert[oa]s?"
    r"|vist[oa]s?|impress[oa]s?)"
)

# The agents of such a passive: the business's people, not "a operadora", most often the
# card's or the phone's company ("será processado pela operadora do cartão").
_AGENTS = tuple(word for word in PEOPLE if word not in ("operadora", "operadoras"))

STAFF_RULES: tuple[Rule, ...] = (
    # "o vidraceiro vai instalar o box na sexta", "o montador deve chegar às 9h", "o mestre
    # alfaiate fará a avaliação amanhã": a trade of the business with a future (the teams'
    # futures are ``human_will_act``'s).
    Rule(
        "staff_will_act",
        (
            Branch(
                TRADES,
                NOT_A_CARRIERS
                + SUBJ_GAP
                + rf"(?:\s+ja)?\s+(?:{FUT_AUX}(?:\s+(?:te|lhe))?\s+(?:{ACTION_INF}|{TRADE_ACTS})"
                + rf"|(?:te\s+|lhe\s+)?(?:{ACTION_SYNTH}|{_TRADE_SYNTH}))"
                + WORD_END,
                before=NOT_A_CONDITION,
            ),
        ),
    ),
    # The day first: "Amanhã às 9h dois carregadores nossos te esperam na doca", "amanhã
    # cedo o técnico passa aí" (the dispatch rules read the day after the verb).
    Rule(
        "staff_comes_day_first",
        (
            Branch(
                ("amanha", "depois de amanha"),
                r"(?:\s+(?:cedo|de\s+manha|a\s+tarde|a\s+noite))?"
                + r"(?:\s+(?:as|a\s+partir\s+das|por\s+volta\s+das)\s+[0-9]{1,2}(?:h|:[0-9]{2})?)?"
                + r"\s*,?(?:\s+(?:o|a|os|as|um|uma|dois|duas|tres|nosso|nossa|nossos|nossas))*"
                + rf"\s+{alt(PEOPLE)}{WORD_END}{_OURS_AFTER}{NOT_A_CARRIERS}"
                + rf"(?:\s+ja)?\s+(?:te\s+|lhe\s+)?{COMES}{WORD_END}{NOT_FROM}",
            ),
        ),
    ),
    # "os convites serão entregues em mãos pela nossa equipe", "a troca vai ser feita por um
    # técnico nosso": a future passive whose agent is a person of the business.
    Rule(
        "done_by_our_people",
        (
            Branch(
                ("sera", "serao", "vai ser", "vao ser", "ira ser", "irao ser"),
                rf"\s+{_PARTICIPLE}(?:\s+[a-z0-9]+){{0,4}}?\s+"
                + r"(?:pel[oa]s?|por\s+(?:um|uma)(?:\s+d[oa]s)?)\s+"
                + rf"(?:(?:nosso|nossa|nossos|nossas)\s+)?{alt(_AGENTS)}{WORD_END}"
                + NOT_A_CARRIERS,
            ),
        ),
    ),
)

# The dispatch rules and these, in the order ``promise_rules.RULES`` reads them.
FIELD_RULES: tuple[Rule, ...] = (*DISPATCH_RULES, *STAFF_RULES)
