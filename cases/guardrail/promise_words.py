"""Word lists of the learned promise stage's classes (``promise_features``): folded words,
Portuguese and English, each list one class of the sentence shape."""

from __future__ import annotations

import re

# Instructions to the customer ("ligue para a central que eles..."): who acts is the customer.
IMPERATIVES = (
    *("ligue", "liga", "fale", "procure", "acesse", "peca", "pergunte", "mande", "envie"),
    *("va", "passe", "leve", "call", "go", "ask", "contact", "visit", "email", "text"),
    # Advice is an instruction too: "recomendo ligar para o consultor" — the customer calls.
    *("recomendo", "recomendamos", "sugiro", "sugerimos", "aconselho", "aconselhamos"),
    *("contate", "solicite", "compareca", "dirija", "recommend", "suggest", "advise"),
)
# Feelings about a compliment ("a equipe vai adorar"), not actions for the customer.
EMOTIONS = (
    *("adorar", "amar", "gostar", "feliz", "felizes", "contente", "contentes", "orgulhosa"),
    *("orgulhoso", "love", "thrilled", "happy", "glad", "delighted", "pleased"),
)
DAYS = (
    *("segunda", "terca", "quarta", "quinta", "sexta", "sabado", "domingo", "semana"),
    *("cedo", "manha", "noite", "tomorrow", "today", "tonight", "monday", "tuesday"),
    *("wednesday", "thursday", "friday", "saturday", "sunday", "week", "morning"),
    *("afternoon", "evening", "shortly"),
)

# Irregular past forms the endings miss ("o técnico esteve aí", "ela fez a troca"). Not "pôs":
# folded it is "pós" ("o time de pós-venda vai...", "limpeza pós-obra"), far more common (f14).
IRREGULAR_PAST = (
    *("esteve", "estiveram", "teve", "tiveram", "fez", "fizeram", "disse", "trouxe", "veio"),
    *("vieram", "deu", "deram", "puseram", "soube", "quis", "viu", "viram"),
)
# What someone habitually does is a fact about them, not a promise ("o time costuma ligar na
# véspera", "a gente sempre confere"): one class, so every habit shares the frame.
HABITUAL_WORDS = (
    *("costuma", "costumam", "costumamos", "costumo", "geralmente", "normalmente", "sempre"),
    *("usualmente", "frequentemente", "todo", "toda", "todos", "todas", "cada"),
    *("usually", "always", "often", "normally", "generally", "typically", "every", "each"),
    *("funciona", "funcionam", "procedimento", "padrao", "regra", "politica", "works"),
)

# Common nouns that end like a synthetic future ("ligará", "receberá", "enviará").
NOT_FUTURE = (
    *("feira", "vespera", "espera", "primavera", "esfera", "atmosfera", "cera", "fera"),
    *("cara", "clara", "vara", "camara", "mascara", "tiara", "mentira", "tira", "mira"),
    *("camera", "opera", "severa", "sincera", "mera", "cratera", "safira"),
)

# Common nouns that end like a past of an -er verb ("recebeu", "resolveu"): "vai trazer o
# pneu" has no past in it (f13).
NOT_PAST = (
    *("pneu", "museu", "chapeu", "ceu", "trofeu", "veu", "reu", "europeu", "liceu", "judeu"),
    *("ateu", "coliseu", "breu", "plebeu", "pigmeu", "hebreu", "mausoleu", "ilheu", "apogeu"),
    *("jubileu", "fogareu", "escarceu", "camafeu"),
)

# Words whose ending gives them a verb's class they do not have (f15): "também", "além",
# "ordem", "modem", "item" are no plural present ("-em"); "próximos", "últimos", "ótimos" no
# first-person plural ("-imos"); "entendo", "compreendo" (I understand) no gerund ("-endo");
# the English pronouns and prepositions in "-ing" ("anything", "during") no gerund either;
# "pedido", "dúvida", "obrigado", "combinado" are nouns and courtesies, no participle.
NOT_VERBS = (
    *("tambem", "alem", "ordem", "item", "itens", "modem", "totem", "nuvem", "armazem"),
    *("system", "problem", "spam", "instagram", "program"),
    *("proximos", "ultimos", "otimos", "minimos", "maximos", "intimos"),
    *("entendo", "compreendo", "anything", "everything", "nothing", "something", "during"),
    *("bring", "thing", "king", "ring", "spring", "string"),
    *("pedido", "pedidos", "duvida", "duvidas", "obrigado", "obrigada", "obrigados"),
    *("combinado", "recado", "recados", "feriado", "feriados", "telhado", "certificado"),
    *("vestido", "medida", "medidas", "olhada", "seguida", "sabados", "gramado", "resultado"),
    *("resultados", "chamado", "chamados", "cuidado", "cuidados", "estado", "mercado"),
)
# Habitual words that quantify rather than describe a routine ("todos os documentos"): HAB,
# but they open no habitual scope.
QUANTIFIERS = frozenset(("todo", "toda", "todos", "todas", "cada", "every", "each"))
# A contrast ends the habitual scope: "normalmente leva dois dias, mas a equipe vai...".
BUT = frozenset(("mas", "porem", "entretanto", "contudo", "but", "however"))

