"""Rules of the promise detector for a person of the business named rather than described, on
the way to the customer or to a job for them: "o Juninho já tá a caminho", "o Tião, nosso
marinheiro, já tá indo pra vaga 14 ver a bomba" (round 30; the trades' own form is
``promise_rules``' ``staff_on_the_way``). Read after the pt-BR rules, before the English ones.

A name the word lists know is read in the fold. An unknown one ("o Tião", "a Cidinha") stands
only in the text the learned stage reads, where ``promise_names.mark_names`` put ``NAME_MARK``
in its place: ``promise.assess_promise`` runs the rules on that text too and keeps a hit of
``NAMED_ON_THE_WAY`` alone (the mark must not unlock any other rule).
"""

from __future__ import annotations

from .lexicon import BE_PROG, BE_PROG_WORDS, NAMES, NOT_AFTER_DE, ON_THE_WAY, SUBJ_GAP, WORD_END
from .promise_rule_types import Branch, Rule, first_tokens
from .promise_rules_en import EN_RULES

NAMED_ON_THE_WAY = "named_on_the_way"

NAMED_RULES: tuple[Rule, ...] = (
    Rule(
        NAMED_ON_THE_WAY,
        (
            # "o Juninho já tá a caminho", "a Cidinha tá indo pra sua casa" (not "o pedido da
            # Ana": a name after "de" is an owner, not a subject).
            Branch(
                tuple(sorted(NAMES)),
                rf"{SUBJ_GAP}(?:\s+ja)?\s+{BE_PROG}\s+{ON_THE_WAY}{WORD_END}",
                before=NOT_AFTER_DE,
            ),
            # "o Tião, nosso marinheiro, já tá a caminho": the apposition makes him one of ours.
            Branch(
                ("nosso", "nossa"),
                rf"(?:\s+[a-z]+){{1,3}}\s*,(?:\s+ja)?\s+{BE_PROG}\s+{ON_THE_WAY}{WORD_END}",
                before=r"(?<=,\s)",
            ),
        ),
        needs=first_tokens(BE_PROG_WORDS),
    ),
)

# What ``promise_rules.RULES`` reads last, in this order.
LATE_RULES: tuple[Rule, ...] = (*NAMED_RULES, *EN_RULES)
