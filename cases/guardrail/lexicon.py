"""Vocabulary and regex building blocks of the pt-BR promise detector.

Everything here runs on *folded* text (``normalize.fold``: lower case, no accents), so the
patterns have no accents and no case variants. WhatsApp spellings are part of the vocabulary
("vc", "p/", "pra", "pro", "c/", "q", "to", "ta", "jaja", "vo").

Names here are fragments of regular expressions, composed by ``promise_rules``.
"""

from __future__ import annotations

import re


def alt(words: tuple[str, ...] | list[str]) -> str:
    """Alternation of literal phrases, compiled as a trie.

    ``re`` tries alternatives one after another; a trie makes a failed attempt cost one
    comparison per distinct first letter instead of one per phrase, which matters because
    the people/department list alone has more than a hundred entries. Longer phrases are
    preferred over their prefixes, like a longest-first alternation. A space in a phrase
    matches any run of whitespace.
    """
    trie: dict[str, dict] = {}
    for word in set(words):
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    return "(?:" + _trie_regex(trie) + ")"


def _trie_regex(node: dict[str, dict]) -> str:
    children = sorted(char for char in node if char)
    parts = [
        (r"\s+" if char == " " else re.escape(char)) + _trie_regex(node[char]) for char in children
    ]
    if not parts:
        return ""
    body = parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"
    # A phrase that ends here is the last resort, so "equipes" wins over "equipe".
    return f"(?:{body})?" if "" in node else body


def ralt(patterns: tuple[str, ...] | list[str]) -> str:
    """Alternation of regex fragments (no reordering)."""
    return "(?:" + "|".join(patterns) + ")"


def forms(stem: str, *endings: str) -> list[str]:
    return [stem + ending for ending in endings]


WORD_END = r"(?![a-z0-9])"

# --- people and departments ----------------------------------------------------------------

# Back-office people and teams of *this* business: a promise that involves one needs a case.
HUM_CORE_NOUNS: tuple[str, ...] = (
    *("equipe", "equipes", "time", "times", "setor", "setores", "departamento", "departamentos"),
    *("area", "responsavel", "responsaveis", "atendente", "atendentes", "atendimento humano"),
    *("consultor", "consultora", "consultores", "consultoras", "especialista", "especialistas"),
    *("tecnico", "tecnicos", "assistencia tecnica", "analista", "analistas", "supervisor"),
    *("supervisora", "supervisores", "supervisao", "gerente", "gerentes", "gerencia", "gestor"),
    *("gestora", "gestores", "financeiro", "suporte", "comercial", "juridico", "backoffice"),
    *("back office", "back-office", "retaguarda", "colega", "colegas", "pessoal", "humano"),
    *("operador", "operadora", "operadores", "vendedor", "vendedora", "vendedores"),
    *("coordenador", "coordenadora", "coordenacao", "administrativo", "administracao", "ti"),
    *("logistica", "faturamento", "cobranca", "ouvidoria", "diretoria", "diretor", "diretora"),
    *("rh", "recursos humanos", "sac", "central", "engenharia", "desenvolvedor"),
    *("desenvolvedores", "dev", "devs", "qualidade", "auditoria", "contabilidade"),
    *("medico", "medica", "doutor", "doutora", "dr", "dra", "dentista"),
    *("secretaria", "secretario", "recepcao", "recepcionista", "dono", "dona", "proprietario"),
    *("proprietaria", "chefe", "lider", "plantao", "manutencao", "infraestrutura"),
    *("prevencao", "retencao", "advogado", "advogada", "corretor", "corretora", "comite"),
    *("nivel 2", "n2", "escritorio", "matriz", "regional", "superintendencia", "governanca"),
    *("tesouraria", "compliance", "almoxarifado", "pos-venda", "pos venda", "posvenda"),
)

