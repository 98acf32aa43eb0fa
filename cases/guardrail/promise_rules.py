"""Rules of the pt-BR promise detector (see ``promise.py`` for the policy).

A rule is a list of branches and every branch starts with a *lead*: a literal word or phrase
from a closed list ("vou", "equipe", "retornaremos"...). That keeps the detector cheap: it
first looks for lead words among the message's tokens (a set intersection) and tries only
the rules whose leads start with a word that is there, only where that word stands. A message
without any lead word is answered without running a single pattern. ``ANCHORS`` and
``RULES_BY_ANCHOR`` are derived from the leads, so they cannot drift from the rules.

Some rules share one lead and differ in what follows ("vou" + verificar com / encaminhar para
/ pedir para...). They are written as one rule whose tails are named groups, so the words
after the lead are scanned once; the reported rule id is then the tail's group name. Rule
ids are the public identifiers of what fired: keep them stable.
"""

from __future__ import annotations

import re

from .lexicon import (
    ACTION_GER,
    ACTION_INF,
    ACTION_PRES_CLITIC,
    ACTION_SYNTH,
    ADV,
    ALERT_FINITE_LEADS,
    ALERT_INF,
    ALERT_PREP,
    ALERTED_AUX_WORDS,
    ASK_FINITE_LEADS,
    ASK_INF,
    ASK_TARGET,
    ASKED_LEADS,
    ASKED_REST,
    BE_PROG,
    BE_PROG_WORDS,
    CHECK_INF,
    CHECK_PRESENT_LEADS,
    CLITIC_VERBS,
    CORE,
    FUT_AUX,
    FUT_AUX_WORDS,
    FWD_FINITE_LEADS,
    FWD_INF,
    FWD_TARGET,
    HE_DONE,
    HEARS_LEADS,
    HEARS_REST,
    HUM_ALL_BARE,
    HUM_CORE,
    HUM_CORE_BARE,
    INTENT_LEADS,
    NOT_A_CARRIERS,
    NOT_AFTER_DE,
    NOTE_LEADS,
    NOTE_TO,
    NUDGE_LEADS,
    ON_THE_WAY,
    PARTICIPLE_ALERTED,
    PARTICIPLE_FORWARDED,
    PARTICIPLE_HANDLED,
    RESULT_NOUN,
    RETORNO_VERB_BEFORE,
    SOON_LEADS,
    SOON_REST,
    SUBJ_GAP,
    SUBJECT_LEADS,
    SYNTH_FORMS,
    THEY_DONE,
    TICKET_OBJ,
    TICKET_SUBJECT_LEADS,
    WHEN_LEADS,
    WITH,
    WORD_END,
    alt,
    gap,
    ralt,
)
from .lexicon_people import CHECK_TARGET, FIELD_STAFF_LEADS
from .promise_rule_types import Branch, Rule, first_token, first_tokens, tail
from .promise_rules_named import LATE_RULES
from .promise_rules_pending import PENDING_RULES
from .promise_rules_staff import FIELD_RULES
from .promise_words import NOT_WHEN

_INTENT_TAILS = (
    # "vou verificar com a equipe", "estou checando com o financeiro".
    tail("check_with_human", rf"{CHECK_INF}{gap(6)}\s+{WITH}{CHECK_TARGET}"),
    # "vou consultar o juridico", "vou chamar um atendente", "vou avisar o gerente".
    # Only people of the business: "vou consultar a loja mais proxima" is a search, not a call.
    tail("alert_human", rf"{ALERT_INF}{gap(3)}\s+{ALERT_PREP}{HUM_CORE}"),
    # "vou encaminhar para o setor responsavel", "vou te transferir pro suporte".
    tail("forward_to_human", rf"{FWD_INF}{gap(5)}\s+{FWD_TARGET}"),
    # "vou pedir para o financeiro", "vou perguntar pro gerente".
    tail("ask_human", rf"{ASK_INF}{gap(5)}\s+{ASK_TARGET}"),
    # "vou abrir um chamado", "vou registrar uma ocorrencia".
    tail(
        "open_ticket",
        rf"(?:abrir|registrar|criar|formalizar|fazer\s+a\s+abertura\s+d[eo]){TICKET_OBJ}{WORD_END}",
    ),
)

