"""The quality loop's pure core: replaying the cascade, scoring with abstention, the
confusion table, the threshold search and the bulk paste parser."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from routers.quality import (
    LOCAL_ACCEPT_GRID,
    MIN_CONFIDENCE_GRID,
    PhraseVerdict,
    Thresholds,
    confusion_table,
    evaluate,
    parse_labelled_lines,
    route,
    suggest_thresholds,
)

CURRENT = Thresholds(0.6, 0.85)


def local(text: str, expected: str, intent: str | None, conf: float) -> PhraseVerdict:
    return PhraseVerdict(text, expected, intent, conf)


def test_route_replays_the_cascade_local_first_then_llm():
    v = PhraseVerdict("x", "vendas", "suporte", 0.7, "vendas", 0.9, "ok")
    assert route(v, Thresholds(0.6, 0.85), has_llm=True) == ("vendas", "llm")
    assert route(v, Thresholds(0.6, 0.65), has_llm=True) == ("suporte", "local")
    assert route(v, Thresholds(0.6, 0.85), has_llm=False) == ("suporte", "local")
    failed = PhraseVerdict("x", "vendas", "vendas", 0.5, None, 0.0, "failed")
    assert route(failed, CURRENT, has_llm=True) == ("none", "llm")  # failure → fallback


def test_abstention_counts_as_right_only_for_phrases_labelled_none():
    verdicts = [
        local("bom dia", "none", "vendas", 0.2),  # abstains: right
        local("quanto custa", "vendas", "vendas", 0.9),  # right
        local("e o preço?", "vendas", "vendas", 0.4),  # abstains: wrong
        local("não abre", "suporte", "vendas", 0.8),  # wrong intent
    ]
    e = evaluate(verdicts, CURRENT, has_llm=False)
    assert (e.correct, e.total) == (2, 4)
    assert e.confusion == {
        "none": {"none": 1},
        "vendas": {"vendas": 1, "none": 1},
        "suporte": {"vendas": 1},
    }
    assert [(x["text"], x["predicted"]) for x in e.errors] == [
        ("e o preço?", "none"),
        ("não abre", "vendas"),
    ]


def test_suggestion_lowers_min_confidence_when_unsure_verdicts_are_right():
    verdicts = [local(f"v{i}", "vendas", "vendas", 0.5) for i in range(10)]
    verdicts += [local("bom dia", "none", "vendas", 0.1)]
    s = suggest_thresholds(verdicts, CURRENT, has_llm=False)
    assert s.changed
    assert s.thresholds.min_confidence <= 0.5 and s.thresholds.min_confidence > 0.1
    assert s.thresholds.local_accept_threshold == CURRENT.local_accept_threshold  # offline
    assert (s.evaluation.correct, s.current.correct) == (11, 1)
    assert "Baixar a confiança mínima" in s.explanation
    assert "Sem chave de API" in s.explanation


def test_suggestion_keeps_the_current_config_when_nothing_beats_it():
    verdicts = [
        local("quanto custa", "vendas", "vendas", 0.95),
        local("oi", "none", None, 0.0),
        local("não abre", "suporte", "vendas", 0.97),  # confidently wrong: no threshold helps
    ]
    s = suggest_thresholds(verdicts, CURRENT, has_llm=False)
    assert not s.changed and s.thresholds == CURRENT
    assert (s.evaluation.correct, s.evaluation.total) == (2, 3)
    assert "Nenhum outro ajuste" in s.explanation


def test_suggestion_says_there_is_nothing_to_adjust_when_every_phrase_is_right():
    verdicts = [local("quanto custa", "vendas", "vendas", 0.95), local("oi", "none", None, 0.0)]
    s = suggest_thresholds(verdicts, CURRENT, has_llm=False)
    assert not s.changed
    assert "acerta todas as 2 frases" in s.explanation


def test_suggestion_with_an_llm_searches_the_local_threshold_too():
    # the local classifier is confidently wrong at 0.8; the LLM is right
    verdicts = [
        PhraseVerdict(f"p{i}", "suporte", "vendas", 0.8, "suporte", 0.9, "ok") for i in range(5)
    ]
    s = suggest_thresholds(verdicts, Thresholds(0.6, 0.75), has_llm=True)
    assert s.thresholds.local_accept_threshold > 0.8
    assert s.evaluation.correct == 5 and s.current.correct == 0
    assert "modelo de linguagem seria consultado em 100%" in s.explanation


@given(
    st.lists(
        st.builds(
            PhraseVerdict,
            text=st.text(max_size=5),
            expected=st.sampled_from(["a", "b", "none"]),
            local_intent=st.sampled_from(["a", "b", None]),
            local_confidence=st.floats(0, 1),
            llm_intent=st.sampled_from(["a", "b", None]),
            llm_confidence=st.floats(0, 1),
            llm_status=st.sampled_from(["ok", "failed", "skipped"]),
        ),
        max_size=15,
    ),
    st.sampled_from(MIN_CONFIDENCE_GRID),
    st.sampled_from(LOCAL_ACCEPT_GRID),
    st.booleans(),
)
def test_suggested_thresholds_are_never_worse_than_the_current_ones(verdicts, m, t, has_llm):
    current = Thresholds(m, t)
    s = suggest_thresholds(verdicts, current, has_llm=has_llm)
    assert s.evaluation.correct >= s.current.correct
    assert s.changed == (s.thresholds != current)
    assert 0 <= s.evaluation.correct <= len(verdicts)
    table = confusion_table(evaluate(verdicts, current, has_llm=has_llm).confusion, ["a", "b"])
    assert sum(c["count"] for row in table["rows"] for c in row["cells"]) == len(verdicts)


def test_confusion_table_lists_intents_then_none_and_marks_the_diagonal():
    table = confusion_table({"vendas": {"vendas": 2, "none": 1}}, ["vendas", "suporte"])
    assert table["labels"] == ["vendas", "suporte", "none"]
    (row,) = table["rows"]
    assert [(c["label"], c["count"], c["hit"]) for c in row["cells"]] == [
        ("vendas", 2, True),
        ("suporte", 0, False),
        ("none", 1, False),
    ]


def test_paste_parser_reads_phrase_semicolon_intent_lines():
    parsed = parse_labelled_lines(
        "quanto custa?;Vendas\n\n# comentário\numa frase; com ponto e vírgula;suporte\n"
        "bom dia;nenhuma\nquanto custa?;suporte\n",
        ["vendas", "suporte"],
    )
    assert parsed.errors == ()
    assert parsed.phrases == (
        ("uma frase; com ponto e vírgula", "suporte"),
        ("bom dia", "none"),
        ("quanto custa?", "suporte"),  # the last label of a repeated phrase wins
    )


def test_paste_parser_reports_bad_lines_in_portuguese():
    parsed = parse_labelled_lines("sem separador\n;vendas\noi;financeiro", ["vendas"])
    assert parsed.phrases == ()
    assert parsed.errors == (
        "Linha 1: use o formato frase;intenção.",
        "Linha 2: use o formato frase;intenção.",
        "Linha 3: a intenção «financeiro» não existe neste roteador.",
    )