# Outside parties the AI cannot reach by itself. "Vou verificar com o banco" is a promise, but
# "seu pedido foi encaminhado para a transportadora" is shipping status, so these count only in
# the check-with / alert / ask rules, never as a forward target nor as a subject.
HUM_EXT_NOUNS: tuple[str, ...] = (
    *("transportadora", "fornecedor", "fornecedores", "fabricante", "banco", "parceiro"),
    *("parceira", "parceiros", "loja", "lojas", "seguradora", "prestador", "prestadora"),
    *("franquia", "oficina", "clinica", "correios", "laboratorio", "cozinha", "expedicao"),
)

DET = (
    r"(?:(?:(?:o|a|os|as|um|uma|uns|umas|esse|essa|este|esta|algum|alguma|todo\s+o|toda\s+a)\s+)?"
    r"(?:nosso|nossa|nossos|nossas|meu|minha|meus|minhas|seu|sua|seus|suas)\s+"
    r"|(?:o|a|os|as|um|uma|uns|umas|esse|essa|este|esta|algum|alguma|todo\s+o|toda\s+a)\s+"
    r"|(?:um|uma|alguns|algumas)\s+d(?:e|os|as)\s+(?:nossos|nossas)\s+)?"
)
# "do suporte" is a complement ("o telefone do suporte", "ninguem da equipe"), not a person
# being addressed, so a bare noun right after "de/do/da" never counts as the target.
NOT_AFTER_DE = r"(?<!\bd[aoe]\s)(?<!\bd[ao]s\s)"
# After a person of the field: not an outside carrier's ("o entregador da transportadora").
OUTSIDE_COURIERS = ("transportadora", "correios", "app", "aplicativo", "ifood", "uber", "loggi")
NOT_A_CARRIERS = rf"(?!\s+d[aoe]s?\s+{alt(OUTSIDE_COURIERS)}|\s+del[ae]s(?![a-z]))"
CORE = alt(HUM_CORE_NOUNS)
ALL = alt(HUM_CORE_NOUNS + HUM_EXT_NOUNS)
# ... but not the customer's own people ("o financeiro da sua empresa") nor a database.
_NOT_THEIRS = (
    r"(?!\s+d[aoe]\s+(?:sua|seu)\s+(?:empresa|companhia|escola|condominio|familia|banco))"
    r"(?!\s+de\s+dados)"
)
HUM_CORE_BARE = rf"(?:(?:alguem\s+d[aoe]s?\s+)?{DET}{CORE}|alguem){WORD_END}{_NOT_THEIRS}"
HUM_ALL_BARE = rf"(?:(?:alguem\s+d[aoe]s?\s+)?{DET}{ALL}|alguem){WORD_END}{_NOT_THEIRS}"
HUM_CORE = NOT_AFTER_DE + HUM_CORE_BARE
HUM_ALL = NOT_AFTER_DE + HUM_ALL_BARE

# --- glue ---------------------------------------------------------------------------------

# One filler word inside a clause (with its leading space). Never crosses punctuation, never a
# negation (so "o suporte nao vai ligar" is not "suporte ... vai ligar") and never the customer
# as a new subject (so "vou verificar se voce pode falar com o suporte" does not count).
FILL = (
    r"(?:\s+(?!(?:nao|nunca|jamais|nem|voce|voces|vc|vcs|senhor|senhora|cliente|poder|pode"
    r"|podera)(?![a-z0-9]))[a-z0-9/$%#-]+)"
)


def gap(n: int) -> str:
    return f"{FILL}{{0,{n}}}?"


TO = r"(?:para|pra|pro|pros|pras|p/|ao|aos|a|as|junto\s+aos?|junto\s+a)\s+"

# First-person intent: "vou", "irei", "vamos", "preciso", "deixa eu", "pode deixar que eu"...
INTENT_LEADS: tuple[str, ...] = (
    *("vou", "vo", "irei", "iremos", "vamos", "gente vai", "gente ira", "preciso", "precisamos"),
    *("precisarei", "tenho que", "temos que", "tenho de", "deixa eu", "deixe eu", "deixa que eu"),
    *("deixe que eu", "deixa-me", "deixe-me", "deixar que eu", "fico de", "ficarei de"),
    *("ficamos de", "estarei", "estaremos", "estou", "to", "tou", "estamos", "sigo", "seguimos"),
)