_SUBJECT_TAILS = (
    # "um atendente vai entrar em contato", "o suporte ficou de te retornar".
    tail(
        "human_will_act",
        rf"{ADV}\s+{FUT_AUX}{gap(2)}(?:\s+(?:te|lhe|com\s+voce|com\s+vc))?\s+{ACTION_INF}{WORD_END}"
        rf"|{ADV}(?:\s+(?:te|lhe))?\s+(?:{ACTION_SYNTH}|{ACTION_PRES_CLITIC}){WORD_END}",
    ),
    # "nossa equipe ja esta analisando", "o time ja ta cuidando disso".
    tail("human_is_acting", rf"(?:\s+ja)?\s+{BE_PROG}\s+{ACTION_GER}{WORD_END}"),
    # "o suporte ja foi acionado", "a equipe esta avisada".
    tail(
        "human_was_alerted",
        rf"(?:\s+ja)?\s+{alt(ALERTED_AUX_WORDS)}\s+{PARTICIPLE_ALERTED}{WORD_END}",
    ),
)

RULES: tuple[Rule, ...] = (
    Rule(
        "intent_human_action",
        (Branch(INTENT_LEADS, rf"{gap(3)}\s+{ralt(_INTENT_TAILS)}"),),
        tails=("check_with_human", "alert_human", "forward_to_human", "ask_human", "open_ticket"),
    ),
    # "confirmo com o medico", "vejo com o pessoal".
    Rule("check_with_human", (Branch(CHECK_PRESENT_LEADS, rf"{gap(6)}\s+{WITH}{CHECK_TARGET}"),)),
    # "acionei o suporte", "ja notifiquei a equipe".
    Rule("alert_human", (Branch(ALERT_FINITE_LEADS, rf"{gap(3)}\s+{ALERT_PREP}{HUM_CORE}"),)),
    # "ja repassei para o time", "encaminhamos ao setor responsavel".
    Rule("forward_to_human", (Branch(FWD_FINITE_LEADS, rf"{gap(5)}\s+{FWD_TARGET}"),)),
    # "solicitei ao time", "fiz a solicitacao para a equipe".
    Rule(
        "ask_human",
        (
            Branch(ASK_FINITE_LEADS, rf"{gap(5)}\s+{ASK_TARGET}"),
            Branch(
                ("fiz", "fizemos"),
                rf"\s+(?:a|uma|o|um)\s+(?:solicitacao|pedido){gap(3)}\s+{ASK_TARGET}",
            ),
        ),
    ),
    # "vou te colocar em contato com um especialista".
    Rule(
        "connect_to_human",
        (
            Branch(
                ("colocar", "coloco", "conectar", "conecto"),
                rf"(?:\s+(?:te|voce|vc))?(?:\s+em\s+contato)?\s+(?:com|a|ao)\s+{HUM_CORE}",
            ),
        ),
    ),
    # A person or team as the subject of a future or ongoing action.
    Rule(
        "human_will_act",
        (
            Branch(SUBJECT_LEADS, rf"{SUBJ_GAP}{ralt(_SUBJECT_TAILS)}", before=NOT_AFTER_DE),
            # Rules 14: "o chaveiro Zé tá a caminho" (session 14).
            Branch(
                FIELD_STAFF_LEADS,
                NOT_A_CARRIERS
                + SUBJ_GAP
                + tail("staff_on_the_way", rf"(?:\s+ja)?\s+{BE_PROG}\s+{ON_THE_WAY}")
                + WORD_END,
                before=NOT_AFTER_DE,
            ),
        ),
        tails=("human_will_act", "human_is_acting", "human_was_alerted", "staff_on_the_way"),
        # Every subject tail contains an auxiliary, a synthetic future or a clitic verb.
        needs=first_tokens(
            FUT_AUX_WORDS
            + SYNTH_FORMS
            + CLITIC_VERBS
            + BE_PROG_WORDS
            + ALERTED_AUX_WORDS
            + ("entra", "entram")
        ),
    ),
    # "sua solicitacao sera analisada", "voce sera contatado".
    Rule(
        "passive_will_be_handled",
        (
            Branch(
                (
                    *("sera", "serao", "vai ser", "vao ser", "ira ser", "deve ser"),
                    *("devera ser", "esta sendo", "estao sendo"),
                ),
                rf"(?:\s+(?!automaticamente)[a-z]+mente)?\s+{PARTICIPLE_HANDLED}{WORD_END}"
                # Done by a system, not by people.
                r"(?!\s+(?:automaticamente|pelo\s+(?:sistema|app|aplicativo|site|banco)"
                r"|pela\s+(?:plataforma|operadora)))",
            ),
        ),
    ),
    # "seu caso foi encaminhado ao setor financeiro".
    Rule(
        "passive_forwarded",
        (
            Branch(
                ("foi", "foram", "esta", "estao", "ficou", "ficaram"),
                rf"\s+{PARTICIPLE_FORWARDED}{gap(3)}\s+{FWD_TARGET}",
            ),
        ),
    ),
    # "voce recebera um contato da nossa equipe", "aguarde o retorno da equipe".
    Rule(
        "customer_will_be_contacted",
        (
            Branch(
                ("recebera", "vai receber", "ira receber"),
                r"(?:\s+(?:um|uma|o|a|nosso|nossa))?\s+(?:retorno|contato|ligacao|visita)"
                + WORD_END,
            ),
            # With an article only: "tera retorno garantido" is about an investment.
            Branch(
                ("vai ter", "tera"),
                r"\s+(?:um|uma|nosso|nossa)\s+(?:retorno|contato|ligacao|visita)" + WORD_END,
            ),
            Branch(
                ("aguarde", "aguarda", "aguardem"),
                r"(?:\s+(?:o|um|nosso|o\s+nosso))?\s+(?:retorno|contato|ligacao)" + WORD_END,
            ),
        ),
    ),
    # "entraremos em contato", "retornaremos", "te dou um retorno", "te mantenho informada".
    Rule(
        "deferred_return",
        (
            Branch(("entrarei", "entraremos", "entro"), r"\s+em\s+contato"),
            Branch(
                ("vou entrar", "vamos entrar", "iremos entrar", "irei entrar"), r"\s+em\s+contato"
            ),
            Branch(("retornarei", "retornaremos"), ""),
            Branch(
                ("retorno",),
                r"\s+(?:em\s+breve|assim\s+que|o\s+quanto\s+antes|o\s+mais\s+(?:breve|rapido))",
            ),
            Branch(
                ("retorno", "retornamos"),
                r"(?!\s+d[aoe]s?(?![a-z0-9]))",
                before=RETORNO_VERB_BEFORE + r"(?<!\bida\se\s)",
            ),
            Branch(
                (
                    *("dou", "damos", "darei", "daremos", "vou dar", "vou te dar", "vamos dar"),
                    *("vamos te dar", "vou lhe dar"),
                ),
                r"\s+(?:um\s+|uma\s+)?(?:retorno|posicao|posicionamento|devolutiva|noticias"
                r"|parecer|feedback)" + WORD_END,
            ),
            Branch(
                ("mantenho", "manteremos", "deixo", "deixarei", "mantendo"),
                r"\s+(?:informad|atualizad)[oa]s?" + WORD_END,
                before=r"(?:(?<=\bte\s)|(?<=\blhe\s))",
            ),
            Branch(
                ("mantenho", "manteremos"),
                r"\s+(?:voce|vc)\s+(?:informad|atualizad)[oa]s?" + WORD_END,
            ),
            Branch(
                ("volto",),
                r"\s+a\s+(?:falar|te\s+chamar|entrar\s+em\s+contato|te\s+procurar)"
                r"|\s+(?:com|pra\s+te|para\s+te)\s+(?:uma\s+|a\s+|mais\s+)?(?:resposta|posicao"
                r"|novidades?|solucao|informac(?:ao|oes)|retorno)" + WORD_END,
            ),
        ),
    ),
    Rule(
        "when_news_arrives",
        (
            # "assim que tiver uma resposta te aviso".
            Branch(
                WHEN_LEADS,
                r"(?:\s+eu|\s+a\s+gente)?\s+(?:tiver|tivermos|receber|recebermos|obtiver"
                r"|obtivermos|houver|chegar|sair|vier)(?:\s+(?:uma|alguma|algum|um|a|o|as|os"
                rf"|mais))?\s+{RESULT_NOUN}{WORD_END}",
            ),
            # "qualquer novidade eu te aviso".
            Branch(
                ("qualquer",),
                r"\s+(?:novidade|noticia|atualizacao|retorno)\s*,?(?:\s+eu)?(?:\s+te|\s+lhe)?"
                r"\s+(?:aviso|informo|falo|chamo|comunico|retorno|mando)" + WORD_END,
            ),
        ),
    ),
    # "assim que liberarem eu te aviso", "quando o time aprovar, te envio".
    Rule(
        "when_they_act",
        (
            Branch(
                WHEN_LEADS,
                rf"(?:\s+(?:eles|elas))?(?:\s+(?:me|te))?\s+{THEY_DONE}{WORD_END}"
                rf"|\s+{HUM_CORE}{gap(3)}(?:\s+(?:me|te))?\s+{HE_DONE}{WORD_END}",
            ),
        ),
    ),
    # "estou aguardando o retorno do financeiro".
    Rule(
        "awaiting_human",
        (
            Branch(
                ("aguardando", "esperando"),
                r"(?:\s+(?:o|a|um|uma))?\s+(?:retorno|resposta|posicao|parecer|liberacao"
                rf"|aprovacao|confirmacao)\s+(?:d[aoe]s?\s+{HUM_ALL_BARE}|deles{WORD_END})",
            ),
        ),
    ),
    # "registrei uma ocorrencia", "abri o ticket", "seu chamado foi aberto".
    Rule(
        "open_ticket",
        (
            Branch(
                (
                    *("abri", "abrimos", "abrindo", "abro", "registrei", "registramos"),
                    *("registrando", "criei", "criamos", "formalizei", "fiz a abertura"),
                    "fizemos a abertura",
                ),
                rf"(?:\s+d[eo])?{TICKET_OBJ}{WORD_END}",
            ),
            Branch(
                TICKET_SUBJECT_LEADS,
                rf"{gap(2)}(?:\s+(?:foi|ja\s+foi|esta|sera|vai\s+ser))?\s+(?:abert|registrad"
                rf"|criad)[oa]s?{WORD_END}",
                before=NOT_WHEN,
            ),
        ),
    ),
    # "vamos providenciar", "providenciaremos" (plural: the company, not this AI).
    Rule(
        "we_will_arrange",
        (
            Branch(
                ("vamos", "iremos", "gente vai", "vamos estar", "estamos", "nossa equipe vai"),
                r"\s+providenci(?:ar|ando)" + WORD_END,
            ),
            Branch(("providenciaremos",), ""),
            Branch(("sera providenciado", "sera providenciada", "serao providenciados"), ""),
        ),
    ),
    # Round 3. "pedi que liberem o seu acesso", "solicitei que o tecnico ligue": a request
    # to others still pending (a third-person verb, or a person of the business).
    Rule("asked_others", (Branch(ASKED_LEADS, ASKED_REST),)),
    # "deixei anotado para o tecnico ligar": a note left for a person who has still to act.
    Rule("note_for_human", (Branch(NOTE_LEADS, rf"{gap(6)}\s+{NOTE_TO}{HUM_ALL_BARE}"),)),
    # Round 7. "seu caso subiu para o nivel 2 do suporte", "escalei para a segunda linha":
    # an escalation to a support level (or to a team) that has still to act.
    Rule(
        "escalated_to_level",
        (
            Branch(
                ("subiu", "subiram", "subimos", "escalei", "escalamos", "escalou"),
                r"\s+(?:para|pra|pro|ao)\s+(?:o\s+|a\s+)?(?:(?:nivel|n)\s*[23]"
                rf"|(?:segund|terceir)[oa]\s+(?:nivel|linha|instancia)){WORD_END}"
                rf"|\s+{FWD_TARGET}",
            ),
        ),
    ),
    *PENDING_RULES,
    *FIELD_RULES,
    # "Vao te chamar por aqui", "Devem entrar em contato ainda hoje": a subjectless plural at
    # the start of a sentence is the business's people ("os Correios vao..." has a subject).
    Rule(
        "they_will_act",
        (
            Branch(
                ("vao", "devem", "irao"),
                # Not a question ("Vao te ligar ou voce prefere...?").
                rf"(?:\s+(?:te|lhe|com\s+voce))?\s+{ACTION_INF}{WORD_END}(?![^.!;\n]*\?)",
                before=r"(?:^|(?<=[.!?;:\n])|(?<=[.!?;:\n]\s)|(?<=[.!?;:\n]\s\s))",
            ),
        ),
    ),
    # "o tecnico fica encarregado de trazer a peca", "a equipe ficou encarregada de refazer".
    Rule(
        "human_in_charge",
        (
            Branch(
                ("fica", "ficou", "ficam", "ficaram", "esta", "estao"),
                r"\s+encarregad[oa]s?\s+de\s+[a-z]+(?:ar|er|ir)" + WORD_END,
                # Not the customer, nor this AI ("voce fica encarregado de enviar...").
                before=r"(?<!\bvoce\s)(?<!\bvc\s)(?<!\beu\s)",
            ),
        ),
    ),
    # "coloquei o seu pedido na fila do suporte", "voce esta na fila do atendimento humano".
    Rule(
        "queued_with_human",
        (
            Branch(
                ("na fila",),
                rf"(?:\s+de\s+(?:espera|atendimento|prioridade))?\s+d[aoe]s?\s+"
                rf"(?:(?:nosso|nossa)\s+)?{CORE}{WORD_END}",
            ),
        ),
    ),
    # "pode aguardar o contato da Silvia", "pode esperar a ligacao do tecnico".
    Rule(
        "customer_may_await_human",
        (
            Branch(
                ("pode aguardar", "pode esperar", "podem aguardar", "podem esperar"),
                r"(?:\s+(?:o|a|um|uma|nosso|nossa|o\s+nosso|a\s+nossa))?\s+(?:retorno|contato"
                r"|ligacao|visita|resposta|chamado)\s+d[aoe]s?\s+(?!sistema|app|aplicativo|site"
                r"|banco|correios|transportadora)[a-z]+" + WORD_END,
            ),
        ),
    ),
    # "vou dar um toque no tecnico", "dei um alo pro financeiro".
    Rule("nudge_human", (Branch(NUDGE_LEADS, rf"{gap(2)}\s+{HUM_CORE_BARE}"),)),
    # Present as future with a time: "semana que vem o tecnico instala".
    Rule("human_acts_soon", (Branch(SOON_LEADS, SOON_REST),)),
    # "voce recebe a visita do tecnico", "voce vai receber a resposta do juridico".
    Rule("customer_hears_from_human", (Branch(HEARS_LEADS, HEARS_REST),)),
    *LATE_RULES,
)


