"""People named by their trade, for the rules that need someone the AI will talk to.

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