# --- verbs --------------------------------------------------------------------------------

CHECK_INF = alt(
    (
        *("verificar", "ve", "ver", "checar", "checkar", "conferir", "confirmar", "consultar"),
        *("olhar", "dar uma olhada", "conversar", "falar", "alinhar", "validar", "tratar"),
        *("levantar", "averiguar", "apurar", "analisar", "resolver", "acertar", "combinar"),
        *("negociar", "esclarecer", "estar verificando", "estar checando", "estar vendo"),
        *("verificando", "checando", "vendo", "olhando", "conversando", "falando", "alinhando"),
        *("validando", "confirmando", "consultando", "conferindo", "tratando", "resolvendo"),
        *("analisando", "apurando", "averiguando"),
    )
)
CHECK_PRESENT_LEADS: tuple[str, ...] = (
    *("verifico", "checo", "confiro", "confirmo", "consulto", "vejo", "olho", "converso"),
    *("falo", "alinho", "valido", "apuro", "averiguo"),
)
WITH = r"(?:com|c/|junto\s+aos?|junto\s+a)\s+"

ALERT_INF = alt(
    (
        *("acionar", "notificar", "avisar", "comunicar", "informar", "sinalizar", "reportar"),
        *("chamar", "contatar", "consultar", "acionando", "notificando", "avisando"),
        *("comunicando", "informando", "sinalizando", "reportando", "chamando", "contatando"),
        "consultando",
    )
)
ALERT_FINITE_LEADS: tuple[str, ...] = (
    *("acionei", "acionamos", "aciono", "notifiquei", "notificamos", "notifico", "avisei"),
    *("avisamos", "comuniquei", "comunicamos", "informei", "informamos", "sinalizei"),
    *("sinalizamos", "sinalizo", "reportei", "reportamos", "chamei", "chamamos", "contatei"),
    *("contatamos", "consultei", "consultamos"),
)
ALERT_PREP = r"(?:(?:a|ao|aos|as|para|pra|pro|pros|p/)\s+)?"

FWD_STEMS = ("encaminh", "repass", "pass", "direcion", "escal", "escalon", "envi", "mand", "lev")
FWD_INF = alt(
    [
        *(form for stem in FWD_STEMS for form in forms(stem, "ar", "ando", "a-lo", "a-la")),
        *("transferir", "transferindo", "submeter", "submetendo"),
    ]
)
FWD_FINITE_LEADS: tuple[str, ...] = (
    *(form for stem in FWD_STEMS for form in forms(stem, "o", "ei", "amos", "ando", "arei")),
    *(form for stem in FWD_STEMS for form in forms(stem, "aremos")),
    *("transfiro", "transferi", "transferimos", "transferindo", "submeto", "submeti"),
    "submetemos",
)
FWD_TARGET = rf"{TO}(?:(?:analise|avaliacao|aprovacao)\s+d[aoe]s?\s+{HUM_CORE_BARE}|{HUM_CORE})"

ASK_INF = alt(
    (
        *("pedir", "solicitar", "requisitar", "cobrar", "perguntar", "pedindo", "solicitando"),
        "perguntando",
    )
)
ASK_FINITE_LEADS: tuple[str, ...] = (
    *("pedi", "pedimos", "peco", "solicitei", "solicitamos", "solicito", "requisitei"),
    *("perguntei", "perguntamos", "cobrei", "cobramos"),
)
ASK_TARGET = rf"(?:{TO}|com\s+|ajuda\s+(?:d[aoe]s?|a|ao|para|pra|pro)\s+){HUM_ALL}"

# Bare "area" is too often a place ("a area de cobertura vai atender") to be a subject.
SUBJECT_LEADS: tuple[str, ...] = (
    *(noun for noun in HUM_CORE_NOUNS if noun != "area"),
    *("area responsavel", "area tecnica", "area comercial", "area financeira"),
    *("area juridica", "area competente", "alguem", "eles", "elas"),
)
# Subject and auxiliary: "equipe de retencao, que entrara", "o pessoal do suporte ja esta".
SUBJ_GAP = rf"{gap(4)}(?:\s*,\s*que)?"

