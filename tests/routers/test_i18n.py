"""The routers app's copy goes through Django's i18n (DESIGN §7: pt-BR through gettext):
the quality run's explanation, the pasted lines' errors, the services' refusals and the
API's field errors. Each test gives a msgid a translation in the active catalog and
checks that the user reads the translation, interpolated after translating; a static
walk keeps bare literals out of the places users read."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.utils import translation
from django.utils.translation import trans_real

from routers.quality import PhraseVerdict, Thresholds, parse_labelled_lines, suggest_thresholds
from tests.routers.factories import SUPORTE, VENDAS, make_router

ROUTERS = Path(__file__).resolve().parents[2] / "routers"
BASE = "/api/v1/ai/routers"


@pytest.fixture
def catalog() -> Iterator[Any]:
    """``translate(msgid, msgstr, plural=False)``: the pt-BR catalog answers ``msgstr``
    for ``msgid`` during the test."""
    with translation.override("pt-br"):
        entries = trans_real.translation("pt-br")._catalog._catalogs[0]
        saved: dict[Any, Any] = {}

        def translate(msgid: str, msgstr: str, *, plural: bool = False) -> None:
            for key in [(msgid, i) for i in range(3)] if plural else [msgid]:
                saved.setdefault(key, entries.get(key))
                entries[key] = msgstr

        yield translate
        for key, value in saved.items():
            if value is None:
                entries.pop(key, None)
            else:
                entries[key] = value


def test_the_quality_explanation_is_written_through_the_catalog(catalog):
    catalog("Ainda não há frases rotuladas: adicione algumas para medir o roteador.", "VAZIO")
    catalog(
        "Com só %(n)s frase, trate a sugestão como um indício: rotule mais frases "
        "reais para ter uma medida firme.",
        "POUCAS: %(n)s",
        plural=True,
    )
    current = Thresholds(0.6, 0.9)
    assert suggest_thresholds([], current, has_llm=False).explanation == "VAZIO"
    verdicts = [PhraseVerdict(f"frase {i}", "vendas", "vendas", 0.95) for i in range(3)]
    assert suggest_thresholds(verdicts, current, has_llm=False).explanation.endswith("POUCAS: 3")


def test_pasted_line_errors_are_written_through_the_catalog(catalog):
    catalog("Linha %(n)s: use o formato frase;intenção.", "LINHA %(n)s: FORMATO")
    catalog(
        "Linha %(n)s: a intenção «%(intent)s» não existe neste roteador.",
        "LINHA %(n)s: SEM %(intent)s",
    )
    parsed = parse_labelled_lines("sem separador\noi;financeiro", ["vendas"])
    assert parsed.errors == ("LINHA 1: FORMATO", "LINHA 2: SEM financeiro")


def test_service_refusals_reach_the_api_through_the_catalog(world, catalog):
    catalog("Este número já tem um roteador ativo.", "CANAL OCUPADO")
    catalog("A intenção «%(intent)s» não existe neste roteador.", "SEM INTENÇÃO %(intent)s")
    catalog("Adicione frases rotuladas antes de medir o roteador.", "SEM FRASES")
    router = make_router(world.channel_a, [(world.agent_a, SUPORTE)])
    client = world.client_for(world.admin)

    def call(method: str, url: str, body: dict[str, Any]) -> dict[str, Any]:
        response = getattr(client, method)(
            url, data=json.dumps(body), content_type="application/json"
        )
        return response.json()["error"]

    created = call("post", BASE, {"name": "Outro", "channel_id": str(world.channel_a.pk)})
    phrases = {"phrases": [{"text": "oi", "intent_name": "financeiro"}]}
    # A field error of the phrase, with the body's others (tests/api/test_review_r31_*).
    relabelled = call("put", f"{BASE}/{router.pk}/labelled-phrases", phrases)["fields"]
    measured = call("post", f"{BASE}/{router.pk}/quality-runs", {})

    assert created["message"] == "CANAL OCUPADO"
    assert relabelled["phrases"]["0"]["intent_name"] == ["SEM INTENÇÃO financeiro"]
    assert measured["message"] == "SEM FRASES"


def test_api_field_errors_are_written_through_the_catalog(world, catalog):
    catalog("Campo desconhecido.", "CAMPO ESTRANHO")
    catalog("Canal não encontrado.", "CANAL SUMIU")
    body = {"name": "X", "channel_id": str(world.channel_b.pk), "nome": "X"}
    response = world.client_for(world.admin).post(
        BASE, data=json.dumps(body), content_type="application/json"
    )
    assert response.json()["error"]["fields"] == {
        "nome": ["CAMPO ESTRANHO"],
        "channel_id": ["CANAL SUMIU"],
    }


def test_the_page_shows_a_refused_accept_through_the_catalog(world, catalog):
    from routers import services

    catalog("A intenção «%(intent)s» não existe neste roteador.", "SEM INTENÇÃO %(intent)s")
    router = make_router(world.channel_a, [(world.agent_a, VENDAS)])
    suggestion = services.suggestion_record(router=router, text="orçamento?", intent_name="x")
    assert suggestion is not None
    page = world.client_for(world.admin).post(
        f"/roteadores/{router.pk}/sugestoes/{suggestion.pk}/aceitar/", HTTP_HX_REQUEST="true"
    )
    assert "SEM INTENÇÃO x" in page.content.decode()


# --- no bare copy where users read it -----------------------------------------------------

# Calls whose text a user reads: errors the pages and the API show, flash messages.
_SHOWN = {
    "RouterError",
    "RouterInvalid",
    "RouterAlreadyExists",
    "RouterChanged",
    "SuggestionDecided",
    "ValidationError",
}
_MESSAGES = {"error", "success", "warning", "info"}


def _bare(node: ast.expr | None) -> bool:
    """A literal text (or an f-string, or a literal %-formatted) instead of gettext's."""
    if isinstance(node, ast.BinOp):
        return _bare(node.left)
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def _shown_text(call: ast.Call, *, builds_copy: bool) -> ast.expr | None:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in _SHOWN and call.args:
        return call.args[0]
    if name in _MESSAGES and getattr(func, "value", None) is not None:
        owner = func.value  # type: ignore[union-attr]
        if isinstance(owner, ast.Name) and owner.id == "messages" and len(call.args) > 1:
            return call.args[1]
    if builds_copy and name == "append" and call.args:  # explanations built in parts
        return call.args[0]
    return None


def test_no_user_facing_text_in_routers_skips_gettext():
    offenders = []
    for path in sorted(ROUTERS.rglob("*.py")):
        relative = path.relative_to(ROUTERS.parent)
        if relative.parts[1] in {"classification", "migrations"}:
            continue  # the pure classifier has no copy; migrations are history
        builds_copy = path.name == "quality.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and _bare(_shown_text(node, builds_copy=builds_copy)):
                offenders.append(f"{relative}:{node.lineno}")
    assert offenders == []
