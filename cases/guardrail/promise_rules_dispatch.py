"""Rules of the promise detector for the business's people and vehicles sent to the customer:
a delivery on its own vehicle ("o sofá vai no nosso caminhão na quinta", "nossa van passa aí
amanhã"), which the policy (``promise``, round 15) counts a promise since one of its drivers
has still to act, and a person of the business who comes or acts at a time ahead, in the
present ("o técnico chega às 14h na quinta", "os montadores vêm amanhã"). An outside
carrier's vehicle and an order that "sai hoje" with no person or vehicle named stay order
status; a habit ("toda terça", "sempre") is a fact about the business. Spliced into
``promise_rules.RULES`` after the pending rules."""

from __future__ import annotations

import re

from .lexicon import (
    ACTION_INF,
    BE_PROG,
    FUT_AUX,
    NAMES,
    NOT_A_CARRIERS,
    NOT_AFTER_DE,
    ON_THE_WAY,
    OUTSIDE_COURIERS,
    SUBJ_GAP,
    SUBJECT_LEADS,
    WORD_END,
    alt,
)
from .lexicon_people import FIELD_STAFF_LEADS, PEOPLE_EXTRA, TRADES_ALSO_THINGS, TRADES_SENT
from .promise_names import NAME_MARK
from .promise_rule_types import Branch, Rule
from .promise_words import not_after

# The business's vehicles, folded. "carro" only when it is not the house's "carro-chefe".
FLEET_WORDS: tuple[str, ...] = (
    *("caminhao", "caminhaozinho", "caminhonete", "carreta", "carro", "furgao", "kombi"),
    *("moto", "picape", "utilitario", "van", "vanzinha", "fiorino", "veiculo", "guincho"),
    # Round 30: "o nosso reboque leva sua lancha pra rampa amanhã às 7h".
    *("ambulancia", "reboque", "carretinha", "barco"),
)
_FLEET = rf"{alt(FLEET_WORDS)}{WORD_END}(?![\s-]+chefe)"
_CARS = ("carro", "moto", "veiculo", "guincho", "ambulancia")
_OURS = r"(?:nosso|nossa|proxim[oa]|nosso\s+proximo|nossa\s+proxima)"