ACTION_INF = alt(
    (
        *("entrar em contato", "ligar", "retornar", "analisar", "verificar", "checar"),
        *("conferir", "confirmar", "resolver", "avaliar", "chamar", "contatar", "responder"),
        *("atender", "assumir", "cuidar", "tratar", "providenciar", "liberar", "corrigir"),
        *("ajustar", "enviar", "mandar", "agendar", "visitar", "falar", "conversar", "procurar"),
        *("acompanhar", "investigar", "estornar", "reembolsar", "devolver", "aprovar"),
        *("autorizar", "desbloquear", "reativar", "reprocessar", "regularizar", "trocar"),
        *("substituir", "consertar", "reparar", "instalar", "emitir", "revisar", "apurar"),
        *("dar retorno", "dar um retorno", "dar uma olhada", "olhar", "ajudar", "fazer"),
        *("ir ate", "ate", "passar ai", "coletar", "orientar", "atuar", "explicar"),
    )
)
# Round 29: "a van já saiu daqui e tá indo pro seu endereço" is "indo aí" by the place's name.
_YOUR_PLACES_M = ("endereco", "predio", "apartamento", "condominio", "trabalho", "escritorio")
_YOUR_PLACES_F = ("casa", "residencia", "empresa", "loja", "obra", "portaria")
ON_THE_WAY_WORDS: tuple[str, ...] = (
    *("a caminho", "indo ai", "indo ate ai", "indo ate voce", "indo pra ai", "indo para ai"),
    "se deslocando",
    *(
        f"indo {to} {place}"
        for to in ("pro seu", "para o seu", "para seu", "ao seu", "ate o seu", "ate seu")
        for place in _YOUR_PLACES_M
    ),
    *(
        f"indo {to} {place}"
        for to in ("pra sua", "para a sua", "para sua", "a sua", "ate a sua", "ate sua")
        for place in _YOUR_PLACES_F
    ),
)
ACTION_GER = alt(
    (
        *("verificando", "analisando", "cuidando", "trabalhando", "tratando", "resolvendo"),
        *("olhando", "investigando", "avaliando", "acompanhando", "providenciando"),
        *("corrigindo", "ajustando", "apurando", "checando", "conferindo", "revisando"),
        # On the way to the customer: "um técnico da nossa equipe tá indo aí" (a leak of the
        # blind set r18), "a equipe está a caminho" (an order on its way has no person).
        *ON_THE_WAY_WORDS,
    )
)
# A habit or a standing fact ("nossa van passa no seu bairro toda terça"): ``promise_scan``
# takes every dispatch rule back on one of these anywhere in the sentence, subject included.
# Round 30: a period said with "todo" ("toda terça", "todos os dias", "todo fim de mês"); a
# bare "todo" is none ("com todo cuidado", "todo o processo").
_PERIODS = {
    **{word: f"{word}s" for word in ("dia", "semana", "ano", "manha", "tarde", "noite", "hora")},
    **{word: f"{word}s" for word in ("segunda", "terca", "quarta", "quinta", "sexta", "sabado")},
    **{word: f"{word}s" for word in ("domingo", "feriado", "inicio", "comeco", "quinzena")},
    **{"mes": "meses", "vez": "vezes", "fim": "fins", "final": "finais"},
    **{"fim de semana": "fins de semana", "final de semana": "finais de semana"},
}
HABIT_WORDS: tuple[str, ...] = (
    *(f"{every} {period}" for every in ("todo", "toda", "todo o", "toda a") for period in _PERIODS),
    *(
        f"{every} {plural}"
        for every in ("todos", "todas", "todos os", "todas as")
        for plural in _PERIODS.values()
    ),
    *("sempre", "geralmente", "normalmente", "usualmente", "costuma", "costumam", "so roda"),
    "so sai",
)
# Round 30: "o Tião já tá indo pra vaga 14 ver a bomba": going somewhere to do a job for the
# customer is on the way too (not "tá indo pra garagem": no job named).
_ERRANDS = (
    *("ver", "verificar", "olhar", "checar", "conferir", "consertar", "arrumar", "trocar"),
    *("instalar", "buscar", "pegar", "levar", "entregar", "atender", "montar", "medir"),
)
GOING_TO_DO = rf"indo\s+(?:pra|pro|para|ate|ao|a)(?:\s+[a-z0-9]+){{1,4}}?\s+{alt(_ERRANDS)}"
ON_THE_WAY = rf"(?:{alt(ON_THE_WAY_WORDS)}|{GOING_TO_DO})"
SYNTH_STEMS = (
    *("retornar", "ligar", "analisar", "resolver", "verificar", "avaliar", "chamar", "contatar"),
    *("responder", "providenciar", "far", "tratar", "cuidar", "enviar", "procurar", "atender"),
    *("assumir", "agendar", "corrigir", "liberar", "acompanhar", "investigar", "revisar"),
    "estornar",
)
SYNTH_FORMS: tuple[str, ...] = (
    "entrara em contato",
    "entrarao em contato",
    *(form for stem in SYNTH_STEMS for form in forms(stem, "a", "ao")),
)
CLITIC_VERBS: tuple[str, ...] = (
    *("liga", "ligam", "retorna", "retornam", "chama", "chamam", "responde", "respondem"),
    *("contata", "contatam", "procura", "procuram", "avisa", "avisam", "manda", "mandam"),
    *("envia", "enviam"),
)
ACTION_SYNTH = alt(SYNTH_FORMS)
ACTION_PRES_CLITIC = (
    rf"(?:(?:te|lhe|vos)\s+{alt(CLITIC_VERBS)}|{alt(('entra em contato', 'entram em contato'))})"
)
FUT_AUX_WORDS: tuple[str, ...] = (
    *("vai", "vao", "ira", "irao", "deve", "devem", "devera", "deverao", "ficou de"),
    *("ficaram de", "fica de", "ficara de", "vai ficar de"),
)
FUT_AUX = alt(FUT_AUX_WORDS)
BE_PROG_WORDS: tuple[str, ...] = ("esta", "estao", "ta", "tao", "estara", "estarao", "vai estar")
BE_PROG = alt(BE_PROG_WORDS)
ALERTED_AUX_WORDS: tuple[str, ...] = ("foi", "foram", "esta", "estao", "ficou", "ficaram")
ADV = (
    r"(?:\s+(?:ja|logo|em\s+breve|tambem|certamente|com\s+certeza|ainda\s+hoje|amanha|hoje"
    r"|daqui\s+a\s+pouco))?"
)

