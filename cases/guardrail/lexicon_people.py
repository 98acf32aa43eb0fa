"""People named by their trade, for the rules that need someone the AI will talk to, and the
people of the field the rules and the learned stage read besides the back office's nouns.

No list names every trade a business has ("o marceneiro", "a estoquista", "o afinador",
"a confeiteira"), but Portuguese makes most of them with a few endings: -eiro/-eira, -ista,
-dor/-dora, -tor/-tora. A word with one of those endings after "vou confirmar com o ..." is
a person far more often than not; the words with those endings that are no one ("dinheiro",
"revista", "computador") are listed, so "vou conferir com a carteirinha" stays nothing.
"""

from __future__ import annotations

from .lexicon import DET, HUM_ALL, NOT_AFTER_DE, WORD_END, alt

# Words with a person's ending that are things, places, dates or adjectives.
_NO_ONE = (
    *("dinheiro", "primeiro", "primeira", "terceiro", "terceira", "inteiro", "inteira"),
    *("janeiro", "fevereiro", "banheiro", "chuveiro", "roteiro", "cadeira", "carteira"),
    *("carteirinha", "madeira", "maneira", "bandeira", "geladeira", "torneira", "prateleira"),
    *("cativeiro", "canteiro", "ponteiro", "isqueiro", "travesseiro", "terreiro", "cruzeiro"),
    *("brasileiro", "brasileira", "estrangeiro", "verdadeiro", "passageiro", "mensageiro"),
    *("revista", "entrevista", "conquista", "prevista", "imprevista", "avista"),
    *("computador", "servidor", "elevador", "ventilador", "aquecedor", "liquidificador"),
    *("processador", "indicador", "marcador", "medidor", "roteador", "carregador", "secador"),
    *("condicionador", "refrigerador", "purificador", "umidificador", "gerador", "coletor"),
    *("extintor", "projetor", "inversor", "conector", "leitor", "detector", "contador de"),
)
_TRADE_ENDING = r"[a-z]{3,}(?:eir[oa]s?|istas?|[dt]or(?:a|as|es)?)"
# "o marceneiro", "a estoquista", "os montadores", "a professora", "o chef".
TRADE_PERSON = (
    rf"(?!{alt(_NO_ONE)}{WORD_END})(?:{_TRADE_ENDING}|professor(?:a|es|as)?|chef|chefs)" + WORD_END
)
# Whom the AI checks with: the business's people and outside parties (``HUM_ALL``), or
# anyone named by a trade.
CHECK_TARGET = rf"(?:{HUM_ALL}|{NOT_AFTER_DE}{DET}{TRADE_PERSON})"

# Trades whose word is as often a thing or a role in a document ("o coletor de urina", "o
# guia do curso"): people only when they do what only a person does (round 26).
TRADES_ALSO_THINGS = ("coletor", "coletores", "guia", "monitor", "monitora", "monitores")

# The trades a service business sends to the customer (``promise_rules_dispatch``: "o
# vidraceiro passa amanhã", "a recreadora chega às 14h").
TRADES_SENT = (
    *("carregador", "carregadores", "pintores", "pedreiros", "vidraceiro", "vidraceiros"),
    *("serralheiro", "serralheiros", "piscineiro", "gesseiro", "estofador", "tapeceiro"),
    *("dedetizador", "dedetizadores", "marceneiros", "jardineiros", "tecnica", "tecnicas"),
    # The same trades in the feminine (round 18: "a vistoriadora passa no imóvel sexta").
    *("vistoriadora", "vistoriadoras", "estofadora", "zeladora", "tatuadora", "encanadora"),
    *("pintora", "pintoras", "marceneira", "jardineira", "cozinheira", "cozinheiras"),
    *("barbeira", "chaveira", "gesseira", "tapeceira", "piscineira", "serralheira"),
    *("motoqueiro", "motoqueiros", "amolador", "afiador"),
    # Round 19: more of the trades a service business sends (every first-reading leak since
    # round 13 had a person the lists did not know). Not "monitor", "guia", "piloto",
    # "montadora", "coletor", "auxiliar": as often a thing, a document or an adjective.
    *("cuidador", "cuidadora", "cuidadores", "cuidadoras", "manobrista", "manobristas"),
    *("coletora", "recreadora", "recreador", "recreadoras", "recreadores", "churrasqueiro"),
    *("churrasqueira", "fotografos", "cinegrafista", "cinegrafistas", "garcons", "garconete"),
    *("garconetes", "bartender", "barman", "boleira", "doceira", "salgadeira", "condutor"),
    *("condutora", "costureiro", "alfaiate", "bordadeira", "sapateiro", "relojoeiro"),
    *("joalheiro", "ajudante", "ajudantes", "soldador", "funileiro", "lanterneiro"),
    *("borracheiro", "paisagista", "podador", "faxineiro", "diaristas", "passadeira"),
    *("lavadeira", "enfermeiros", "fonoaudiologa", "tosador", "tosadora", "banhista"),
    *("adestrador", "adestradora", "passeador", "passeadora", "afinador", "afinadora"),
    *("treinador", "treinadora", "avaliador", "avaliadora", "engenheira", "topografo"),
    *("agrimensor", "estagiario", "estagiaria", "freteiro", "maquiadora", "maquiador"),
    *("esteticista", "depiladora", "massagista", "dj", "musico", "musicos"),
    *("cerimonialista", "decoradora", "decorador", "florista", "floristas"),
)