# Presents of coming to the customer or acting for them, singular and plural; never
# "atende", "abre", "funciona" (hours and facts), nor "entrega" (most often the noun).
COMES = alt(
    (
        *("chega", "chegam", "vem", "vem ai", "vai ai", "vao ai", "passa", "passam", "passa ai"),
        *("leva", "levam", "traz", "trazem", "busca", "buscam", "entregam"),
        *("instala", "instalam", "monta", "montam", "devolve", "devolvem", "faz", "fazem"),
        *("troca", "trocam", "conserta", "consertam", "visita", "visitam", "comeca", "comecam"),
        *("liga", "ligam", "te liga", "te ligam", "retorna", "retornam", "manda", "mandam"),
        *("envia", "enviam", "resolve", "resolvem", "recolhe", "recolhem", "retira", "retiram"),
        *("reembolsa", "reembolsam", "agenda", "agendam", "analisa", "analisam", "confirma"),
        *("confirmam", "corrige", "corrigem", "prepara", "preparam", "separa", "separam"),
        *("emite", "emitem", "providencia", "providenciam", "finaliza", "finalizam"),
        *("conclui", "concluem", "avalia", "avaliam", "verifica", "verificam", "revisa"),
        *("revisam", "ajusta", "ajustam", "libera", "liberam", "responde", "respondem"),
        *("refaz", "refazem", "reenvia", "reenviam", "encaminha", "encaminham"),
        *("volta", "voltam", "vem buscar", "vem trazer", "encontra", "encontram"),
        # "o motoqueiro sai com ele em uns 30 minutinhos" (round 19).
        *("sai com", "saem com", "pega", "pegam"),
        # Round 31: "dois carregadores nossos te esperam na doca amanhã às 9h".
        *("te espera", "te esperam", "lhe espera", "lhe esperam", "te aguarda", "te aguardam"),
    )
)
# The people the learned stage reads as such, Portuguese ones (the verbs are).
_MORE_STAFF = (*(word for word in PEOPLE_EXTRA if word not in SUBJECT_LEADS), *TRADES_SENT)
# A time ahead that names a day: "amanhã", "na quinta", "no sábado", "dia 15", "semana que
# vem", "até domingo", "hoje à tarde", "daqui a 20 min".
_WEEKDAY = r"(?:segunda|terca|quarta|quinta|sexta)(?:-?feira)?"
_DAY_AHEAD = (
    r"(?:amanha|depois\s+de\s+amanha|ainda\s+hoje|hoje\s+(?:a\s+tarde|a\s+noite|mais\s+tarde)"
    rf"|(?:na|nesta|nessa|proxima|ate)\s+{_WEEKDAY}|(?:no|neste|nesse|proximo|ate)\s+"
    r"(?:sabado|domingo)|dia\s+[0-9]{1,2}|semana\s+que\s+vem|daqui\s+a"
    # "em até 48 horas úteis" is a service level, not this customer's visit.
    r"|em\s+(?:uns\s+|umas\s+|cerca\s+de\s+)?[0-9]+\s*(?:min|minutos|minutinhos|h|horas)"
    r"(?!\s+uteis)"
    r"|n[ao]\s+proxim[ao]\s+(?:visita|revisao|fatura|semana|mes|entrega|segunda|terca|quarta"
    r"|quinta|sexta|sabado|domingo)|ate\s+(?:o\s+)?fi(?:m|nal)\s+do\s+dia|no\s+dia\s+seguinte"
    # Round 20: "o Caio, nosso editor, faz esses ajustes esta semana".
    r"|(?:ainda\s+)?(?:esta|nesta|essa|nessa)\s+semana|ate\s+o\s+fi(?:m|nal)\s+da\s+semana"
    # A bare weekday with its part of the day or clock: "passa sexta às 10h", "quarta de manhã".
    rf"|(?:{_WEEKDAY}|sabado|domingo)\s+(?:de\s+manha|a\s+tarde|a\s+noite|cedo"
    r"|as\s+[0-9]{1,2}(?:\s*(?:h|hs|horas?)(?:[0-9]{2})?|:[0-9]{2}))"
    r")"
)

# At the customer's place ("passa aí", "chega no seu prédio"), a clock time is this
# customer's appointment, not the business's hours: "o entregador passa aí entre 14h e 16h".
_AT_YOURS = (
    r"(?:ai|ate\s+ai|ate\s+voce|ate\s+vc|na\s+sua\s+casa|em\s+casa|no\s+seu\s+(?:endereco|predio"
    r"|apartamento|ap|condominio|trabalho)|na\s+sua\s+(?:portaria|loja|empresa|obra))"
)
_CLOCK = r"(?:[0-9]{1,2}\s*(?:h|hs|horas?)(?:[0-9]{2})?|[0-9]{1,2}:[0-9]{2})"


def _later_in_clause(pattern: str) -> str:
    """``pattern`` as a whole phrase somewhere further in the same clause."""
    return rf"[^.!?;\n]*?(?<![a-z0-9]){pattern}(?![a-z0-9])"


# At the customer's place, "em até 40 minutos" is the customer's wait (not a service level).
_CLOCK_AT = (
    r"(?:entre|as|a\s+partir\s+das|ate\s+as|pelas|la\s+pelas|por\s+volta\s+das|perto\s+das)"
    rf"\s+{_CLOCK}"
)
_CLOCK_AHEAD = rf"(?:{_CLOCK_AT}|em\s+ate\s+[0-9]+\s*(?:min|minutos|minutinhos))"
# A vehicle's run named by its time is the business's own: "no carro de entregas das 13h".
_RUN = (
    r"(?:\s+refrigerad[oa])?\s+(?:de\s+entregas?(?:\s+d[aoe]s?\s+[a-z0-9]+)?|de\s+amanha"
    rf"|de\s+hoje|da\s+(?:manha|tarde|noite)|das\s+{_CLOCK})"
)