RESULT_NOUN = alt(
    (
        *("resposta", "retorno", "novidade", "novidades", "posicao", "posicionamento"),
        *("atualizacao", "atualizacoes", "noticia", "noticias", "parecer", "feedback"),
        *("devolutiva", "informacao", "informacoes", "confirmacao"),
    )
)
THEY_DONE = alt(
    (
        *("liberarem", "resolverem", "responderem", "retornarem", "analisarem", "aprovarem"),
        *("confirmarem", "verificarem", "derem", "concluirem", "autorizarem", "corrigirem"),
        *("ajustarem", "avisarem", "finalizarem"),
    )
)
HE_DONE = alt(
    (
        *("liberar", "resolver", "responder", "retornar", "analisar", "aprovar", "confirmar"),
        *("verificar", "der", "passar", "concluir", "autorizar", "corrigir", "ajustar"),
        *("avisar", "finalizar", "terminar", "tiver"),
    )
)
WHEN_LEADS: tuple[str, ...] = (
    *("assim que", "assim q", "logo que", "tao logo", "quando", "qndo", "qdo"),
)

TICKET = alt(
    (
        *("chamado", "chamados", "ticket", "tickets", "ocorrencia", "ocorrencias", "protocolo"),
        *("requisicao", "os", "ordem de servico", "reclamacao", "contestacao", "incidente"),
        "solicitacao interna",
    )
)
# Not "protocolo": "seu protocolo foi registrado" is the legal SAC number, not a ticket.
TICKET_SUBJECT_LEADS: tuple[str, ...] = (
    *("chamado", "chamados", "ticket", "tickets", "ocorrencia", "ocorrencias"),
    *("ordem de servico", "reclamacao", "contestacao", "incidente", "solicitacao interna"),
)
TICKET_OBJ = rf"(?:\s+(?:um|uma|o|a|seu|sua|novo|nova|esse|essa|n?[o0-9#.-]+)){{0,2}}\s+{TICKET}"

