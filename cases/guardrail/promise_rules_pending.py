"""Rules of the promise detector for a request pending with a person or team that has still to
act: "o seu caso esta com a gerencia agora", "esta em analise pela equipe responsavel". Spliced
into ``promise_rules.RULES`` at their place in rule order."""

from __future__ import annotations

from .lexicon import HUM_CORE, HUM_CORE_BARE, WORD_END
from .promise_rule_types import Branch, Rule

PENDING_RULES: tuple[Rule, ...] = (
    # Round 7. "o seu caso esta com a gerencia agora", "segue com o financeiro, aguardando a
    # aprovacao": pending with a person or team that has still to act.
    Rule(
        "pending_with_human",
        (
            Branch(
                ("esta com", "estao com", "esta agora com", "segue com", "seguem com", "ta com"),
                rf"\s+{HUM_CORE}(?:\s+d[aoe]s?\s+[a-z]+)?(?:\s+agora|\s*,?\s+aguardando"
                r"|\s+para\s+(?:analise|avaliacao|aprovacao|conferencia))" + WORD_END,
            ),
        ),
    ),
    # Round 11. "foi registrado e esta em analise pela equipe responsavel", "segue em avaliacao
    # com o financeiro": the request is under review by a person or team that has still to act
    # (the nominal form of "a equipe esta analisando"). "nao esta em analise" is negated.
    Rule(
        "under_review_by_human",
        (
            Branch(
                tuple(
                    f"{be} {state}"
                    for be in ("esta", "estao", "segue", "seguem", "ta", "continua", "ficou")
                    for state in (
                        "em analise",
                        "em avaliacao",
                        "em revisao",
                        "em verificacao",
                        "em tratativa",
                        "sob analise",
                    )
                ),
                rf"\s+(?:pel[oa]s?\s+|com\s+|n[oa]s?\s+|junto\s+a[os]?\s+){HUM_CORE_BARE}",
            ),
        ),
    ),
    # Round 13. "seu chamado foi assumido pela equipe de redes", "foi priorizado pela
    # coordenacao", "foi atribuido ao tecnico Carlos": a person or team took the request on and
    # has still to act (not "foi aprovado pelo gerente", which is done).
    Rule(
        "assigned_to_human",
        (
            Branch(
                ("foi", "foram", "esta", "estao", "ficou", "ficaram", "ja foi", "ja esta"),
                r"\s+(?:assumid|priorizad|atribuid|designad|delegad|alocad)[oa]s?"
                rf"(?:\s+(?:pel[oa]s?|a[os]?|para|pra|pro)){{1,2}}\s+{HUM_CORE_BARE}",
            ),
        ),
    ),
)