# The trades and people of the business that ``promise_rules``' subjects leave out (its
# "human_will_act" reads teams and back-office roles only).
TRADES = tuple(
    dict.fromkeys(word for word in (*FIELD_STAFF_LEADS, *_MORE_STAFF) if word not in SUBJECT_LEADS)
)
TRADE_ACTS = alt(
    (
        *("chegar", "passar", "passar ai", "vir", "levar", "trazer", "buscar", "entregar"),
        *("montar", "desmontar", "medir", "pintar", "refazer", "terminar", "finalizar"),
    )
)
_EN_CARRIERS = (*OUTSIDE_COURIERS, "fedex", "ups", "dhl", "usps", "amazon", "lyft", "doordash")
NOT_A_CONDITION = (
    NOT_AFTER_DE + not_after(("se", "caso"), ("o", "a", "os", "as")) + r"(?<!\bse\s)(?<!\bcaso\s)"
)

# A standing range of days or hours in the rest of the clause: the business's opening hours.
_NOT_OPENING_HOURS = (
    rf"(?![^.!?;\n]*?(?<![a-z0-9])(?:de\s+{_WEEKDAY}\s+a|das\s+{_CLOCK}\s+(?:as|a)\s+[0-9]))"
)

# The people of the business as subjects of these rules.
PEOPLE = (*SUBJECT_LEADS, *FIELD_STAFF_LEADS, *_MORE_STAFF)
# A name in apposition after the subject: "o motorista, Seu Nilton, chega aí em 25 minutos".
_NAMED = r"(?:\s*,\s*(?:(?:o|a|seu|dona|sr|sra)\.?\s+)?[a-z]+(?:\s+[a-z]+)?\s*,)?"
# "já saiu da base e chega...": the departure before the arrival.
_LEFT_AND = (
    r"(?:\s+ja)?(?:\s+(?:saiu|sairam|partiu)(?:\s+[a-z]+){0,5}?\s+e"
    # "o chaveiro já tá indo, chega aí em 15 minutos", "já está saindo com o seu pedido, chega".
    r"|\s+(?:ta|esta|tao|estao)\s+(?:indo(?:\s+ai)?|saindo(?:\s+[a-z]+){0,6}?)\s*(?:,|e))?"
)
# Not where from ("volta de férias"), nor a periphrasis of resuming ("volta a abrir").
NOT_FROM = r"(?!\s+(?:a\s+[a-z]+(?:ar|er|ir)|de|do|da|dos|das)(?![a-z0-9]))"
# In the same clause: a time ahead that names a day, or the customer's place and a clock time.
_WHEN = (
    rf"(?={_later_in_clause(_DAY_AHEAD)}"
    + rf"|(?:\s+[a-z0-9]+){{0,3}}?\s+{_AT_YOURS}{WORD_END}{_later_in_clause(_CLOCK_AHEAD)})"
)
# A vehicle that is someone else's: a carrier's, an app's, the city's, a partner's (round 28).
_THEIRS = (
    *OUTSIDE_COURIERS,
    *("prefeitura", "seguradora", "lixo", "coleta", "excursao", "linha", "onibus"),
    *("loja parceir", "empresa parceir"),
)
_NOT_THEIR_VEHICLE = rf"(?!(?:\s+[a-z]+)?\s+d[aoe]s?\s+{alt(_THEIRS)})"
_SENT = r"(?:enviad|deslocad|designad|mandad|encaminhad)[oa]s?"
# "Mudança agendada para 22/03! Nossa equipe chega às 7h...": an appointment confirmed for a
# day ahead, then, in the next sentence, a person of the business coming to it.
_BOOKED_FOR = (
    rf"\s+(?:para|pra|pro)\s+(?:{_DAY_AHEAD}|{_WEEKDAY}|sabado|domingo|[0-9]{{1,2}}/[0-9]{{1,2}})"
    r"(?![a-z0-9])[^.!?\n]*[.!?]+[^a-z0-9\n]*(?:(?:nosso|nossa|o|a|os|as)\s+)?"
    + alt(PEOPLE)
    + WORD_END
    + NOT_A_CARRIERS
    + SUBJ_GAP
    + rf"\s+(?:te\s+|lhe\s+)?{COMES}{WORD_END}{NOT_FROM}"
)