PARTICIPLE_HANDLED = (
    r"(?:encaminhad|repassad|transferid|direcionad|escalad|escalonad|analisad|avaliad"
    r"|verificad|tratad|revisad|investigad|apurad|atendid|contatad|contactad|procurad"
    r"|acompanhad|respondid|reavaliad|reanalisad|submetid|chamad|acionad)[oa]s?"
)
PARTICIPLE_FORWARDED = (
    r"(?:encaminhad|repassad|transferid|direcionad|escalad|escalonad|enviad|submetid"
    r"|passad)[oa]s?"
)
PARTICIPLE_ALERTED = r"(?:acionad|notificad|avisad|informad|chamad)[oa]s?"

# "retorno" is the verb "I get back" only after these words ("te retorno", "e ja retorno").
RETORNO_VERB_BEFORE = (
    r"(?:(?<=\bte\s)|(?<=\blhe\s)|(?<=\bvos\s)|(?<=\be\s)|(?<=\bque\s)|(?<=\beu\s)"
    r"|(?<=\bja\s)|(?<=\bdepois\s)|(?<=\bentao\s)|(?<=\bnos\s))"
)


# --- round 3: requests to others, notes for a person, present as future -------------------

ASKED_LEADS: tuple[str, ...] = (
    *("pedi que", "pedi para", "pedi pra", "solicitei que", "solicitei para", "pedimos que"),
    *("pedimos para", "solicitamos que", "ja pedi que"),
)
# A person of the business and a verb, or a third-person plural verb ("liberem"), never the
# customer ("pedi que voce envie"), nor what visitors are asked to do ("pedimos que evitem").
_CONDUCT = "evitem|cheguem|tragam|aguardem|comparecam|apresentem|mantenham|respeitem|usem"
ASKED_REST = (
    rf"(?:\s+{HUM_ALL_BARE}\s+[a-z]+|\s+(?!(?:voce|vc|voces|{_CONDUCT})\b)[a-z]{{3,}}(?:em|am))"
    + WORD_END
)
NOTE_LEADS: tuple[str, ...] = (
    *("deixei anotado", "deixei registrado", "deixei avisado", "deixei um recado"),
    *("deixei uma anotacao", "deixei uma observacao", "deixei uma nota"),
    *("coloquei uma observacao", "coloquei uma anotacao", "anotei", "registrei"),
)
NOTE_TO = r"(?:para|pra|pro|pros|pras)\s+"
NUDGE_LEADS: tuple[str, ...] = ("vou dar um toque", "dei um toque", "vou dar um alo", "dei um alo")
SOON_LEADS: tuple[str, ...] = (
    *("semana que vem", "daqui a pouco", "em breve", "ainda hoje", "logo mais", "mais tarde"),
    *("em instantes", "amanha", "amanha cedo", "na sequencia"),
)
# Present-tense verbs of a person acting for the customer: never "funciona", "abre",
# "fecha", "atende" (hours and facts, not commitments).
PRES3_ACTION = alt(
    (
        *("liga", "chama", "assume", "passa", "instala", "revisa", "retorna", "responde"),
        *("manda", "envia", "verifica", "analisa", "resolve", "agenda", "confirma", "avalia"),
        *("corrige", "libera", "entra em contato", "fala com voce", "procura", "visita"),
        *("prepara", "providencia", "finaliza", "conclui", "troca", "conserta", "arruma"),
    )
)
SOON_REST = (
    rf"(?:\s+(?:de\s+manha|cedo|a\s+tarde))?,?\s+{HUM_CORE_BARE}\s+(?:te\s+|lhe\s+)?"
    rf"{PRES3_ACTION}{WORD_END}"
)
HEARS_LEADS: tuple[str, ...] = (
    *("voce recebe", "vc recebe", "voce vai receber", "vc vai receber", "voce recebera"),
    *("voce deve receber", "voce ira receber"),
)
HEARS_REST = (
    r"\s+(?:a|o|uma|um)\s+(?:visita|ligacao|resposta|retorno|contato|chamada|devolutiva"
    rf"|proposta|mensagem)\s+d[aoe]s?\s+{DET}{CORE}{WORD_END}"
)

