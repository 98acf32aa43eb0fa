from __future__ import annotations

import shutil
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from conversation.runtime.script_catalog import SCRIPTS_DIR, ScriptCatalog, ScriptCatalogError
from conversation.runtime.state import Channel

SHIPPED = {
    "juros_e_multas",
    "encerramento_resolvido",
    "encerramento_nao_resolvido",
    "devolucao_antes_cancelamento",
    "recusa_ressarcimento_dobro",
    "item_not_found",
}


def write(tmp: Path, name: str, body: str) -> None:
    (tmp / f"{name}.yaml").write_text(body, encoding="utf-8")


SIMPLE = """id: saudacao
trigger: saudacao
text: Olá, {nome}!
parameters:
  - name: nome
    format: raw
"""
VALUE = """id: valor
trigger: valor
text: O valor é {valor}, vence em {vencimento}.
parameters:
  - name: valor
    format: currency_brl
  - name: vencimento
    format: date_long
channel:
  voice: same
  text: same
"""
IDS = """id: ids
trigger: ids
text: Protocolo {protocolo}, linha {linha}.
parameters:
  - name: protocolo
    format: protocol_digits
  - name: linha
    format: msisdn_digits
"""


def test_shipped_directory_loads_the_six_scripts() -> None:
    catalog = ScriptCatalog(SCRIPTS_DIR)
    assert {s.id for s in catalog.scripts} == SHIPPED
    assert catalog.select_by_trigger("ressarcimento_em_dobro") is not None
    assert catalog.select_by_trigger("nao_existe") is None
    assert len(catalog.version) == 12


def test_shipped_juros_script_renders_in_both_channels() -> None:
    catalog = ScriptCatalog()
    params = {"valor": Decimal("12.34"), "vencimento": date(2025, 3, 10)}
    text = catalog.render("juros_e_multas", params, Channel.TEXT).text
    assert text.startswith("Os juros e a multa de R$ 12,34 aparecem")
    assert "10 de março de 2025" in text and "\n" not in text
    voice = catalog.render("juros_e_multas", params, Channel.VOICE).text
    assert "doze reais e trinta e quatro centavos" in voice
    assert "dez de março de dois mil e vinte e cinco" in voice


def test_valid_directory_loads(tmp_path: Path) -> None:
    write(tmp_path, "a", SIMPLE)
    write(tmp_path, "b", VALUE)
    (tmp_path / "README.md").write_text("ignored", encoding="utf-8")
    catalog = ScriptCatalog(tmp_path)
    assert {s.id for s in catalog.scripts} == {"saudacao", "valor"}


def test_malformed_yaml_raises_a_clear_error(tmp_path: Path) -> None:
    write(tmp_path, "broken", "id: x\ntext: [unclosed\n")
    with pytest.raises(ScriptCatalogError, match=r"broken\.yaml: malformed YAML"):
        ScriptCatalog(tmp_path)


def test_duplicate_trigger_raises(tmp_path: Path) -> None:
    write(tmp_path, "a", SIMPLE)
    write(tmp_path, "b", SIMPLE.replace("id: saudacao", "id: outra"))
    with pytest.raises(ScriptCatalogError, match="duplicate trigger 'saudacao'"):
        ScriptCatalog(tmp_path)


def test_duplicate_id_raises(tmp_path: Path) -> None:
    write(tmp_path, "a", SIMPLE)
    write(tmp_path, "b", SIMPLE.replace("trigger: saudacao", "trigger: outra"))
    with pytest.raises(ScriptCatalogError, match="duplicate script id"):
        ScriptCatalog(tmp_path)


def test_placeholder_missing_from_parameters_raises(tmp_path: Path) -> None:
    write(tmp_path, "a", SIMPLE.replace("Olá, {nome}!", "Olá, {nome}! Protocolo {protocolo}."))
    with pytest.raises(ScriptCatalogError, match=r"\['protocolo'\] missing from 'parameters'"):
        ScriptCatalog(tmp_path)