# What the business itself does when it comes: "buscamos", "vamos passar", "a gente leva".
_WE_COME = (
    *("passamos", "buscamos", "levamos", "chegamos", "trazemos", "entregamos", "instalamos"),
    *("montamos", "devolvemos", "recolhemos", "retiramos", "vamos ai", "passamos ai"),
    # Round 19: the business acting for the customer on a day ahead ("a gente resolve isso
    # até sexta", "te ligamos amanhã"). Not "enviamos"/"mandamos": with a carrier that is
    # shipping status ("enviamos amanhã pelos Correios").
    *("resolvemos", "analisamos", "verificamos", "conferimos", "corrigimos", "ajustamos"),
    *("liberamos", "ligamos", "retornamos", "trocamos", "consertamos", "refazemos"),
)
_WE_GO = (
    *("passar", "buscar", "levar", "chegar", "trazer", "entregar", "instalar", "montar"),
    *("devolver", "recolher", "retirar", "ir ai", "passar ai"),
)
_WE_COME_3 = (
    *("passa", "busca", "leva", "chega", "traz", "entrega", "instala", "monta", "devolve"),
    *("recolhe", "retira", "vai ai", "passa ai", "resolve", "analisa", "verifica", "confere"),
    *("corrige", "ajusta", "libera", "liga", "te liga", "retorna", "troca", "conserta", "refaz"),
)
# A question asks ("Passamos aí amanhã às 9h?"): the sentence must not end on one, unless a
# closing tag asks nothing ("Passamos aí amanhã às 9h, tudo bem?" commits, as the policy's
# "vou encaminhar para a equipe, tudo bem?"; round 31: "tá bom?", "beleza?", "fechado?").
_NOT_ASKED = (
    r"(?![^.!?\n]*(?<!tudo\sbem)(?<!pode\sser)(?<!combinado)(?<!certo)(?<![\s,]ok)"
    r"(?<![\s,]ta)(?<!ta\sbom)(?<!beleza)(?<!fechado)\s*\?)"
)
# After "se preferir," / "caso queira": an offer that leaves the choice to the customer.
_NOT_AN_OFFER = "".join(
    rf"(?<!\b{word}{sep})"
    for word in ("preferir", "quiser", "prefira", "queira", "precisar")
    for sep in (r"\s", r",\s")
)

# Coming or acting at a clock time ahead in the same clause (``VISIT_AT_A_CLOCK`` and the
# business's own "nosso X" branch of ``staff_comes_at_a_time``).
_AT_A_CLOCK = (
    rf"\s+(?:te\s+|lhe\s+)?{COMES}{WORD_END}{NOT_FROM}(?={_later_in_clause(_CLOCK_AHEAD)})"
)