# First names common in Brazil (and a few English ones), folded. A name only becomes the
# class NAME; the rest of the sentence still has to read like a promise.
NAMES: frozenset[str] = frozenset(
    (
        *("ana", "maria", "julia", "juliana", "fernanda", "patricia", "camila", "amanda"),
        *("bruna", "beatriz", "bia", "carla", "carol", "carolina", "daniela", "dani"),
        *("debora", "denise", "eduarda", "elaine", "fabiana", "gabriela", "gabi", "helena"),
        *("isabela", "jessica", "joana", "karina", "larissa", "leticia", "lu", "luana"),
        *("luciana", "luiza", "marcia", "mariana", "marta", "natalia", "paula", "priscila"),
        *("raquel", "renata", "roberta", "sabrina", "sandra", "simone", "sonia", "tatiana"),
        *("tati", "vanessa", "viviane", "adriana", "aline", "alice", "cristina", "claudia"),
        *("rosa", "sara", "sarah", "silvia", "tereza", "vera", "monica", "lucia", "livia"),
        *("joao", "jose", "pedro", "paulo", "lucas", "marcos", "marcelo", "rafael", "ricardo"),
        *("rodrigo", "felipe", "gustavo", "bruno", "carlos", "daniel", "diego", "eduardo"),
        *("fabio", "fernando", "gabriel", "guilherme", "henrique", "igor", "joaquim", "jorge"),
        *("leandro", "leonardo", "luis", "luiz", "marcio", "mateus", "matheus", "miguel"),
        *("renato", "roberto", "sergio", "thiago", "tiago", "vinicius", "vitor", "victor"),
        *("andre", "antonio", "caio", "cesar", "claudio", "edson", "fabricio", "francisco"),
        *("hugo", "julio", "leo", "mauricio", "murilo", "otavio", "rogerio", "samuel"),
        *("wagner", "william", "alex", "alexandre", "arthur", "davi", "enzo", "heitor"),
        *("john", "mark", "mike", "michael", "david", "james", "jessica", "emily", "anna"),
        *("tom", "chris", "kate", "laura", "lisa", "linda", "peter", "paul", "steve"),
        # More common first names, and the nicknames staff go by on WhatsApp ("O Rafa ficou
        # de redesenhar a arte", "a Fê te manda o link"): a leak of the blind set r17 was a
        # promise by "o Rafa", read as no one. Not "mel", "digo", "re", "clara": words too.
        *("rafaela", "manuela", "isadora", "yasmin", "lara", "lorena", "valentina", "sofia"),
        *("sophia", "bianca", "thais", "lais", "milena", "rebeca", "flavia", "regina", "rita"),
        *("gisele", "andreia", "eliane", "michele", "kelly", "nicole", "luan", "luciano"),
        *("alan", "anderson", "wesley", "jefferson", "robson", "ramon", "bernardo", "benicio"),
        *("rafa", "gui", "fe", "ju", "nanda", "duda", "mari", "manu", "lipe", "dudu", "guto"),
        *("beto", "zeca", "ze", "chico", "cadu", "rafinha", "juninho", "nati", "lari", "vivi"),
        *("cris", "fer", "tonho", "carlinhos", "paulinho", "fabi", "nando", "babi", "binho"),
        # promise_names.NAME_MARK: an unknown name read from its capitals.
        *("fulano", "fulana"),
    )
)
