"""Text preparation for the semantic stage: WhatsApp spellings, media placeholders, and
the sub-cases a description lists.

Unlike ``local_classifier.normalize`` (accent-free, for n-grams) the sentence encoder
reads real Portuguese, so spellings expand to accented words ("vc" -> "você", "n" ->
"não"). Measured on the own scenarios' tuning part (tests/fixtures/routing): +1.5 to +3
points of top-1 for both encoders.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

# Lowercase WhatsApp spelling -> the word the encoder knows. Only tokens that are
# unambiguous in a customer message to a business ("ta" is "está", never "tá bom"-only).
SPELLINGS: Mapping[str, str] = MappingProxyType(
    {
        "vc": "você",
        "vcs": "vocês",
        "ce": "você",
        "voce": "você",
        "q": "que",
        "oq": "o que",
        "pq": "porque",
        "tb": "também",
        "tbm": "também",
        "tmb": "também",
        "n": "não",
        "nao": "não",
        "naum": "não",
        "blz": "beleza",
        "obg": "obrigado",
        "obgd": "obrigado",
        "vlw": "valeu",
        "msg": "mensagem",
        "td": "tudo",
        "hj": "hoje",
        "amnh": "amanhã",
        "qdo": "quando",
        "qnd": "quando",
        "qto": "quanto",
        "qnt": "quanto",
        "qts": "quantos",
        "qm": "quem",
        "pra": "para",
        "pro": "para o",
        "mt": "muito",
        "mto": "muito",
        "mts": "muitos",
        "dps": "depois",
        "agr": "agora",
        "aki": "aqui",
        "aq": "aqui",
        "kd": "cadê",
        "cade": "cadê",
        "dnv": "de novo",
        "pfv": "por favor",
        "pfvr": "por favor",
        "pf": "por favor",
        "pgto": "pagamento",
        "ctt": "contato",
        "zap": "whatsapp",
        "wpp": "whatsapp",
        "to": "estou",
        "tô": "estou",
        "ta": "está",
        "tá": "está",
        "tao": "estão",
        "tão": "estão",
        "tava": "estava",
        "eh": "é",
        "ja": "já",
        "ne": "né",
        "net": "internet",
        "ap": "apartamento",
        "apto": "apartamento",
        "vdd": "verdade",
        "msm": "mesmo",
        "sla": "sei lá",
        "ngm": "ninguém",
        "alg": "alguém",
        "cmg": "comigo",
        "d": "de",
        "c": "com",
    }
)

_TOKENS = re.compile(r"\w+|\W+")
# A whole message that is a channel's stand-in for media: "[áudio]", "[áudio de 0:42]",
# "<Mídia oculta>" (WhatsApp export), or nothing but punctuation and emoji.
_PLACEHOLDER = re.compile(r"^\s*(\[[^\]]*\]|<[^>]*>)\s*$")
_WORD_CHAR = re.compile(r"[^\W_]")
_STRETCH = re.compile(r"([^\W\d_])\1{2,}")  # "siiiim" -> "sim"; "rr"/"ss" are spelling


def expand_spelling(text: str) -> str:
    """``text`` with stretched letters folded and WhatsApp spellings written out."""
    folded = _STRETCH.sub(r"\1", text)
    return "".join(
        SPELLINGS.get(tok.lower(), tok) if tok[0].isalnum() else tok
        for tok in _TOKENS.findall(folded)
    )


def is_placeholder(text: str) -> bool:
    """True for a media stand-in or a message without a single letter or digit."""
    return bool(_PLACEHOLDER.match(text)) or not _WORD_CHAR.search(text)


# An admin's description usually opens with who asks ("Cliente quer saber ...") and then
# lists sub-cases separated by commas, "ou" and "e". Each sub-case is one more short
# example of the intent; the opener carries no meaning of its own.
_OPENER = re.compile(
    r"^\s*(?:o |a )?(?:cliente|inquilino|aluno|aluna|paciente|tutor|usuário|pessoa|lead)"
    r"(?:\s+(?:quer|pede|pergunta|avisa|relata|reclama|está|tem|precisa|diz|informa))?"
    r"(?:\s+(?:que|se|sobre|de|do|da|em|por|para))?\s*",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"[,;:()/]|\bou\b|\be\b", re.IGNORECASE)
MIN_FRAGMENT_CHARS = 4


# What a description says the intent does NOT cover: "...; não cobre gás nem consulta de
# preço", "..., e não contratar um plano novo", "..., sem pedir preço", "(sem ser urgência)".
# Those words belong to another intent; as items of this one they pull its neighbours'
# messages in (a message about medicines scored the pet-food intent through its fragment
# "não cobre medicamentos"). A clause that opens with such a marker after a separator ends
# the covered part; a parenthesis that opens with one is dropped alone.
_EXCLUSION_TAIL = re.compile(
    r"\s*[;,.:]\s*(?:e\s+|mas\s+)?(?:"
    r"n[ãa]o\s+(?:cobre|cobrem|inclui|incluem|abrange|trata|serve\s+para|vale\s+para|é\s+para)\b"
    r"|e\s+n[ãa]o\b|exceto\b|salvo\b|sem\s+(?:ser\b|\w+(?:ar|er|ir)\b)"
    r").*$",
    re.IGNORECASE | re.DOTALL,
)
_EXCLUSION_ASIDE = re.compile(
    r"\s*\(\s*(?:sem|exceto|salvo|n[ãa]o\s+(?:cobre|inclui|é))\b[^)]*\)", re.IGNORECASE
)


def covered_part(description: str) -> str:
    """A description without what it says the intent does not cover."""
    without_asides = _EXCLUSION_ASIDE.sub("", description)
    return _EXCLUSION_TAIL.sub("", without_asides).strip()


def description_fragments(description: str) -> list[str]:
    """The sub-cases a description lists, without its opener ("Cliente quer ...") and
    without what it excludes (``covered_part``)."""
    body = _OPENER.sub("", covered_part(description.strip()), count=1)
    parts = (p.strip(" .!?-") for p in _SPLIT.split(body))
    return [p for p in parts if len(p) >= MIN_FRAGMENT_CHARS]