# Nouns that end like a profession ("florista", "dentista") but are no one.
NOT_PEOPLE = (
    *("revista", "revistas", "prevista", "previstas", "entrevista", "entrevistas"),
    *("conquista", "conquistas", "avista", "autopista", "imprevista", "imprevistas"),
    # Verbs in the subjunctive ("caso o problema persista") and an adjective (f15).
    *("persista", "insista", "resista", "exista", "assista", "desista", "paulista"),
    # Nouns and adjectives in -eiro that are no one (f17).
    *("dinheiro", "primeiro", "terceiro", "inteiro", "janeiro", "fevereiro", "banheiro"),
    *("chuveiro", "roteiro", "cativeiro", "canteiro", "ponteiro", "isqueiro", "terreiro"),
    *("travesseiro", "cruzeiro", "brasileiro", "estrangeiro", "verdadeiro", "passageiro"),
    *("mensageiro", "cheiro", "puleiro", "formigueiro", "pandeiro", "tinteiro", "cinzeiro"),
    *("primeiros", "terceiros", "inteiros", "verdadeiros", "passageiros", "brasileiros"),
    *("banheiros", "chuveiros", "roteiros", "canteiros", "travesseiros", "estrangeiros"),
)

# f16: after a negation, what these verbs govern is not promised, to the sentence's end or its
# "mas" ("não dá pra prometer que a peça chega essa semana, isso depende do fornecedor").
HEDGED_PROMISES: frozenset[str] = frozenset(
    ("garantir", "garanto", "garantimos", "prometer", "prometo", "prometemos", "assegurar")
)

# f18: trades the word lists and endings miss, most in the feminine (-eira is no ending for a
# person: "carteira", "cadeira", "sexta-feira"), people to the learned stage.
MORE_TRADES = (
    *("cozinheira", "cozinheiras", "faxineiras", "copeira", "arrumadeira", "doceira", "boleira"),
    *("lavadeira", "padeira", "camareira", "parteira", "cuidadora", "cuidadoras", "cuidador"),
    *("cuidadores", "decoradora", "decorador", "organizadora", "afinador", "dedetizador"),
    *("dedetizadora", "estofador", "vistoriadora", "zeladora", "tatuadora", "pintora"),
    *("pintores", "marceneira", "serralheira", "piscineira", "acompanhante", "garconete"),
    *("recreador", "recreadora", "recreadores", "monitora", "monitoras", "instaladoras"),
    # Round 21: the short names clinics use ("vou encaminhar seu pedido para a fono").
    *("fono", "fonos", "fisio", "nutri", "pediatra", "psiquiatra", "geriatra"),
)

# What the AI says it will send or tell the customer when it comes back ("te aviso", "já te
# retorno"): the commitment cue's deferred answers and the immediate stall's verbs.
RETURN_VERBS = (
    *("aviso", "retorno", "falo", "chamo", "mando", "passo", "digo", "conto", "confirmo"),
    *("envio", "atualizo", "respondo", "comunico"),
)


def not_after(leads: tuple[str, ...], articles: tuple[str, ...]) -> str:
    """Zero-width: not right after any lead followed by any article ("se o ", "quando a ")."""
    return "".join(rf"(?<!\b{lead}\s{article}\s)" for lead in leads for article in articles)


# Not right after "depois que a", "quando o", "assim que sua": a step of how a process goes
# ("depois que a contestação é registrada, o banco tem até 7 dias", round 21).
NOT_WHEN = not_after(
    ("depois que", "assim que", "logo que", "quando", "apos", "se", "caso"),
    ("a", "o", "sua", "seu"),
)


# f20: "Quando o alarme dispara, a central registra o evento": a clause of "quando" (or "assim
# que", "logo que", "depois que") in the present indicative is how things go every time, where
# the future subjunctive ("quando o técnico chegar", "assim que for aprovado", "assim que der")
# is the one time ahead. Only a clause that opens its sentence or follows a comma: "o técnico
# liga quando chega" keeps its main clause. The lead becomes a habitual word (``HAB``).
WHEN_LEADS = frozenset(("quando", "que"))
_WHEN_BEFORE_QUE = frozenset(("assim", "logo", "depois"))
HABITUAL_WHEN = "quandohab"
# The future subjunctive and what speaks of the time ahead: the endings of the regular forms
# ("chegar", "chegarem", "recebermos"; an infinitive reads the same), irregular short forms,
# the periphrastic future and "assim que possível".
_TIME_AHEAD = frozenset(
    ("for", "forem", "der", "derem", "vir", "virem", "vai", "vao", "vou", "ira", "irao", "possivel")
)
_AHEAD_ENDING = re.compile(r"..(?:[aei]r|[aei]rem|rmos)$")


def habitual_clause_at(words: list[str], index: int) -> bool:
    """Whether ``words[index]`` ("quando", or the "que" of "assim que"...) opens a clause in
    the present indicative at the start of its sentence or after a comma."""
    lead = index
    if words[index] == "que":
        if index == 0 or words[index - 1] not in _WHEN_BEFORE_QUE:
            return False
        lead = index - 1
    if lead > 0 and words[lead - 1] != ",":
        return False
    clause = []
    for word in words[index + 1 :]:
        if word == ",":
            break
        clause.append(word)
    if len(clause) < 2:
        return False
    return not any(word in _TIME_AHEAD or _AHEAD_ENDING.search(word) for word in clause)