DISPATCH_RULES: tuple[Rule, ...] = (
    Rule(
        "own_vehicle_delivery",
        (
            # "vai no nosso caminhão", "sai amanhã cedo na próxima moto", "entregamos com o
            # nosso utilitário", "sai da sua casa na terça de manhã no nosso caminhão" (round
            # 31: the place and the day may stand between): the thing travels on the
            # business's vehicle.
            Branch(
                (
                    *("vai", "vao", "sai", "saem", "segue", "seguem", "desce", "descem"),
                    # Not "entrega", most often the noun ("a entrega no nosso caminhão é...").
                    *("leva", "levam", "levamos", "entregam", "entregamos"),
                    *("embarca", "embarcam", "mandamos", "enviamos", "despachamos"),
                ),
                r"(?:\s+[a-z0-9]+){0,7}?\s+(?:n[oa]|pel[oa]|com\s+[oa])\s+"
                # "vão na próxima viagem do nosso caminhão".
                + r"(?:proxima\s+(?:viagem|saida|rota|entrega)\s+d[oa]\s+)?"
                + rf"(?:{_OURS}\s+{_FLEET}|{_FLEET}{_RUN}{WORD_END})",
            ),
            # "O sofá vai no caminhão baú na quarta": a delivery vehicle (not a car, which is
            # as often the customer's), no one else's, on a day ahead.
            Branch(
                ("vai", "vao", "sai", "saem", "segue", "seguem"),
                r"(?:\s+[a-z0-9]+){0,3}?\s+n[oa]\s+"
                + alt(tuple(word for word in FLEET_WORDS if word not in _CARS))
                + rf"{WORD_END}{_NOT_THEIR_VEHICLE}(?={_later_in_clause(_DAY_AHEAD)})",
            ),
            # A bus company's own bus (round 23): "sua mala vai no próximo ônibus da nossa
            # linha". A bus is most often the city's or the customer's ride, so only with
            # "nosso"/"da nossa" and never with the customer as the traveller. So a vehicle
            # named by whose it is (round 27): "sai sábado no carro da loja", not a question.
            Branch(
                ("vai", "vao", "sai", "saem", "segue", "seguem", "embarca", "embarcam"),
                r"(?:\s+[a-z0-9]+){0,3}?\s+(?:n[oa]|pel[oa]|num|em\s+um)\s+"
                r"(?:nosso\s+(?:proximo\s+)?onibus|(?:proximo\s+)?onibus\s+(?:da\s+nossa|nosso)"
                + rf"|{_FLEET}\s+da\s+(?:loja|empresa){WORD_END}"
                + rf"(?!\s+(?:parceir|d[aoe]s?\s)){_NOT_ASKED})"
                + WORD_END,
                before=r"(?<!voce\s)(?<!senhor\s)(?<!senhora\s)(?<!voces\s)",
            ),
            # "nossa van passa aí amanhã", "o nosso caminhão chega às 7h": the vehicle comes.
            Branch(
                ("nosso", "nossa"),
                r"\s+"
                + _FLEET
                + r"(?:\s+[a-z]+){0,2}?\s+"
                + r"(?:passa|passam|chega|chegam|leva|levam|entrega|vai|sai|busca|recolhe"
                # "nosso caminhão deixa ela aí amanhã" (not "deixa de passar").
                r"|retira|volta|descarrega|deixa(?!\s+de\s))" + WORD_END,
            ),
        ),
    ),
    # "o técnico chega às 14h na quinta", "a equipe de montagem vem amanhã cedo", "os
    # carregadores chegam dia 15": a person of the business, a present of coming or acting
    # and, in the same clause, a time ahead that names a day (a clock time alone is too
    # often a schedule: "a equipe chega às 7h").
    Rule(
        "staff_comes_at_a_time",
        (
            Branch(
                PEOPLE,
                NOT_A_CARRIERS
                + _NAMED
                + SUBJ_GAP
                + _LEFT_AND
                + rf"\s+(?:{COMES}{WORD_END}{NOT_FROM}{_WHEN}"
                # For you, at a clock time: "o corretor te busca no metrô às 10h".
                + rf"|(?:te|lhe)\s+{COMES}{WORD_END}(?={_later_in_clause(_CLOCK_AHEAD)}))",
                # Not a complement ("o telefone do técnico"), nor a condition ("se o técnico
                # vem amanhã, ...").
                before=NOT_A_CONDITION,
            ),
            # Round 26: a word as often a thing as a person ("o coletor", "o guia", "a
            # monitora") is someone when it does what only a person does, at a time ahead:
            # "o coletor passa amanhã às 8h" (not "o coletor chega amanhã", a kit).
            Branch(
                TRADES_ALSO_THINGS,
                r"\s+(?:passa|passam|passa\s+ai|vem\s+ai|vai\s+ai|visita|(?:te|lhe)\s+busca)"
                + rf"{WORD_END}{NOT_FROM}{_WHEN}",
                before=NOT_A_CONDITION,
            ),
            # Rules 22. "o caminhão baú chega aí por volta das 8h", "o guincho já saiu da base
            # e chega em uns 40 min", "o caminhão tá a caminho" (round 28): a vehicle sent to
            # the customer carries a driver of the business (not a carrier's, an app's, the city's).
            Branch(
                FLEET_WORDS,
                _NOT_THEIR_VEHICLE
                + SUBJ_GAP
                + _LEFT_AND
                + r"\s+(?:(?:chega|passa|vem|vai\s+ai|encosta|estaciona)"
                + rf"{WORD_END}{NOT_FROM}{_WHEN}|{BE_PROG}\s+{ON_THE_WAY}{WORD_END})",
                before=NOT_A_CONDITION,
            ),
            # "O Seu Armando, nosso afinador, passa aí na terça": whoever the apposition makes
            # one of the business's own, at a time ahead (round 18).
            Branch(
                ("nosso", "nossa"),
                r"(?:\s+[a-z]+){1,3}\s*,(?:\s+ja)?\s+(?:te\s+|lhe\s+)?"
                + rf"(?:{COMES}{WORD_END}{NOT_FROM}{_WHEN}"
                # "O Seu Valdir, nosso medidor, vai passar na sua obra na quinta".
                + rf"|{FUT_AUX}(?:\s+(?:te|lhe))?\s+(?:{ACTION_INF}|{TRADE_ACTS}){WORD_END})",
                before=r"(?<=,\s)",
            ),
            # "um técnico será enviado ao local", "os montadores vão ser deslocados amanhã".
            Branch(
                PEOPLE,
                NOT_A_CARRIERS
                + SUBJ_GAP
                + rf"\s+(?:sera|serao|vai\s+ser|vao\s+ser|ira\s+ser|irao\s+ser)\s+{_SENT}"
                + WORD_END,
                before=NOT_A_CONDITION,
            ),
            # Round 20: "uma equipe técnica já foi despachada para o seu endereço": sent, so
            # on its way to the customer.
            Branch(
                PEOPLE,
                NOT_A_CARRIERS
                + SUBJ_GAP
                + r"(?:\s+ja)?\s+(?:foi|foram|esta|estao)(?:\s+ja)?(?:\s+sendo)?\s+"
                + r"(?:enviad|deslocad|despachad|designad|mandad)[oa]s?\s+(?:para|pra|ate|ao)\s+"
                + rf"(?:o\s+|a\s+)?(?:{_AT_YOURS}|seu\s+endereco|sua\s+casa|local){WORD_END}",
                before=NOT_A_CONDITION,
            ),
            # "Nosso entregador leva direto pra capela às 15h": the business's own person or
            # vehicle at a clock time (round 19; the check-only cue of rules 35 read "nosso X"
            # + a clock on 23 labelled texts, every one a promise).
            Branch(
                ("nosso", "nossa"),
                rf"\s+{alt((*PEOPLE, *FLEET_WORDS))}{WORD_END}"
                # "O nosso motorista, o Paulão, pega a senhora às 5h40".
                + rf"{_NAMED}(?:\s+[a-z]+){{0,2}}?"
                + rf"\s+(?:te\s+|lhe\s+)?{COMES}{WORD_END}{NOT_FROM}"
                # A clock time, not "em até 30 minutos" alone (a service level), nor opening
                # hours ("nosso suporte responde de segunda a sexta, das 9h às 18h"; round 26).
                + _NOT_OPENING_HOURS
                + rf"(?={_later_in_clause(_CLOCK_AT)})",
                before=NOT_A_CONDITION,
            ),
            # "ele retorna sua ligação amanhã", "ela te liga": only a person calls back.
            Branch(
                ("ele", "ela"),
                r"(?:\s+ja)?\s+(?:(?:te|lhe)\s+(?:liga|retorna|chama|responde|procura)"
                r"|retorna\s+(?:a\s+)?(?:sua|tua)\s+(?:ligacao|chamada|mensagem|contato))"
                + WORD_END,
                before=NOT_A_CONDITION,
            ),
            # "Ele vai aí amanhã às 8h": only a person goes to the customer's place (an order
            # "chega aí"; round 19).
            Branch(
                ("ele", "ela"),
                rf"\s+(?:vai|vem|passa)\s+ai{WORD_END}{_WHEN}",
                before=NOT_A_CONDITION,
            ),
            Branch(
                (
                    *("agendado", "agendada", "marcado", "marcada", "confirmado", "confirmada"),
                    *("reservado", "reservada", "combinado", "combinada", "ficou", "ficaram"),
                    "tudo certo",
                ),
                _BOOKED_FOR,
            ),
            # "o técnico Juninho is on the way": the English of ``staff_on_the_way``; English
            # names a carrier before its driver ("the FedEx driver", round 30).
            Branch(
                PEOPLE,
                NOT_A_CARRIERS + SUBJ_GAP + r"\s+(?:is|are)\s+on\s+(?:the|his|her|their)\s+way",
                before=NOT_A_CONDITION + "".join(rf"(?<!{c}\s)" for c in _EN_CARRIERS),
            ),
        ),
    ),
    # "Amanhã buscamos as roupas aí", "vamos passar aí na quinta às 9h", "a gente leva o sofá
    # sábado de manhã": the business itself (the plural is the company, as in "vamos
    # providenciar") comes to the customer at a time ahead; not an offer ("se preferir,
    # buscamos aí amanhã").
    Rule(
        "we_come_at_a_time",
        (
            Branch(
                (
                    *(f"{we} {verb}" for we in ("vamos", "iremos", "gente vai") for verb in _WE_GO),
                    *(f"gente {verb}" for verb in _WE_COME_3),
                    *_WE_COME,
                ),
                rf"(?:\s+(?:te|lhe))?{WORD_END}{NOT_FROM}{_WHEN}{_NOT_ASKED}",
                before=NOT_A_CONDITION + _NOT_AN_OFFER,
            ),
            # The day first: "Amanhã cedo buscamos as roupas aí".
            Branch(
                ("amanha", "depois de amanha"),
                r"(?:\s+(?:cedo|de\s+manha|a\s+tarde|a\s+noite))?\s*,?\s+"
                + rf"(?:{alt(_WE_COME)}|a\s+gente\s+{alt(_WE_COME_3)})"
                + WORD_END
                + _NOT_ASKED,
            ),
        ),
    ),
)