# Trades that come to the customer's door, as subjects of "on the way" only ("o chaveiro tá a
# caminho", "os rapazes da mudança estão indo aí"; session 14): as subjects of any action
# they would make past deliveries and habits promises, so elsewhere the learned stage reads
# them (``PEOPLE_EXTRA``).
FIELD_STAFF_LEADS: tuple[str, ...] = (
    *("motoboy", "motoboys", "motorista", "motoristas", "entregador", "entregadora"),
    *("entregadores", "entregadoras", "instalador", "instaladora", "instaladores", "montador"),
    *("montadores", "eletricista", "eletricistas", "encanador", "encanadores", "chaveiro"),
    *("rapaz", "rapazes", "menino", "meninos", "moco", "mocos", "vistoriador", "mecanico"),
    # A security company's field staff (round 27: "acionou o agente de pronta-resposta, que está
    # a caminho do local" went out with no case).
    *("agente", "agentes", "vigilante", "vigilantes", "vigia", "vigias", "socorrista"),
    "socorristas",
)

# People and teams the learned stage's features read as ``HUM`` besides the rules' nouns
# (``promise_features.PEOPLE``).
PEOPLE_EXTRA = (
    *("pessoal", "galera", "meninos", "meninas", "rapaz", "moca", "motoboy", "motorista"),
    *("menino", "menina", "moco"),
    *("entregador", "entregadores", "montador", "montadores", "instalador", "encarregado"),
    *("instrutor", "instrutora", "professor", "professora", "coordenador", "coordenadora"),
    *("nutricionista", "veterinaria", "veterinario", "sindico", "sindica", "designer"),
    *("perito", "vistoriador", "despachante", "enfermeira", "enfermeiro", "farmaceutico"),
    *("farmaceutica", "fisioterapeuta", "psicologa", "psicologo", "mecanico", "eletricista"),
    *("encanador", "zelador", "porteiro", "portaria", "garcom", "chef"),
    *("pintor", "pedreiro", "marceneiro", "jardineiro", "faxineira", "diarista", "cozinheiro"),
    *("cabeleireira", "cabeleireiro", "barbeiro", "fotografo", "fotografa", "tatuador"),
    # Not "compras", "vendas", "cadastro", "contratos", "pagamentos", "estoque", "mesa", "nivel":
    # as often what the customer bought or signed ("das suas compras") as a department, and
    # the department is named by the team noun before them ("o setor de compras").
    *("expedicao", "almoxarifado", "provisionamento", "implantacao", "onboarding"),
    *("plantonista", "assistencia", "gerencia", "coordenacao", "secretaria"),
    *("team", "staff", "department", "manager", "supervisor", "specialist", "specialists"),
    *("technician", "technicians", "agent", "agents", "representative", "colleague"),
    *("engineers", "engineering", "accounts", "finance", "billing", "support", "warehouse"),
    *("kitchen", "nurse", "doctor", "driver", "courier", "lawyer", "office", "desk"),
    *("accountant", "adjuster", "rep", "crew", "installer", "dentist", "contador", "contadora"),
    *("administradora", "despachante", "costureira", "arquiteto", "arquiteta", "engenheiro"),
    # The trades that come to the customer's door, plural and feminine forms too (session 14:
    # "os rapazes da mudança já saíram... e chegam aí"); every word in -ista ("a florista") is
    # a person by its ending (``promise_features``).
    *FIELD_STAFF_LEADS,
    *("mocas", "manicure", "manicures", "confeiteira", "confeiteiro"),
)