def test_placeholder_in_a_channel_alternative_is_checked_too(tmp_path: Path) -> None:
    write(tmp_path, "a", SIMPLE + "channel:\n  voice: Oi {apelido}\n")
    with pytest.raises(ScriptCatalogError, match="apelido"):
        ScriptCatalog(tmp_path)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("- a\n- b\n", "mapping at the top level"),
        (SIMPLE + "extra: 1\n", "unknown keys"),
        (SIMPLE.replace("text: Olá, {nome}!", "text: ''"), "'text' must be a non-empty string"),
        (SIMPLE.replace("format: raw", "format: reais"), "unknown format"),
        (SIMPLE.replace("  - name: nome\n    format: raw\n", "  - 3\n"), "needs a 'name'"),
        (
            SIMPLE.replace("parameters:\n  - name: nome\n    format: raw\n", "parameters: x\n"),
            "must be a list",
        ),
        (SIMPLE + "channel:\n  fax: same\n", "unknown channel"),
        (SIMPLE + "channel: [1]\n", "'channel' must be a mapping"),
        (SIMPLE + "channel:\n  voice: ''\n", "needs 'same' or a text"),
        (SIMPLE.replace("{nome}", "{0}"), "invalid placeholder"),
        (SIMPLE.replace("{nome}", "{nome"), "malformed placeholder"),
    ],
)
def test_invalid_scripts_raise_clear_errors(tmp_path: Path, body: str, message: str) -> None:
    write(tmp_path, "bad", body)
    with pytest.raises(ScriptCatalogError, match=message):
        ScriptCatalog(tmp_path)


def test_render_with_simple_parameters(tmp_path: Path) -> None:
    write(tmp_path, "a", SIMPLE)
    rendered = ScriptCatalog(tmp_path).render("saudacao", {"nome": "Maria", "extra": 1})
    assert rendered.text == "Olá, Maria!" and str(rendered) == "Olá, Maria!"


def test_render_currency_in_both_channels(tmp_path: Path) -> None:
    write(tmp_path, "v", VALUE)
    catalog = ScriptCatalog(tmp_path)
    params = {"valor": "R$ 1.234,50", "vencimento": "2025-03-01"}
    assert catalog.render("valor", params, Channel.TEXT).text == (
        "O valor é R$ 1.234,50, vence em 1 de março de 2025."
    )
    assert catalog.render("valor", params, Channel.VOICE).text == (
        "O valor é mil duzentos e trinta e quatro reais e cinquenta centavos, "
        "vence em primeiro de março de dois mil e vinte e cinco."
    )


def test_render_protocol_and_msisdn_digits_per_channel(tmp_path: Path) -> None:
    write(tmp_path, "ids", IDS)
    catalog = ScriptCatalog(tmp_path)
    params = {"protocolo": "2025-0042", "linha": "+55 11 98765-4321"}
    assert catalog.render("ids", params, Channel.TEXT).text == (
        "Protocolo 20250042, linha (11) 98765-4321."
    )
    assert catalog.render("ids", params, Channel.VOICE).text == (
        "Protocolo dois zero dois cinco zero zero quatro dois, linha um um nove oito sete "
        "seis cinco quatro três dois um."
    )


def test_render_uses_the_channel_alternative_when_not_same() -> None:
    catalog = ScriptCatalog()
    voice = catalog.render("encerramento_resolvido", channel=Channel.VOICE).text
    text = catalog.render("encerramento_resolvido", channel=Channel.TEXT).text
    assert "Obrigada por ligar" in voice and "Obrigada por falar com a gente" in text


def test_render_unknown_script_or_missing_parameter_raises(tmp_path: Path) -> None:
    write(tmp_path, "a", SIMPLE)
    catalog = ScriptCatalog(tmp_path)
    with pytest.raises(KeyError, match="unknown script id"):
        catalog.render("nao_existe")
    with pytest.raises(KeyError, match="needs parameter 'nome'"):
        catalog.render("saudacao", {})


def test_rendered_message_carries_script_id_and_catalog_version(tmp_path: Path) -> None:
    write(tmp_path, "a", SIMPLE)
    catalog = ScriptCatalog(tmp_path)
    rendered = catalog.render("saudacao", {"nome": "Ana"})
    assert rendered.script_id == "saudacao" and rendered.catalog_version == catalog.version
    assert rendered.ref is not None and rendered.ref.script_id == "saudacao"


def test_version_is_stable_and_changes_with_any_script_text(tmp_path: Path) -> None:
    copy_dir = tmp_path / "scripts"
    shutil.copytree(SCRIPTS_DIR, copy_dir)
    original = ScriptCatalog(SCRIPTS_DIR).version
    assert ScriptCatalog(copy_dir).version == original
    target = copy_dir / "encerramento_resolvido.yaml"
    target.write_text(target.read_text(encoding="utf-8").replace("Até logo!", "Tchau!"), "utf-8")
    assert ScriptCatalog(copy_dir).version != original