# Reported when the learned stage (``promise_learned``) or the model check found it.
LEARNED_RULE_ID = "learned"
MODEL_RULE_ID = "model_check"

# Every id the detector can report, in a stable order: the rules', then the later stages'.
RULE_IDS: tuple[str, ...] = (
    *dict.fromkeys(rule_id for rule in RULES for rule_id in (rule.tails or (rule.rule_id,))),
    LEARNED_RULE_ID,
    MODEL_RULE_ID,
)

# One compiled pattern per rule, in rule order.
RULE_PATTERNS: tuple[tuple[Rule, re.Pattern[str]], ...] = tuple(
    (rule, re.compile(ralt([branch.regex() for branch in rule.branches]))) for rule in RULES
)

# The first token of every lead: no rule can match where none of these words stands.
ANCHORS: frozenset[str] = frozenset(
    first_token(lead) for rule in RULES for branch in rule.branches for lead in branch.leads
)


def _patterns_by_anchor() -> dict[str, tuple[tuple[Rule, re.Pattern[str]], ...]]:
    by_anchor: dict[str, list[tuple[Rule, re.Pattern[str]]]] = {}
    for rule, pattern in RULE_PATTERNS:
        anchors = {first_token(lead) for branch in rule.branches for lead in branch.leads}
        for anchor in anchors:
            by_anchor.setdefault(anchor, []).append((rule, pattern))
    return {anchor: tuple(entries) for anchor, entries in by_anchor.items()}


# Which rules can start at a given anchor word, in rule order.
RULES_BY_ANCHOR: dict[str, tuple[tuple[Rule, re.Pattern[str]], ...]] = _patterns_by_anchor()
