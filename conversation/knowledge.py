"""Knowledge base search: PostgreSQL full-text search in Portuguese, a simple
token-overlap fallback on SQLite (the embedded default)."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db import connection
from django.db.models import Func, TextField, Value
from django.db.models.functions import Lower

from conversation.models import KnowledgeDocument
from conversation.text import fold, normalize

MAX_RESULTS = 3
PASSAGE_CHARS = 600
_STOPWORDS = frozenset(
    [
        "a",
        "o",
        "as",
        "os",
        "e",
        "de",
        "da",
        "do",
        "das",
        "dos",
        "em",
        "no",
        "na",
        "nos",
        "nas",
        "um",
        "uma",
        "uns",
        "umas",
        "para",
        "pra",
        "por",
        "com",
        "que",
        "qual",
        "quais",
        "quando",
        "como",
        "onde",
        "eu",
        "voce",
        "vc",
        "meu",
        "minha",
        "seu",
        "sua",
        "se",
        "me",
        "te",
        "ao",
        "aos",
    ]
)


@dataclass(frozen=True)
class KnowledgeHit:
    document_id: uuid.UUID
    title: str
    passage: str
    score: float


def search_knowledge(
    organization_id: uuid.UUID, query: str, *, limit: int = MAX_RESULTS
) -> list[KnowledgeHit]:
    query = query.strip()
    if not query:
        return []
    docs = KnowledgeDocument.objects.filter(organization_id=organization_id, is_active=True)
    if connection.vendor == "postgresql":
        vector = (
            SearchVector("title", weight="A", config="portuguese")
            + SearchVector(_folded("title"), weight="A", config="portuguese")
            + SearchVector("body", weight="B", config="portuguese")
            + SearchVector(_folded("body"), weight="B", config="portuguese")
        )
        # Each term as written and folded: the portuguese dictionary stems "cartão" and
        # "cartao" apart, and customers often type without accents. Deduplicated, so a
        # long, repetitive message stays a short query.
        words = [t for t in re.findall(r"\w+", query.casefold()) if normalize(t) not in _STOPWORDS]
        terms = list(dict.fromkeys(form for t in words for form in (t, fold(t))))
        if not terms:
            return []
        # OR of the terms: a customer's question rarely shares every word with the answer.
        search = SearchQuery(" | ".join(terms), config="portuguese", search_type="raw")
        rows = (
            docs.annotate(rank=SearchRank(vector, search))
            .filter(rank__gt=0.0)
            .order_by("-rank")[:limit]
        )
        return [KnowledgeHit(d.pk, d.title, passage(d.body, query), float(d.rank)) for d in rows]
    return _token_overlap(list(docs.only("id", "title", "body")), query, limit)


def _folded(field: str) -> Func:
    # PostgreSQL's built-in translate(): no unaccent extension to install. The letters of
    # pt-BR text; ``fold`` removes the same marks from the query's side.
    return Func(
        Lower(field),
        Value("áàâãäéèêëíìîïóòôõöúùûüçñ"),
        Value("aaaaaeeeeiiiiooooouuuucn"),
        function="translate",
        output_field=TextField(),
    )


def _wanted(query: str) -> set[str]:
    return {t for t in normalize(query).split() if t not in _STOPWORDS and len(t) > 2}


def _score(text: str, wanted: set[str]) -> float:
    words = set(normalize(text).split())
    stems = {w[:5] for w in words}
    return sum(1.0 if t in words else 0.6 if t[:5] in stems else 0.0 for t in wanted)


def _token_overlap(docs: list[KnowledgeDocument], query: str, limit: int) -> list[KnowledgeHit]:
    wanted = _wanted(query)
    if not wanted:
        return []
    scored = []
    for doc in docs:
        score = _score(f"{doc.title} {doc.title} {doc.body}", wanted)
        if score > 0:
            scored.append((score / len(wanted), doc))
    scored.sort(key=lambda pair: -pair[0])
    return [KnowledgeHit(d.pk, d.title, passage(d.body, query), s) for s, d in scored[:limit]]


def passage(body: str, query: str) -> str:
    """What of ``body`` the model reads (at most ``PASSAGE_CHARS``): all of it when it fits;
    else from the line that best matches ``query`` — with the short line above it (a
    heading, a FAQ's question) — or, in one long line, from just before the first match;
    the body's start when no line matches. Cut at a word."""
    if len(body) <= PASSAGE_CHARS:
        return body
    wanted, best, best_score = _wanted(query), None, 0.0
    for line in re.finditer(r"[^\n]+", body):
        score = _score(line.group(), wanted) if wanted else 0.0
        if score > best_score:
            best, best_score = line, score
    if best is None:
        return _cut(body)
    start = best.start()
    if best.end() - start > PASSAGE_CHARS:
        words = re.finditer(r"\w+", best.group())
        first = next((w.start() for w in words if _score(w.group(), wanted)), 0)
        start += max(0, first - PASSAGE_CHARS // 4)
        space = re.compile(r"\s").search(body, start, best.start() + first)
        start = space.start() if space else start
    elif start > 0:
        above = body.rfind("\n", 0, start - 1) + 1
        if body[above:start].strip() and start - above <= PASSAGE_CHARS // 4:
            start = above
    return _cut(body[start:].lstrip())


def _cut(text: str) -> str:
    if len(text) <= PASSAGE_CHARS:
        return text.rstrip()
    cut = text[:PASSAGE_CHARS]
    if not text[PASSAGE_CHARS].isspace() and re.search(r"\s", cut):
        cut = re.split(r"\s(?=\S*$)", cut)[0]
    return cut.rstrip()


def format_hits(hits: list[KnowledgeHit]) -> str:
    """The tool result handed to the model: passages separated by blank lines."""
    if not hits:
        return "Nenhum resultado encontrado na base de conhecimento."
    return "\n\n".join(f"[{h.title}]\n{h.passage}" for h in hits)
