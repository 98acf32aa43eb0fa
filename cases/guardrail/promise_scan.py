"""The rules stage of the promise detector: a byte-token scan of the folded text.

Its own module so that the learned stage (``promise_learned``), which needs the rules'
verdict on its training corpus, and the composition (``promise``) both import it without
importing each other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .lexicon import HABIT_WORDS, alt
from .normalize import fold
from .promise_relays import INSTRUCTION
from .promise_rule_types import Rule
from .promise_rules import RULES_BY_ANCHOR
from .promise_rules_dispatch import VISIT_AT_A_CLOCK
from .promise_rules_named import NAMED_ON_THE_WAY
from .promise_rules_staff import FIELD_RULES


@dataclass(frozen=True, slots=True)
class PromiseMatch:
    """Where a promise was found: rule id plus [start, end) offsets into the original body.

    For the learned stage the id is ``LEARNED_RULE_ID`` and the span is the sentence that
    scored highest.
    """

    rule_id: str
    start: int
    end: int


# Messages are short; a huge body (a pasted document) is scanned only up to this many
# characters so one pathological send cannot stall the turn.
MAX_SCANNED_CHARS = 20_000

_SENTENCE_END = re.compile(r"[.!?\n;]")
# Context checks look back at most this far: a "sentence" without punctuation is cut here.
_MAX_SENTENCE = 300
_WORD_BYTES = b"abcdefghijklmnopqrstuvwxyz0123456789"
# Bytes table: word characters stay, everything else becomes a space.
_SPACE_NON_WORD = bytes(c if c in _WORD_BYTES else 0x20 for c in range(256))
# The detector works on byte tokens (see ``detect_human_promise``): anchor word ->
# (rule, pattern, words the rule needs somewhere in the message), in rule order.
_DISPATCH: dict[bytes, tuple[tuple[Rule, re.Pattern[str], frozenset[bytes]], ...]] = {
    anchor.encode("ascii"): tuple(
        (rule, pattern, frozenset(word.encode("ascii") for word in rule.needs))
        for rule, pattern in entries
    )
    for anchor, entries in RULES_BY_ANCHOR.items()
}
_ANCHORS_BYTES = frozenset(_DISPATCH)

_NEGATION_WORDS = frozenset(
    {b"nao", b"nunca", b"jamais", b"nem", b"nenhum", b"nenhuma", b"ninguem", b"sem"}
)
_OFFER_WORDS = frozenset({b"se", b"caso"})

# Negation right before the hit: "nao vou encaminhar", "nenhum atendente vai", "nunca te retorno".
_NEGATED_BEFORE = re.compile(
    r"\b(?:nao|nunca|jamais|nem|nenhum|nenhuma|ninguem|sem)\s+"
    r"(?:(?:precisa|precisamos|e\s+necessario|ha\s+necessidade)\s+(?:de\s+)?)?"
    r"(?:(?:eu|a\s+gente|te|lhe|se|me|mais|ainda|ja|vou|vamos|iremos|irei|da|do|de|das|dos"
    # "não tem chamado aberto", "não consta protocolo aberto" (round 22)
    r"|nossa|nosso|nossas|nossos|tem|ha|consta|existe|tinha|havia)\s+){0,2}\Z"
)

# A hedge earlier in the sentence: "nao posso prometer que alguem vai ligar".
_HEDGE_BEFORE = re.compile(
    r"\b(?:nao|nem)\s+(?:posso|consigo|podemos|conseguimos|tenho\s+como|temos\s+como"
    r"|da\s+(?:pra|para)|e\s+possivel|sei\s+se)\s+(?:te\s+|lhe\s+)?"
    r"(?:prometer|garantir|afirmar|assegurar|dizer|confirmar)\b"
    r"|\bsem\s+garantia\b|\bnao\s+(?:ha|existe)\s+garantia\b"
)

# The customer decides: "se preferir, ...", "posso transferir, se preferir".
_OFFER = re.compile(
    r"\b(?:se\s+(?:voce\s+|vc\s+|o\s+senhor\s+|a\s+senhora\s+)?(?:quiser|preferir|desejar"
    r"|achar\s+melhor)|caso\s+(?:voce\s+|vc\s+)?(?:queira|prefira|deseje))\b"
)

# Question words that make an interrogative sentence an offer: "quer que eu...?", "posso...?".
_QUESTION_LEAD = re.compile(
    r"\b(?:quer|queira|deseja|gostaria|prefere|posso|podemos|devo|topa|tudo\s+bem\s+se"
    r"|o\s+que\s+acha\s+de|acha\s+melhor|seria\s+bom|pode\s+ser\s+que\s+eu)\b"
)

# "Falo com o responsavel pela empresa?": asking who the customer is, not involving anyone.
_IDENTITY_QUESTION = re.compile(r"(?:estou|to|tou|estamos)\s+falando\s+com\b|falo\s+com\b")

# "Ligue para a central. Eles vão te ajudar": a pronoun that opens the sentence after an
# instruction is the people the customer was sent to.
_PRONOUN_OPENS = re.compile(r"\s*(?P<pronoun>eles|elas|ele|ela)\b")
# For the learned stage's verdict (``sent_to_them``): "they", or the person just named ("peça
# para falar com a Dra. Patrícia, ela vai te orientar"). A rule hit is taken back only by a
# pronoun opening its sentence (``_PRONOUN_OPENS``).
_THEY = re.compile(r"\b(?:eles|elas|ele|ela)\b")

# The customer is told to report back: "quando tiver a resposta do banco, me avisa".
_CUSTOMER_REPORTS = re.compile(
    r"\bme\s+(?:avisa|avise|fala|fale|diga|diz|conta|conte|manda|mande|envia|envie|chama"
    r"|chame|retorna|retorne)\b"
)

# The customer writes first, then the AI acts: "se continuar, me avisa que eu abro um chamado",
# "é só me chamar aqui e eu peço para o técnico". The AI's action comes in a later turn, after
# the customer's message, and that reply is gated then; this one commits nobody.
_CUSTOMER_FIRST_BEFORE = re.compile(
    r"\bme\s+(?:avisa|avise|avisar|fala|fale|falar|chama|chame|chamar|manda|mande|mandar"
    r"|diz|diga|dizer|escreve|escreva|escrever)\s+(?:aqui\s+|por\s+aqui\s+|de\s+novo\s+)?,?\s*"
    r"(?:que|e)\s+(?:eu\s+|a\s+gente\s+|nos\s+)?(?:ja\s+|mesmo\s+)?\Z"
)
_CUSTOMER_FIRST_REACH = 80

# The customer's own words, reported back: "pelo que voce falou, a vendedora ficou de...".
_REPORTED_BEFORE = re.compile(
    r"\b(?:pelo\s+que|segundo\s+o\s+que)\s+(?:voce|vc)\s+(?:me\s+)?(?:falou|disse|contou"
    r"|comentou|mencionou|explicou)\b|\bsegundo\s+(?:voce|vc)\b"
    r"|\b(?:voce|vc)\s+(?:me\s+)?(?:falou|disse|contou|comentou|mencionou)\s+que\b"
)
_YOU_WORDS = frozenset({b"voce", b"vc"})

# An immediate return is a stall inside the turn, not a deferred answer.
_IMMEDIATE_BEFORE = re.compile(
    r"\b(?:ja|jaja)\s+(?:ja\s+)?(?:te\s+|lhe\s+)?(?:retorn|volt|dou|damos|falo|digo)"
)
_IMMEDIATE_AFTER = re.compile(
    r"\s*(?:em\s+(?:instantes|um\s+instante|(?:alguns|poucos|\d+)\s+(?:minutos|segundos)"
    r"|seguida)|num\s+instante|rapidinho|ja\s+ja|jaja|agora)\b"
)

# Rules whose hit is a third party acting; instructions neutralise only these.
# The dispatch rules (``promise_rules_dispatch``): a habit anywhere in the sentence, before
# the subject too, makes them a fact about how the business works.
_DISPATCH_RULES = frozenset(rule.rule_id for rule in FIELD_RULES)
_THIRD_PARTY_RULES = frozenset(
    {
        "human_will_act",
        "human_is_acting",
        "human_was_alerted",
        "passive_will_be_handled",
        "customer_will_be_contacted",
        NAMED_ON_THE_WAY,
        *_DISPATCH_RULES,
    }
)
# "When X happens": the customer reporting back ("me avisa") means nobody else acts.
_WHEN_RULES = frozenset({"when_news_arrives", "when_they_act"})
# Round 6, the English rules: a conditional, an offer, a negation, a habit or a question
# anywhere in the sentence takes them back (the learned stage still reads the message).
_EN_RULES = frozenset(
    {
        *("en_human_will_act", "en_escalated", "en_forward_to_human", "en_ask_human"),
        *("en_open_ticket", "en_customer_will_hear", "en_pending_with_human"),
        *("en_human_was_told", "en_human_is_acting"),
    }
)
_EN_TAKEBACK = re.compile(
    r"\b(?:if|unless|in\s+case|would\s+you|do\s+you\s+want|want\s+me\s+to|should\s+i"
    r"|shall\s+i|can\s+i|could|not|never|nobody|no\s+one|usually|always|normally|typically"
    r"|often|every)\b|n['\u2019]t\b"
)
_HABIT_WORD = re.compile(rf"(?<![a-z0-9]){alt(HABIT_WORDS)}(?![a-z0-9])")
_HABIT_TOKENS = frozenset(word.split()[0].encode() for word in HABIT_WORDS)
# Rules that are a bare "I'll get back to you"; an immediate "ja" neutralises only these.
_RETURN_RULES = frozenset({"deferred_return"})


def detect_rule_promise(body: str) -> PromiseMatch | None:
    """The rules stage: the first promise of back-office human action in ``body``, or None.

    Deterministic, total (never raises for any ``str``) and case/accent-insensitive.
    """
    if not body:
        return None
    return detect_rules_folded(fold(body[:MAX_SCANNED_CHARS]))


def detect_rules_folded(text: str) -> PromiseMatch | None:
    # Tokenise on bytes: encoding to ASCII (one "?" per other character, so offsets are kept)
    # and a 256-entry translate table are C loops, much cheaper than a regex split.
    padded = b" %b " % text.encode("ascii", "replace").translate(_SPACE_NON_WORD)
    tokens = set(padded.split())
    present = _ANCHORS_BYTES.intersection(tokens)
    if not present:
        return None
    for position, word in _anchor_positions(padded, present):
        for rule, pattern, needs in _DISPATCH[word]:
            if needs and needs.isdisjoint(tokens):
                continue
            match = pattern.match(text, position)
            if match is None:
                continue
            rule_id = match.lastgroup or rule.rule_id
            if not _suppressed(text, tokens, rule_id, position, match.end()):
                return PromiseMatch(rule_id=rule_id, start=position, end=match.end())
    return None


def _anchor_positions(padded: bytes, words: frozenset[bytes]) -> list[tuple[int, bytes]]:
    """(offset in the text, word) of every whole-token occurrence of ``words``, in order.

    ``padded`` is the text's token view with one space added on each side, so a token
    occurrence is `` word `` and its offset in ``padded`` + 1 - 1 is its offset in the text.
    """
    found: list[tuple[int, bytes]] = []
    for word in words:
        needle = b" " + word + b" "
        index = padded.find(needle)
        while index != -1:
            found.append((index, word))
            index = padded.find(needle, index + 1)
    found.sort()
    return found


def _suppressed(text: str, tokens: set[bytes], rule_id: str, start: int, end: int) -> bool:
    """Whether the context of a hit takes the promise back (see the module docstring).

    Each check first asks whether its key words occur in the message at all (``tokens``), so
    a plain promise costs a few set look-ups rather than several regex scans.
    """
    sentence_end = _sentence_end(text, end)
    question = sentence_end < len(text) and text[sentence_end] == "?"
    third_party = rule_id in _THIRD_PARTY_RULES
    negation = not tokens.isdisjoint(_NEGATION_WORDS)
    offer = not tokens.isdisjoint(_OFFER_WORDS)
    if rule_id in _EN_RULES:
        return question or bool(
            _EN_TAKEBACK.search(text, _sentence_start(text, start), sentence_end)
        )
    if rule_id in _WHEN_RULES and _CUSTOMER_REPORTS.search(text, start, sentence_end):
        return True
    # The pattern holds only words, spaces and a comma up to the hit: it cannot reach past
    # the sentence's start, so no sentence scan is needed.
    if b"me" in tokens and _CUSTOMER_FIRST_BEFORE.search(
        text, max(0, start - _CUSTOMER_FIRST_REACH), start
    ):
        return True
    if not tokens.isdisjoint(_YOU_WORDS) and _REPORTED_BEFORE.search(
        text, _sentence_start(text, start), start
    ):
        return True
    if (
        rule_id in _DISPATCH_RULES
        and not tokens.isdisjoint(_HABIT_TOKENS)
        and _HABIT_WORD.search(text, _sentence_start(text, start), sentence_end)
    ):
        return True  # "normalmente a equipe responde...": how the business works
    if not (negation or offer or question or third_party or rule_id in _RETURN_RULES):
        return False  # the common case: nothing in the message can take the promise back
    sentence_start = _sentence_start(text, start)
    if negation and (
        _NEGATED_BEFORE.search(text, max(sentence_start, start - 48), start)
        or _HEDGE_BEFORE.search(text, sentence_start, start)
    ):
        return True
    if offer and _OFFER.search(text, sentence_start, sentence_end):
        return True
    if question and (
        _QUESTION_LEAD.search(text, sentence_start, start) or _IDENTITY_QUESTION.match(text, start)
    ):
        return True
    if third_party and (
        INSTRUCTION.search(text, sentence_start, start)
        or _sent_to_them(text, sentence_start, start)
    ):
        return True
    return rule_id in _RETURN_RULES and bool(
        _IMMEDIATE_BEFORE.search(text, max(sentence_start, start - 12), end)
        or _IMMEDIATE_AFTER.match(text, end, min(len(text), end + 30))
    )


def sent_to_them(text: str, sentence_start: int, sentence_end: int) -> bool:
    """Whether the sentence in ``text[sentence_start:sentence_end]`` speaks of "eles"/"elas"
    ("ele"/"ela") after an instruction earlier in it or in the sentence before: the people the
    customer was sent to ("ligue para o nosso jurídico, que eles vão te ajudar"; "Ligue para a
    central. Eles vão te ajudar.")."""
    pronoun = _THEY.search(text, sentence_start, sentence_end)
    if pronoun is not None:
        return _told_to_go(text, sentence_start, pronoun.start())
    # The instruction itself, with "eles" opening the next sentence: "o ideal é ligar direto
    # para o plantão; eles atendem até meia-noite".
    opening = _PRONOUN_OPENS.match(text, sentence_end)
    return opening is not None and _told_to_go(text, sentence_start, sentence_end)


def _sent_to_them(text: str, sentence_start: int, start: int) -> bool:
    """Whether the hit's subject is the pronoun opening its sentence and the sentence before
    told the customer to go to someone."""
    opening = _PRONOUN_OPENS.match(text, sentence_start)
    return (
        opening is not None
        and opening.start("pronoun") == start
        and _told_to_go(text, sentence_start, start)
    )


def _told_to_go(text: str, sentence_start: int, upto: int) -> bool:
    """Whether an instruction to the customer stands before ``upto``, in its sentence or in
    the sentence before."""
    mark = _sentence_start(text, sentence_start) - 1  # the end of the sentence before
    before = _sentence_start(text, mark) if mark >= 0 else sentence_start
    return INSTRUCTION.search(text, before, upto) is not None


_CLOCK_HINT = re.compile(r"[0-9]\s*(?:h|:[0-9]|min)")


def visit_at_a_clock_time(marked: str) -> bool:
    """Whether the (folded, names marked) text has someone of the business coming at a clock
    time (``VISIT_AT_A_CLOCK``), outside a sentence that says it is a habit. Not a rule: a
    clock time alone is as often the business's schedule, so ``assess_promise`` sends such a
    message to the model check instead of deciding."""
    if _CLOCK_HINT.search(marked) is None:  # most messages name no time: one cheap scan
        return False
    return any(
        not _HABIT_WORD.search(
            marked, _sentence_start(marked, found.start()), _sentence_end(marked, found.end())
        )
        for found in VISIT_AT_A_CLOCK.finditer(marked)
    )


def _sentence_start(text: str, index: int) -> int:
    floor = max(0, index - _MAX_SENTENCE)
    last_mark = max(
        text.rfind(".", floor, index),
        text.rfind("!", floor, index),
        text.rfind("?", floor, index),
        text.rfind("\n", floor, index),
        text.rfind(";", floor, index),
    )
    return last_mark + 1 if last_mark >= 0 else floor


def _sentence_end(text: str, index: int) -> int:
    found = _SENTENCE_END.search(text, index)
    return found.start() if found else len(text)