# Not a rule: what sends a message the learned stage cleared to the model check anyway. A
# person or vehicle of the business (a name the learned stage marked, "nosso Táxi Dog")
# coming at a clock time ("busca a Mel às 9h") is as often this customer's appointment as the
# business's schedule ("a equipe chega às 7h"), so no rule can say which; the model reads it.
# Read by ``promise_scan.visit_at_a_clock_time`` (which knows the sentence's habits).
VISIT_AT_A_CLOCK = re.compile(
    Branch(
        (*PEOPLE, *FLEET_WORDS, *NAMES, NAME_MARK),
        NOT_A_CARRIERS + _NOT_THEIR_VEHICLE + SUBJ_GAP + _LEFT_AND + _AT_A_CLOCK,
        before=NOT_A_CONDITION,
    ).regex()
    + "|"
    + Branch(
        ("nosso", "nossa"), r"(?:\s+[a-z]+){1,3}?" + _AT_A_CLOCK, before=NOT_A_CONDITION
    ).regex()
    # The cleft: "Quem leva é o Seu Dito, no caminhão-pipa, por volta das 14h" (round 19).
    + "|"
    + Branch(
        ("quem",),
        rf"\s+{COMES}\s+(?:e|sera|vai\s+ser)\s+(?:o|a)\s+"
        + rf"{alt((*PEOPLE, *NAMES, NAME_MARK, 'seu', 'dona'))}{WORD_END}"
        + rf"(?={_later_in_clause(_CLOCK_AHEAD)})",
    ).regex()
)
